package ceph

import (
	"fmt"
	"strings"
)

// /etc/pve/ceph.conf, read the way PVE reads it (PVE::CephConfig::
// parse_ceph_config in pve-storage, after Ceph's own grammar) and edited
// line by line, so that every section, key, comment and blank line the
// resource does not manage stays as it is.

// confLine is one logical line of ceph.conf: the physical lines it spans
// (a trailing backslash continues a line), and what it is.
type confLine struct {
	text    string // physical lines joined with "\n"
	logical string // continuation markers removed
	section string // for a header: the section it opens
	key     string // for a key line: the key, normalized
	value   string
	header  bool
}

type confFile struct {
	lines []*confLine
	// trailingNewline: the file ended with a newline.
	trailingNewline bool
}

// normalizeConfKey is how Ceph matches keys: spaces and dashes are
// underscores, runs of blanks one.
func normalizeConfKey(k string) string {
	k = strings.Join(strings.Fields(k), "_")
	return strings.ReplaceAll(k, "-", "_")
}

func parseConfFile(raw string) *confFile {
	f := &confFile{trailingNewline: strings.HasSuffix(raw, "\n")}
	phys := strings.Split(strings.TrimSuffix(raw, "\n"), "\n")
	if raw == "" {
		phys = nil
	}
	for i := 0; i < len(phys); i++ {
		text, logical := phys[i], phys[i]
		for strings.HasSuffix(logical, `\`) && !strings.HasSuffix(logical, `\\`) && i+1 < len(phys) {
			i++
			text += "\n" + phys[i]
			logical = logical[:len(logical)-1] + phys[i]
		}
		l := &confLine{text: text, logical: logical}
		trimmed := strings.TrimLeft(logical, " \t")
		switch {
		case trimmed == "" || trimmed[0] == '#' || trimmed[0] == ';':
		case trimmed[0] == '[':
			if end := strings.IndexByte(trimmed, ']'); end > 1 {
				rest := strings.TrimLeft(trimmed[end+1:], " \t")
				if rest == "" || rest[0] == '#' || rest[0] == ';' {
					l.header, l.section = true, unescapeConf(trimmed[1:end])
				}
			}
		default:
			if k, v, ok := parseConfKV(trimmed); ok {
				l.key, l.value = k, v
			}
		}
		f.lines = append(f.lines, l)
	}
	return f
}

// parseConfKV splits a `key = value` line as PVE does: comments end an
// unquoted value, quoted values keep their blanks, \# and \; are literal.
func parseConfKV(line string) (string, string, bool) {
	eq := -1
	for i := 0; i < len(line) && eq < 0; i++ {
		switch line[i] {
		case '\\':
			i++
		case '#', ';', '[':
			return "", "", false
		case '=':
			eq = i
		}
	}
	if eq < 0 {
		return "", "", false
	}
	key := normalizeConfKey(unescapeConf(line[:eq]))
	if key == "" {
		return "", "", false
	}
	rest := strings.TrimLeft(line[eq+1:], " \t")
	var value string
	if rest != "" && (rest[0] == '"' || rest[0] == '\'') {
		end := -1
		for i := 1; i < len(rest) && end < 0; i++ {
			switch rest[i] {
			case '\\':
				i++
			case '#', ';':
				return "", "", false
			case rest[0]:
				end = i
			}
		}
		if end < 0 {
			return "", "", false
		}
		after := strings.TrimLeft(rest[end+1:], " \t")
		if after != "" && after[0] != '#' && after[0] != ';' {
			return "", "", false
		}
		value = rest[1:end]
	} else {
		end := len(rest)
		for i := 0; i < len(rest); i++ {
			if rest[i] == '\\' {
				i++
				continue
			}
			if rest[i] == '#' || rest[i] == ';' {
				end = i
				break
			}
		}
		value = strings.TrimRight(rest[:end], " \t")
	}
	if value == "" {
		return "", "", false
	}
	return key, unescapeConf(value), true
}

func unescapeConf(s string) string { return strings.NewReplacer(`\#`, "#", `\;`, ";").Replace(s) }

// escapeConf escapes comment characters as PVE's writer does.
func escapeConf(s string) string { return strings.NewReplacer("#", `\#`, ";", `\;`).Replace(s) }

// checkConfValue refuses values ceph.conf cannot hold as they are.
func checkConfValue(v string) error {
	switch {
	case v == "":
		return fmt.Errorf("is empty; ceph.conf has no empty values (remove the key instead)")
	case strings.ContainsAny(v, "\n\r"):
		return fmt.Errorf("contains a line break, which ceph.conf cannot hold")
	case strings.TrimSpace(v) != v:
		return fmt.Errorf("starts or ends with blanks, which ceph.conf drops")
	case v[0] == '"' || v[0] == '\'':
		return fmt.Errorf("starts with a quote, which ceph.conf reads as a quoted value")
	case strings.HasSuffix(v, `\`):
		return fmt.Errorf("ends with a backslash, which continues the line in ceph.conf")
	}
	return nil
}

// ConfKeys returns the keys of each section of a ceph.conf text as PVE
// reads it (normalized, in file order, each once) and the sections in
// order: what pve-adopt imports, through the same (fuzzed) grammar the
// resource edits the file with.
func ConfKeys(raw string) (map[string][]string, []string) {
	keys := map[string][]string{}
	var order []string
	cur, seen := "", map[string]bool{}
	for _, l := range parseConfFile(raw).lines {
		switch {
		case l.header:
			cur = l.section
			if _, ok := keys[cur]; !ok {
				keys[cur] = nil
				order = append(order, cur)
			}
		case cur != "" && l.key != "" && !seen[cur+"\x00"+l.key]:
			seen[cur+"\x00"+l.key] = true
			keys[cur] = append(keys[cur], l.key)
		}
	}
	return keys, order
}

// section returns the settings of a section as PVE reads them (the last
// occurrence of a key wins; sections of the same name merge).
func (f *confFile) section(name string) (map[string]string, bool) {
	out := map[string]string{}
	found, in := false, false
	for _, l := range f.lines {
		switch {
		case l.header:
			in = l.section == name
			found = found || in
		case in && l.key != "":
			out[l.key] = l.value
		}
	}
	return out, found
}

// set makes key = value in section: the key's line is rewritten (further
// occurrences removed), or a line is added at the end of the section, or
// the section is appended.
func (f *confFile) set(section, key, value string) {
	line := "\t" + key + " = " + escapeConf(value)
	in, done := false, false
	lastOfSection := -1
	var out []*confLine
	for _, l := range f.lines {
		if l.header {
			in = l.section == section
		}
		if in && !l.header && l.key == key {
			if done {
				continue
			}
			l = &confLine{text: line, logical: line, key: key, value: value}
			done = true
		}
		out = append(out, l)
		if in && (l.header || l.key != "") {
			lastOfSection = len(out) - 1
		}
	}
	f.lines = out
	if done {
		return
	}
	nl := &confLine{text: line, logical: line, key: key, value: value}
	if lastOfSection >= 0 {
		at := lastOfSection + 1
		if at > 0 && !f.lines[at-1].header && danglingContinuation(f.lines[at-1]) {
			at-- // the file's last line ends in a backslash: a line after it would be joined to it
		}
		f.lines = append(f.lines[:at], append([]*confLine{nl}, f.lines[at:]...)...)
		return
	}
	if n := len(f.lines); n > 0 && (strings.TrimSpace(f.lines[n-1].logical) != "" || danglingContinuation(f.lines[n-1])) {
		// A blank line; after a dangling backslash it is the (empty)
		// continuation, so the new header stays a line of its own.
		f.lines = append(f.lines, &confLine{})
	}
	f.lines = append(f.lines, &confLine{text: "[" + section + "]", logical: "[" + section + "]", header: true, section: section}, nl)
	f.trailingNewline = true
}

// remove deletes every line of key in section.
func (f *confFile) remove(section, key string) {
	in := false
	var out []*confLine
	for _, l := range f.lines {
		if l.header {
			in = l.section == section
		}
		if in && !l.header && l.key == key {
			continue
		}
		out = append(out, l)
	}
	f.lines = out
}

// danglingContinuation reports a line ending in a backslash that joined
// no next line (the file's last line): whatever follows it would continue it.
func danglingContinuation(l *confLine) bool {
	return strings.HasSuffix(l.logical, `\`) && !strings.HasSuffix(l.logical, `\\`)
}

func (f *confFile) String() string {
	parts := make([]string, len(f.lines))
	for i, l := range f.lines {
		parts[i] = l.text
	}
	s := strings.Join(parts, "\n")
	if f.trailingNewline && s != "" {
		s += "\n"
	}
	return s
}
