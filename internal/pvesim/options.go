package pvesim

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Datacenter options (GET/PUT /cluster/options) after pve-manager
// PVE::API2::Cluster get_options/set_options and pve-cluster
// PVE::DataCenterConfig: /etc/pve/datacenter.cfg of one trust domain, so a
// standalone node has its own and a cluster shares one.
//
// PUT takes property strings and checks every sub-key the way
// PVE::JSONSchema::parse_property_string does; the file keeps them as
// given. GET parses them back into objects (crs, ha, migration, next-id,
// notify, replication, tag-style, u2f, user-tag-access, webauthn) but not
// bwlimit, which pve-cluster never parses and so stays a string. GET always
// has description ("" without one, else every line followed by "\n"),
// mac_prefix (BC:24:11 unless set) and allowed-tags.

// datacenterCfg is /etc/pve/datacenter.cfg: option lines as written by PUT,
// and the description, which PVE keeps as the file's leading comment.
type datacenterCfg struct {
	Values      map[string]string `json:"values,omitempty"`
	Description string            `json:"description,omitempty"`
}

const proxmoxOUI = "BC:24:11"

// psKey is one key of a property-string format.
type psKey struct {
	typ        ptype
	optional   bool
	defaultKey bool
	enum       []string
	format     string // a named format such as CIDR
	pattern    *regexp.Regexp
	min        *float64
	max        *float64
	maxLength  int
	requires   string
	// alias names the key this one stands for (volume=... is file=...).
	alias string
	// fn is a named format checked next to its users (qemu_options.go):
	// it returns the text the format's verifier dies with.
	fn func(string) string
}

type psFormat map[string]psKey

func psOpt(t ptype) psKey                { return psKey{typ: t, optional: true} }
func psEnum(vals ...string) psKey        { return psKey{typ: tString, optional: true, enum: vals} }
func (k psKey) needs(other string) psKey { k.requires = other; return k }
func (k psKey) atLeast(v float64) psKey  { k.min = &v; return k }
func (k psKey) matching(re string) psKey {
	k.pattern = anchoredRegexp(re) // compiled once (perf_index.go)
	return k
}
func (k psKey) withFormat(f string) psKey { k.format = f; return k }
func (k psKey) atMost(v float64) psKey    { k.max = &v; return k }

const tagRE = `(?i:[a-z0-9_][a-z0-9_\-+.]*)`

var (
	colorOverrideRE = tagRE + `:[0-9a-fA-F]{6}(?::[0-9a-fA-F]{6})?`
	httpProxyRE     = regexp.MustCompile(`^(?:http://.*)$`)
	registeredTagRE = regexp.MustCompile(`^(?:(?:` + tagRE + `;)*` + tagRE + `)$`)
)

// datacenterFormats are the property-string options of datacenter.cfg.
func datacenterFormats(rel pveRelease) map[string]psFormat {
	transport := func() psFormat {
		return psFormat{
			"type":    {typ: tString, defaultKey: true, enum: []string{"secure", "insecure"}},
			"network": psOpt(tString).withFormat("CIDR"),
		}
	}
	crs := psFormat{
		"ha":                    psEnum("basic", "static"),
		"ha-rebalance-on-start": psOpt(tBoolean),
	}
	if rel.atLeast9() {
		crs["ha"] = psEnum("basic", "static", "dynamic")
		crs["ha-auto-rebalance"] = psOpt(tBoolean)
		crs["ha-auto-rebalance-threshold"] = psOpt(tNumber).atLeast(0).needs("ha-auto-rebalance")
		crs["ha-auto-rebalance-method"] = psEnum("bruteforce", "topsis").needs("ha-auto-rebalance")
		crs["ha-auto-rebalance-hold-duration"] = psOpt(tNumber).atLeast(0).needs("ha-auto-rebalance")
		crs["ha-auto-rebalance-margin"] = psOpt(tNumber).atLeast(0).needs("ha-auto-rebalance")
	}
	limit := psOpt(tNumber).atLeast(0)
	f := map[string]psFormat{
		"bwlimit":   {"clone": limit, "default": limit, "migration": limit, "move": limit, "restore": limit},
		"crs":       crs,
		"ha":        {"shutdown_policy": {typ: tString, enum: []string{"freeze", "failover", "conditional", "migrate"}}},
		"migration": transport(),
		// pve-cluster spells the bounds min/max, which JSONSchema ignores:
		// any integer passes; only lower > upper is refused, when writing.
		"next-id": {"lower": psOpt(tInteger), "upper": psOpt(tInteger)},
		"notify": {
			"fencing":                psEnum("always", "never"),
			"package-updates":        psEnum("auto", "always", "never"),
			"replication":            psEnum("always", "never"),
			"target-fencing":         psOpt(tString),
			"target-package-updates": psOpt(tString),
			"target-replication":     psOpt(tString),
		},
		"tag-style": {
			"case-sensitive": psOpt(tBoolean),
			"color-map":      psOpt(tString).matching(colorOverrideRE + `(?:;` + colorOverrideRE + `)*`),
			"ordering":       psEnum("config", "alphabetical"),
			"shape":          psEnum("full", "circle", "dense", "none"),
		},
		"u2f": {"appid": psOpt(tString), "origin": psOpt(tString)},
		"user-tag-access": {
			"user-allow":      psEnum("none", "list", "existing", "free"),
			"user-allow-list": psOpt(tString).matching(tagRE + `(?:;` + tagRE + `)*`),
		},
		"webauthn": {"allow-subdomains": psOpt(tBoolean), "id": psOpt(tString), "origin": psOpt(tString), "rp": psOpt(tString)},
	}
	if rel.atLeast9() {
		f["replication"] = transport()
	}
	return f
}

