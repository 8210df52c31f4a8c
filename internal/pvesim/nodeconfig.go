package pvesim

import (
	"crypto/sha1" //nolint:gosec // PVE's config digest is a SHA-1
	"encoding/hex"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// /nodes/{node}/config after pve-manager PVE::API2::NodeConfig and
// PVE::NodeConfig: /etc/pve/nodes/{node}/config, a flat "key: value" file
// whose description is kept as leading comment lines.

const maxACMEDomains = 5 // acmedomain0..acmedomain5

type nodeConfig struct {
	Description string            `json:"description,omitempty"`
	Values      map[string]string `json:"values,omitempty"`
}

func (nc *nodeConfig) empty() bool {
	return nc == nil || (nc.Description == "" && len(nc.Values) == 0)
}

// render is write_node_config.
func (nc *nodeConfig) render() string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(nc.Description, "\n"), "\n") {
		if nc.Description == "" {
			break
		}
		b.WriteString("#" + encodeText(l) + "\n")
	}
	keys := make([]string, 0, len(nc.Values))
	for k := range nc.Values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, nc.Values[k])
	}
	return b.String()
}

// encodeText is PVE::Tools::encode_text: characters other than word
// characters, whitespace and -_.:/ become %XX.
func encodeText(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '-' || r == '_' || r == '.' || r == ' ' || r == '\t' || r == ':' || r == '/' ||
			(r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || r > 0x7f {
			b.WriteRune(r)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", r)
	}
	return b.String()
}

func (nc *nodeConfig) digest() string {
	sum := sha1.Sum([]byte(nc.render())) //nolint:gosec // PVE's digest
	return hex.EncodeToString(sum[:])
}

// apiConfig is load_config as the API returns it: {} for an empty file,
// else the values, the description (each line read back with "\n") and the
// digest.
func (nc *nodeConfig) apiConfig() map[string]any {
	out := map[string]any{}
	if nc.empty() {
		return out
	}
	for k, v := range nc.Values {
		out[k] = v
	}
	if nc.Description != "" {
		var d strings.Builder
		for _, l := range strings.Split(strings.TrimRight(nc.Description, "\n"), "\n") {
			d.WriteString(l + "\n")
		}
		out["description"] = d.String()
	}
	out["digest"] = nc.digest()
	return out
}

var nodeConfigKeys = []string{"acme", "acmedomain0", "acmedomain1", "acmedomain2", "acmedomain3", "acmedomain4", "acmedomain5", "ballooning-target", "description", "startall-onboot-delay", "wakeonlan"}

func registerNodeConfig(t *routeTable) {
	t.add("GET", "/nodes/{node}/config", &method{params: schema{
		"node":     nodeParam(),
		"property": pEnum(nodeConfigKeys...),
	}, handler: func(c *call) (any, *apiError) {
		cfg := c.node().Config.apiConfig()
		if p := c.params["property"]; p != "" {
			v, ok := cfg[p]
			if !ok {
				return map[string]any{}, nil
			}
			return map[string]any{p: v}, nil
		}
		return cfg, nil
	}})
	p := schema{
		"node":                  nodeParam(),
		"delete":                pFmt("pve-configid-list"),
		"digest":                pStr().maxLen(40),
		"description":           pStr().maxLen(65536),
		"startall-onboot-delay": pInt(i64(0), i64(300)),
		"ballooning-target":     pInt(i64(0), i64(100)),
		"wakeonlan":             psParam(wakeOnLANPS, "wakeonlan"),
		"acme":                  psParam(acmePS, "acme"),
	}
	for i := 0; i <= maxACMEDomains; i++ {
		name := fmt.Sprintf("acmedomain%d", i)
		p[name] = psParam(acmeDomainPS, name)
	}
	t.add("PUT", "/nodes/{node}/config", &method{params: p, handler: setNodeConfig})
}

// setNodeConfig is update_config; the property strings were checked with
// the other parameters (params_formats_misc.go).
func setNodeConfig(c *call) (any, *apiError) {
	ns := c.node()
	cur := ns.Config
	if cur == nil {
		cur = &nodeConfig{}
	}
	if d := c.params["digest"]; d != "" && !cur.empty() && d != cur.digest() {
		return nil, die("detected modified configuration - file changed by other user? Try again.")
	}
	next := &nodeConfig{Description: cur.Description, Values: map[string]string{}}
	for k, v := range cur.Values {
		next.Values[k] = v
	}
	keys := make([]string, 0, len(c.params))
	for k := range c.params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch k {
		case "node", "delete", "digest":
		case "description":
			next.Description = c.params[k]
		default:
			next.Values[k] = c.params[k]
		}
	}
	for _, k := range splitList(c.params["delete"]) {
		if k == "description" {
			next.Description = ""
		}
		delete(next.Values, k)
	}
	if v, ok := next.Values["description"]; ok { // never a value key
		next.Description = v
		delete(next.Values, "description")
	}
	tmp := &nodeState{}
	tmp.Config = next
	if _, err := acmeConf(tmp, acmeOf(c)); err != nil {
		return nil, die("%s", err.Error())
	}
	ns.Config = next
	c.s.saveLocked()
	return nil, nil
}

