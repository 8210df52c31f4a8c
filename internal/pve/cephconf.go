package pve

import (
	"errors"
	"net/netip"
	"strings"
)

// CephConfig is /etc/pve/ceph.conf parsed: section -> key -> value. Keys
// are normalised as Ceph and PVE read them: runs of blanks become one
// underscore, so "public network" and "public_network" are the same key.
type CephConfig map[string]map[string]string

// Get returns section's key ("" when absent).
func (c CephConfig) Get(section, key string) string { return c[section][key] }

// ParseCephConfig reads ceph.conf the way PVE's parse_ceph_config does for
// the forms PVE writes and people type: `[section]` headers, `key = value`
// lines, comments starting with ';' or '#' (unless escaped with a
// backslash), quoted values and trailing-backslash continuations. Lines
// it cannot read are skipped, as PVE skips them with a warning.
func ParseCephConfig(raw string) CephConfig {
	out := CephConfig{}
	lines := strings.Split(strings.ReplaceAll(raw, "\r\n", "\n"), "\n")
	section := ""
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		for strings.HasSuffix(line, "\\") && !strings.HasSuffix(line, "\\\\") && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, "\\") + strings.TrimLeft(lines[i], " \t")
		}
		line = strings.TrimSpace(stripCephComment(line))
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "[") {
			end := strings.Index(line, "]")
			if end < 2 {
				section = ""
				continue
			}
			section = unescapeCephComment(strings.TrimSpace(line[1:end]))
			if out[section] == nil {
				out[section] = map[string]string{}
			}
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if section == "" || !ok {
			continue
		}
		key = strings.Join(strings.Fields(key), "_")
		value = strings.TrimSpace(value)
		if len(value) >= 2 && (value[0] == '"' || value[0] == '\'') && value[len(value)-1] == value[0] {
			value = value[1 : len(value)-1]
		}
		if key == "" || value == "" {
			continue
		}
		out[section][unescapeCephComment(key)] = unescapeCephComment(value)
	}
	return out
}

// stripCephComment cuts the line at the first ';' or '#' that is neither
// escaped nor inside quotes.
func stripCephComment(line string) string {
	var quote byte
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case ch == '\\':
			i++
		case quote != 0:
			if ch == quote {
				quote = 0
			}
		case ch == '"' || ch == '\'':
			quote = ch
		case ch == ';' || ch == '#':
			return line[:i]
		}
	}
	return line
}

func unescapeCephComment(s string) string {
	return strings.NewReplacer(`\;`, ";", `\#`, "#").Replace(s)
}

// CephMonitorIPs extracts the IP addresses from a monitor address as PVE
// and Ceph print them: "10.0.0.1:6789/0", "[v2:10.0.0.1:3300/0,v1:10.0.0.1:6789/0]",
// "[fd00::1]:6789/0" or a bare IP. Duplicates are dropped, order is kept.
func CephMonitorIPs(addr string) []string {
	var out []string
	seen := map[string]bool{}
	for _, part := range strings.FieldsFunc(addr, func(r rune) bool { return r == ',' || r == ' ' || r == ';' }) {
		p := part
		if strings.HasPrefix(p, "[v") { // an address vector [v2:...,v1:...]
			p = p[1:]
		}
		if len(p) > 3 && p[0] == 'v' && p[1] >= '0' && p[1] <= '9' && p[2] == ':' {
			p = strings.TrimSuffix(p[3:], "]")
		}
		if i := strings.LastIndex(p, "/"); i >= 0 {
			p = p[:i] // nonce
		}
		var ip netip.Addr
		if ap, err := netip.ParseAddrPort(p); err == nil {
			ip = ap.Addr()
		} else if a, err := netip.ParseAddr(strings.Trim(p, "[]")); err == nil {
			ip = a
		} else {
			continue
		}
		if s := ip.String(); !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// IsCephNotInitialized reports PVE's answer for a node without
// /etc/pve/ceph.conf ("pveceph configuration not initialized - ...").
func IsCephNotInitialized(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && strings.Contains(ae.Message, "pveceph configuration not initialized")
}