// parsedOptionKeys are the options parse_datacenter_config turns into
// objects; bwlimit is not among them.
var parsedOptionKeys = map[string]bool{
	"crs": true, "ha": true, "migration": true, "next-id": true, "notify": true, "replication": true,
	"tag-style": true, "u2f": true, "user-tag-access": true, "webauthn": true,
}

// parsePropertyString is PVE::JSONSchema::parse_property_string followed by
// check_object. It returns the parsed value or the text check_format dies
// with (without the final newline, which param.check appends).
func parsePropertyString(f psFormat, path, data string) (map[string]any, string) {
	res := map[string]any{}
	defaultKey := ""
	for _, part := range strings.Split(data, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		k, v, hasEq := strings.Cut(part, "=")
		switch {
		case hasEq && k != "" && v != "":
			if _, dup := res[k]; dup {
				return nil, "duplicate key in comma-separated list property: " + k
			}
			key, ok := f[k]
			if ok && key.alias != "" {
				k = key.alias
				key, ok = f[k]
				if _, dup := res[k]; dup {
					return nil, fmt.Sprintf("key '%s' is already defined (via alias)", k)
				}
			}
			if !ok {
				return nil, "invalid key in comma-separated list property: " + k
			}
			res[k] = psValue(key, v)
		case !hasEq:
			if defaultKey != "" {
				return nil, "duplicate key in comma-separated list property: " + defaultKey
			}
			for name, key := range f {
				if !key.defaultKey {
					continue
				}
				defaultKey = name
				if _, set := res[name]; set {
					return nil, "duplicate key in comma-separated list property: " + name
				}
				res[name] = psValue(key, part)
			}
			if defaultKey == "" {
				return nil, "value without key, but schema does not define a default key"
			}
		default:
			return nil, "missing key in comma-separated list property"
		}
	}
	errs := map[string]string{}
	names := make([]string, 0, len(f))
	for name := range f {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		key := f[name]
		if key.alias != "" {
			continue // check_prop skips aliases
		}
		v, ok := res[name]
		if !ok {
			if !key.optional {
				errs[path+"."+name] = "property is missing and it is not optional"
			}
			continue
		}
		if msg := key.check(v); msg != "" {
			errs[path+"."+name] = msg
		}
	}
	for _, name := range names {
		if _, ok := res[name]; !ok || f[name].requires == "" {
			continue
		}
		if _, ok := res[f[name].requires]; !ok {
			errs[path+"."+f[name].requires] = fmt.Sprintf("missing property required by '%s.%s'", path, name)
		}
	}
	if len(errs) == 0 {
		return res, ""
	}
	return nil, exceptionText("format error", errs)
}

// exceptionText is PVE::Exception's stringification of an error with
// per-parameter errors: the message, then sorted "path: error" lines.
func exceptionText(msg string, errs map[string]string) string {
	var b strings.Builder
	b.WriteString(msg + "\n")
	keys := make([]string, 0, len(errs))
	for k := range errs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, errs[k])
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// psValue stores a value as parse_property_string does: booleans through
// parse_boolean (1/0, or the text when it is none), the rest as text.
func psValue(k psKey, v string) any {
	if k.typ == tBoolean {
		if b, ok := parseBoolean(v); ok {
			return b
		}
	}
	return v
}

