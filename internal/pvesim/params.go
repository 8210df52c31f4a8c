package pvesim

import (
	"fmt"
	"net/netip"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A hand-written subset of PVE::JSONSchema: enough to reject what PVE
// rejects for the methods the simulator serves, with the same messages.

type ptype int

const (
	tString ptype = iota
	tInteger
	tBoolean
	tNumber
)

type param struct {
	typ      ptype
	optional bool
	min, max *int64
	// minF is a minimum that is not an integer (wal_dev_size: 0.5).
	minF      *float64
	enum      []string
	format    string
	maxLength int
	minLength int
	requires  string
	pattern   *regexp.Regexp
	// formatFn checks formats defined next to their handlers, such as
	// property strings (options.go); it returns check_format's die text.
	formatFn func(string) string
}

type schema map[string]param

func i64(v int64) *int64 { return &v }

// Helpers for compact schema declarations.
func pStr() param  { return param{typ: tString, optional: true} }
func pBool() param { return param{typ: tBoolean, optional: true} }
func pInt(lo, hi *int64) param {
	return param{typ: tInteger, optional: true, min: lo, max: hi}
}
func pFmt(f string) param          { return param{typ: tString, optional: true, format: f} }
func pEnum(vals ...string) param   { return param{typ: tString, optional: true, enum: vals} }
func (p param) req() param         { p.optional = false; return p }
func (p param) maxLen(n int) param { p.maxLength = n; return p }
func (p param) needs(k string) param {
	p.requires = k
	return p
}

func nodeParam() param { return pFmt("pve-node").req() }

var (
	integerRE  = regexp.MustCompile(`^[+-]?\d+$`)
	numberRE   = regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$`)
	nodeNameRE = regexp.MustCompile(`^(?i:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)$`)
	ifaceRE    = regexp.MustCompile(`^(?i:[a-z][a-z0-9_]{1,20}(?:[:.]\d+)?)$`)
	configIDRE = regexp.MustCompile(`^(?i:[a-z][a-z0-9_-]+)$`)
	vlanItemRE = regexp.MustCompile(`^(\d+)(?:-(\d+))?$`)
	listSplit  = regexp.MustCompile(`[\x00\s,;]+`)
)

// splitList is PVE::Tools::split_list.
func splitList(s string) []string {
	var out []string
	for _, p := range listSplit.Split(s, -1) {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// validateKinds returns per-parameter errors like PVE::JSONSchema::validate,
// for values that may not have been plain strings (kinds, from
// readParams). check_object first checks every schema
// property (missing or invalid), then, per key given, its `requires`
// (whether or not the key's own value was valid) and whether the schema
// knows it. A key with several errors gets them joined by a literal
// backslash-n (add_error's single-quoted join('\n')).
func (sc schema) validateKinds(params map[string]string, kinds map[string]valueKind) map[string]string {
	errs := map[string]string{}
	add := func(k, msg string) {
		if prev, ok := errs[k]; ok {
			errs[k] = prev + `\n` + msg
			return
		}
		errs[k] = msg
	}
	keys := make([]string, 0, len(sc))
	for k := range sc {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := sc[k]
		v, ok := params[k]
		if !ok {
			if !p.optional {
				add(k, "property is missing and it is not optional")
			}
			continue
		}
		msg, handled := p.checkKind(kinds[k])
		if !handled {
			msg = p.check(v)
		}
		if msg != "" {
			add(k, msg)
		}
	}
	given := make([]string, 0, len(params))
	for k := range params {
		given = append(given, k)
	}
	sort.Strings(given)
	for _, k := range given {
		p, ok := sc[k]
		if !ok {
			add(k, "property is not defined in schema and the schema does not allow additional properties")
			continue
		}
		if p.requires == "" {
			continue
		}
		if _, ok := params[p.requires]; ok && kinds[p.requires] != kindUndef {
			continue
		}
		add(p.requires, fmt.Sprintf("missing property required by '%s'", k))
	}
	return errs
}

// check is check_prop for one top-level value: the type, then the format,
// pattern, maxLength, minLength, range (of any value that is a number) and
// enumeration, stopping at the first failure.
func (p param) check(v string) string {
	switch p.typ {
	case tBoolean:
		if v != "0" && v != "1" {
			return fmt.Sprintf("type check ('boolean') failed - got '%s'", v)
		}
	case tInteger:
		if !integerRE.MatchString(v) {
			return fmt.Sprintf("type check ('integer') failed - got '%s'", v)
		}
	case tNumber:
		if !numberRE.MatchString(v) {
			return fmt.Sprintf("type check ('number') failed - got '%s'", v)
		}
	}
	if p.format != "" || p.formatFn != nil {
		check := func(v string) string { return checkFormat(p.format, v) }
		if p.formatFn != nil {
			check = p.formatFn
		}
		if msg := check(v); msg != "" {
			// check_format's die text keeps its newline inside the error.
			return "invalid format - " + msg + "\n"
		}
	}
	if p.pattern != nil && !p.pattern.MatchString(v) {
		return "value does not match the regex pattern"
	}
	if p.maxLength > 0 && utf8.RuneCountInString(v) > p.maxLength {
		return fmt.Sprintf("value may only be %d characters long", p.maxLength)
	}
	if p.minLength > 0 && utf8.RuneCountInString(v) < p.minLength {
		return fmt.Sprintf("value must be at least %d characters long", p.minLength)
	}
	if numberRE.MatchString(v) {
		x, _ := strconv.ParseFloat(v, 64)
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			// Compare integers exactly; floats lose precision past 2^53.
			if p.max != nil && n > *p.max {
				return fmt.Sprintf("value must have a maximum value of %d", *p.max)
			}
			if p.min != nil && n < *p.min {
				return fmt.Sprintf("value must have a minimum value of %d", *p.min)
			}
		} else {
			if p.max != nil && x > float64(*p.max) {
				return fmt.Sprintf("value must have a maximum value of %d", *p.max)
			}
			if p.min != nil && x < float64(*p.min) {
				return fmt.Sprintf("value must have a minimum value of %d", *p.min)
			}
		}
		if p.minF != nil && x < *p.minF {
			return fmt.Sprintf("value must have a minimum value of %s", strconv.FormatFloat(*p.minF, 'f', -1, 64))
		}
	}
	if len(p.enum) > 0 {
		for _, e := range p.enum {
			if e == v {
				return ""
			}
		}
		return fmt.Sprintf("value '%s' does not have a value in the enumeration '%s'", v, strings.Join(p.enum, ", "))
	}
	return ""
}

func checkFormat(format, v string) string {
	if base, ok := strings.CutSuffix(format, "-list"); ok && base != "pve-vlan-id-or-range" {
		for _, item := range splitList(v) {
			if msg := checkFormat(base, item); msg != "" {
				return msg
			}
		}
		return ""
	}
	switch format {
	case "pem-certificate", "pem-certificate-chain", "pem-string", "email", "pve-acme-domain", "pve-acme-alias":
		return checkCertFormat(format, v) // certificates.go, acme.go
	case "pve-node":
		if !nodeNameRE.MatchString(v) {
			return "value does not look like a valid node name"
		}
	case "pve-iface":
		if !ifaceRE.MatchString(v) {
			return fmt.Sprintf("invalid network interface name '%s'", v)
		}
	case "pve-configid":
		if !configIDRE.MatchString(v) {
			return fmt.Sprintf("invalid configuration ID '%s'", v)
		}
	case "ipv4":
		if !ipv4RE.MatchString(v) {
			return "value does not look like a valid IPv4 address"
		}
	case "ipv6":
		if !ipv6RE.MatchString(v) {
			return "value does not look like a valid IPv6 address"
		}
	case "ip":
		if !ipRE.MatchString(v) {
			return "value does not look like a valid IP address"
		}
	case "CIDRv4":
		if !validCIDR(v, true) {
			return "value does not look like a valid IPv4 CIDR network"
		}
	case "CIDRv6":
		if !validCIDR(v, false) {
			return "value does not look like a valid IPv6 CIDR network"
		}
	case "ipv4mask":
		// The mask table of JSONSchema.pm starts at 0.0.0.0.
		if _, ok := maskBits(v); !ok && v != "0.0.0.0" {
			return "value does not look like a valid IP netmask"
		}
	case "pve-vlan-id-or-range-list":
		for _, item := range splitList(v) {
			m := vlanItemRE.FindStringSubmatch(item)
			if m == nil {
				return fmt.Sprintf("invalid VLAN configuration '%s'", item)
			}
			// The end is checked only when true in Perl: "5-0" passes.
			for i, t := range m[1:] {
				if i == 1 && (t == "" || t == "0") {
					continue
				}
				if n, _ := strconv.Atoi(t); n < 2 || n > 4094 {
					return fmt.Sprintf("invalid VLAN tag '%s'", t)
				}
			}
			if m[2] != "" && m[2] != "0" {
				start, _ := strconv.Atoi(m[1])
				end, _ := strconv.Atoi(m[2])
				if start >= end {
					return fmt.Sprintf("VLAN range must go from lower to higher tag '%s'", item)
				}
			}
		}
	default:
		if msg, ok := checkNamedFormat(format, v); ok {
			return msg
		}
	}
	return ""
}

// validCIDR mirrors pve_verify_cidrv4/6: an address (host bits allowed)
// with a prefix length of 8..32 (8..128 for IPv6).
func validCIDR(v string, v4 bool) bool {
	re, maxBits := cidrV6RE, 128
	if v4 {
		re, maxBits = cidrV4RE, 32
	}
	m := re.FindStringSubmatch(v)
	if m == nil {
		return false
	}
	n, err := strconv.Atoi(m[1])
	return err == nil && n > 7 && n <= maxBits
}

// maskBits converts a dotted IPv4 netmask to its prefix length.
func maskBits(v string) (int, bool) {
	a, err := netip.ParseAddr(v)
	if err != nil || !a.Is4() {
		return 0, false
	}
	b := a.As4()
	m := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	n := 0
	for m&0x80000000 != 0 {
		n++
		m <<= 1
	}
	if m != 0 || n == 0 {
		return 0, false
	}
	return n, true
}