type propKey struct {
	check    func(string) string
	optional bool
}

var (
	acmeFormat = map[string]propKey{
		"account": {optional: true, check: func(v string) string {
			if !configIDRE.MatchString(v) {
				return fmt.Sprintf("invalid configuration ID '%s'", v)
			}
			return ""
		}},
		"domains": {optional: true, check: func(v string) string {
			for _, d := range strings.Split(v, ";") {
				if msg := checkCertFormat("pve-acme-domain", d); msg != "" {
					return msg
				}
			}
			return ""
		}},
	}
	acmeDomainFormat = map[string]propKey{
		"domain": {check: func(v string) string { return checkCertFormat("pve-acme-domain", v) }},
		"alias":  {optional: true, check: func(v string) string { return checkCertFormat("pve-acme-alias", v) }},
		"plugin": {optional: true, check: func(v string) string {
			if !configIDRE.MatchString(v) {
				return fmt.Sprintf("invalid configuration ID '%s'", v)
			}
			return ""
		}},
	}
	macRE = regexp.MustCompile(`^(?i:[a-f0-9][02468ace](?::[a-f0-9]{2}){5})$`)
)

// parsePropString is parse_property_string for a flat format; the error
// names the key ("domain: invalid format - ...").
func parsePropString(data string, format map[string]propKey, defaultKey string) (map[string]string, string) {
	res := map[string]string{}
	for _, part := range strings.Split(data, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		k, v, hasEq := strings.Cut(part, "=")
		if !hasEq {
			if defaultKey == "" {
				return nil, "_root: value without key, but schema does not define a default key"
			}
			if _, dup := res[defaultKey]; dup {
				return nil, "_root: duplicate key in comma-separated list property: " + defaultKey
			}
			res[defaultKey] = part
			continue
		}
		if v == "" {
			return nil, "_root: missing key in comma-separated list property"
		}
		if _, dup := res[k]; dup {
			return nil, "_root: duplicate key in comma-separated list property: " + k
		}
		if _, ok := format[k]; !ok {
			return nil, "_root: invalid key in comma-separated list property: " + k
		}
		res[k] = v
	}
	keys := make([]string, 0, len(format))
	for k := range format {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		pk := format[k]
		v, ok := res[k]
		if !ok {
			if !pk.optional {
				return nil, k + ": property is missing and it is not optional"
			}
			continue
		}
		if msg := pk.check(v); msg != "" {
			return nil, k + ": invalid format - " + msg
		}
	}
	return res, ""
}

// acmeConf is PVE::NodeConfig::get_acme_conf: nil without ACME settings
// at all; domains lower-cased, in config order.
func acmeConf(ns *nodeState, cfg *acmeConfig) (*acmeNodeConf, error) {
	nc := ns.Config
	if nc == nil {
		nc = &nodeConfig{}
	}
	res := &acmeNodeConf{account: "default"}
	seen := map[string]string{}
	if v, ok := nc.Values["acme"]; ok {
		m, msg := parsePropString(v, acmeFormat, "")
		if msg != "" {
			return nil, fmt.Errorf("%s", msg)
		}
		if a := m["account"]; a != "" {
			res.account = a
		}
		if m["domains"] != "" {
			for _, d := range strings.Split(m["domains"], ";") {
				d = strings.ToLower(d)
				if seen[d] != "" {
					return nil, fmt.Errorf("duplicate domain '%s' in ACME config properties", d)
				}
				seen[d] = "acme"
				res.domains = append(res.domains, acmeNodeDomain{domain: d, plugin: "standalone"})
			}
		}
	}
	plugins := pluginsWithStandalone(cfg)
	for i := 0; i <= maxACMEDomains; i++ {
		key := fmt.Sprintf("acmedomain%d", i)
		v, ok := nc.Values[key]
		if !ok {
			continue
		}
		m, msg := parsePropString(v, acmeDomainFormat, "domain")
		if msg != "" {
			return nil, fmt.Errorf("%s", msg)
		}
		d := strings.ToLower(m["domain"])
		if prev := seen[d]; prev != "" {
			return nil, fmt.Errorf("duplicate domain '%s' in ACME config properties '%s' and '%s'", d, key, prev)
		}
		plugin := m["plugin"]
		if plugin == "" {
			plugin = "standalone"
		}
		if plugin != "standalone" && plugins[plugin] == nil {
			return nil, taskErr("plugin '%s' for domain '%s' not found!", plugin, d)
		}
		seen[d] = key
		res.domains = append(res.domains, acmeNodeDomain{domain: d, plugin: plugin, alias: m["alias"]})
	}
	return res, nil
}