// parseBoolean is PVE::JSONSchema::parse_boolean.
func parseBoolean(v string) (int, bool) {
	switch strings.ToLower(v) {
	case "1", "on", "yes", "true":
		return 1, true
	case "0", "off", "no", "false":
		return 0, true
	}
	return 0, false
}

// check is check_prop for one property-string value.
func (k psKey) check(v any) string {
	if n, ok := v.(int); ok {
		if k.typ == tBoolean {
			return ""
		}
		v = strconv.Itoa(n)
	}
	s, _ := v.(string)
	switch k.typ {
	case tBoolean:
		return fmt.Sprintf("type check ('boolean') failed - got '%s'", s)
	case tInteger:
		if !integerRE.MatchString(s) {
			return fmt.Sprintf("type check ('integer') failed - got '%s'", s)
		}
	case tNumber:
		if !perlNumberRE.MatchString(s) {
			return fmt.Sprintf("type check ('number') failed - got '%s'", s)
		}
	}
	// check_prop's order: format, pattern, maxLength, maximum, minimum, enum.
	switch {
	case k.fn != nil:
		if msg := k.fn(s); msg != "" {
			return "invalid format - " + msg + "\n"
		}
	case k.format != "":
		if msg := checkFormat(k.format, s); msg != "" {
			return "invalid format - " + msg + "\n"
		}
	}
	if k.pattern != nil && !k.pattern.MatchString(s) {
		return "value does not match the regex pattern"
	}
	if k.maxLength > 0 && len(s) > k.maxLength {
		return fmt.Sprintf("value may only be %d characters long", k.maxLength)
	}
	if k.max != nil && perlNumberRE.MatchString(s) {
		if f, err := strconv.ParseFloat(s, 64); err == nil && f > *k.max {
			return "value must have a maximum value of " + strconv.FormatFloat(*k.max, 'f', -1, 64)
		}
	}
	if k.min != nil && perlNumberRE.MatchString(s) {
		if f, err := strconv.ParseFloat(s, 64); err == nil && f < *k.min {
			return "value must have a minimum value of " + strconv.FormatFloat(*k.min, 'f', -1, 64)
		}
	}
	if len(k.enum) > 0 {
		for _, e := range k.enum {
			if e == s {
				return ""
			}
		}
		return fmt.Sprintf("value '%s' does not have a value in the enumeration '%s'", s, strings.Join(k.enum, ", "))
	}
	return ""
}

// perlNumberRE is PVE::JSONSchema::is_number.
var perlNumberRE = regexp.MustCompile(`^[+-]?(\d+\.\d+|\d+\.|\.\d+|\d+)([eE][+-]?\d+)?$`)

func psParam(f psFormat, name string) param {
	p := pStr()
	p.formatFn = func(v string) string {
		_, msg := parsePropertyString(f, name, v)
		return msg
	}
	return p
}

func optionsParams(rel pveRelease) schema {
	sc := schema{
		"consent-text": pStr().maxLen(65536),
		"console":      pEnum("applet", "vv", "html5", "xtermjs"),
		"delete":       pFmt("pve-configid-list"),
		"description":  pStr().maxLen(65536),
		"fencing":      pEnum("watchdog", "hardware", "both"),
		"keyboard": pEnum("de", "de-ch", "da", "en-gb", "en-us", "es", "fi", "fr", "fr-be", "fr-ca", "fr-ch",
			"hu", "is", "it", "ja", "lt", "mk", "nl", "no", "pl", "pt", "pt-br", "sv", "sl", "tr"),
		"language": pEnum("ar", "ca", "da", "de", "en", "es", "eu", "fa", "fr", "hr", "he", "it", "ja", "ka", "kr",
			"nb", "nl", "nn", "pl", "pt_BR", "ru", "sl", "sv", "tr", "ukr", "zh_CN", "zh_TW"),
		"max_workers":        pInt(i64(1), nil),
		"migration_unsecure": pBool(),
	}
	sc["email_from"] = pFmt("email-opt")
	sc["mac_prefix"] = pFmt("mac-prefix")
	proxy := pStr()
	proxy.pattern = httpProxyRE
	sc["http_proxy"] = proxy
	tags := pStr()
	tags.pattern = registeredTagRE
	sc["registered-tags"] = tags
	for name, f := range datacenterFormats(rel) {
		sc[name] = psParam(f, name)
	}
	return sc
}

func registerOptions(t *routeTable) {
	formats := datacenterFormats(t.rel)
	t.add("GET", "/cluster/options", &method{params: schema{}, handler: func(c *call) (any, *apiError) {
		return datacenterOf(c).view(formats), nil
	}})
	t.add("PUT", "/cluster/options", &method{params: optionsParams(t.rel), handler: func(c *call) (any, *apiError) {
		return setOptions(c, formats)
	}})
}

func datacenterOf(c *call) *datacenterCfg {
	d := c.s.domainFor(c.listener)
	if d.Datacenter == nil {
		d.Datacenter = &datacenterCfg{}
	}
	if d.Datacenter.Values == nil {
		d.Datacenter.Values = map[string]string{}
	}
	return d.Datacenter
}

// setOptions is set_options: set what was given, drop what `delete` names
// (unknown names are ignored), then write_datacenter_config's rewrites.
func setOptions(c *call, formats map[string]psFormat) (any, *apiError) {
	dc := datacenterOf(c)
	values := map[string]string{}
	for k, v := range dc.Values {
		values[k] = v
	}
	desc := dc.Description
	for k, v := range c.params {
		switch k {
		case "delete":
		case "description":
			desc = v
		default:
			values[k] = v
		}
	}
	for _, k := range splitList(c.params["delete"]) {
		if k == "description" {
			desc = ""
		}
		delete(values, k)
	}
	if v, ok := values["migration_unsecure"]; ok {
		if _, has := values["migration"]; !has {
			delete(values, "migration_unsecure")
			if v == "1" {
				values["migration"] = "type=insecure"
			} else {
				values["migration"] = "type=secure"
			}
		}
	}
	if values["console"] == "applet" {
		values["console"] = "html5"
	}
	if v, ok := values["mac_prefix"]; ok && strings.EqualFold(v, proxmoxOUI) {
		delete(values, "mac_prefix")
	}
	if v, ok := values["crs"]; ok && v == "" {
		delete(values, "crs")
	}
	if v, ok := values["next-id"]; ok {
		parsed, _ := parsePropertyString(formats["next-id"], "next-id", v)
		lower, upper := int64(100), int64(1000000)
		if s, ok := parsed["lower"].(string); ok {
			lower, _ = strconv.ParseInt(s, 10, 64)
		}
		if s, ok := parsed["upper"].(string); ok {
			upper, _ = strconv.ParseInt(s, 10, 64)
		}
		if lower > upper {
			return nil, die("lower (%d) <= upper (%d) boundary rule broken", lower, upper)
		}
	}
	dc.Values = values
	dc.Description = desc
	c.s.saveLocked()
	return nil, nil
}

// view is what GET /cluster/options returns to a user with Sys.Audit on /.
func (dc *datacenterCfg) view(formats map[string]psFormat) map[string]any {
	out := map[string]any{}
	for k, v := range dc.Values {
		switch {
		case parsedOptionKeys[k] && v != "":
			parsed, msg := parsePropertyString(formats[k], k, v)
			if msg != "" {
				continue // parse_config drops a line it cannot parse
			}
			if k == "user-tag-access" {
				if l, ok := parsed["user-allow-list"].(string); ok {
					parsed["user-allow-list"] = strings.Split(l, ";")
				}
			}
			out[k] = parsed
		case k == "registered-tags":
			out[k] = strings.Split(v, ";")
		case k == "migration_unsecure":
			b, _ := parseBoolean(v)
			out[k] = b
		default:
			out[k] = v
		}
	}
	// The deprecated flag still sets the migration type when migration has none.
	if v, ok := dc.Values["migration_unsecure"]; ok {
		m, _ := out["migration"].(map[string]any)
		if m == nil {
			m = map[string]any{}
		}
		if _, has := m["type"]; !has {
			if b, _ := parseBoolean(v); b == 1 {
				m["type"] = "insecure"
			} else {
				m["type"] = "secure"
			}
			out["migration"] = m
		}
	}
	if out["console"] == "applet" {
		out["console"] = "html5"
	}
	out["description"] = perlDescription(dc.Description)
	if _, ok := out["mac_prefix"]; !ok {
		out["mac_prefix"] = proxmoxOUI
	}
	tags := []string{}
	if l, ok := out["registered-tags"].([]string); ok {
		tags = append(tags, l...)
	}
	sort.Strings(tags)
	out["allowed-tags"] = tags
	return out
}

// perlDescription is the description as parse_datacenter_config reads it
// back: each line written as a comment, each read with "\n" appended.
func perlDescription(s string) string {
	lines := strings.Split(s, "\n")
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}
