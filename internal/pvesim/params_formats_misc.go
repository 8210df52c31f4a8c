package pvesim

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Formats and property strings of pve-common, pve-cluster, pve-manager,
// pve-storage and pve-access-control that routes outside qemu and
// storage.cfg use. Each verifier returns the text register_format's sub
// dies with, without its final newline (param.check and psKey.check add
// "invalid format - " and the newline).

func psReq(t ptype) psKey        { return psKey{typ: t} }
func (k psKey) asDefault() psKey { k.defaultKey = true; return k }

// withFormatFn is a string parameter checked by fn as check_format would.
func withFormatFn(format string, fn func(string) string) param {
	p := pFmt(format)
	p.formatFn = fn
	return p
}

// corosyncLinkFormat is pve-cluster Corosync.pm $corosync_link_format.
var corosyncLinkFormat = psFormat{
	"address":  psReq(tString).asDefault().withFormat("address"),
	"priority": psOpt(tInteger).atLeast(0).atMost(255),
}

// Node config property strings, pve-manager PVE/NodeConfig.pm.
var (
	wakeOnLANPS = psFormat{
		"mac":               psReq(tString).asDefault().withFormat("mac-addr"),
		"bind-interface":    psOpt(tString).withFormat("pve-iface"),
		"broadcast-address": psOpt(tString).withFormat("ipv4"),
	}
	acmePS = psFormat{
		"account": psOpt(tString).withFormat("pve-configid"),
		"domains": psOpt(tString).withFormat("pve-acme-domain-list"),
	}
	acmeDomainPS = psFormat{
		"domain": psReq(tString).asDefault().withFormat("pve-acme-domain"),
		"plugin": psOpt(tString).withFormat("pve-configid"),
		"alias":  psOpt(tString).withFormat("pve-acme-alias"),
	}
)

// draidConfigFormat is pve-storage API2/Disks/ZFS.pm $draid_config_format:
// both keys are required.
var draidConfigFormat = psFormat{
	"spares": psReq(tInteger).atLeast(0),
	"data":   psReq(tInteger).atLeast(1),
}

// cephECFormat is pve-manager API2/Ceph/Pool.pm $ec_format.
var cephECFormat = psFormat{
	"k":              psReq(tInteger).atLeast(2),
	"m":              psReq(tInteger).atLeast(1),
	"failure-domain": psOpt(tString),
	"device-class":   psOpt(tString),
	"profile":        psOpt(tString),
}

// verifyCommandBatch is pve-manager API2/Nodes.pm verify_command_batch:
// JSON (decode_json), then an array of objects with path (any scalar),
// method (GET|POST|PUT|DELETE) and an optional args object, checked by
// PVE::JSONSchema::validate, whose exception text follows the prefix.
func verifyCommandBatch(v string) string {
	var doc any
	dec := json.NewDecoder(strings.NewReader(v))
	dec.UseNumber()
	err := dec.Decode(&doc)
	if err == nil && strings.TrimLeft(v[dec.InputOffset():], " \t\r\n") != "" {
		err = errors.New("garbage after JSON object")
	}
	if err != nil {
		return "commands param did not contain valid JSON: " + jsonXSSyntax(v, err)
	}
	errs := map[string]string{}
	items, ok := doc.([]any)
	switch {
	case doc == nil:
		errs["_root"] = "property is missing and it is not optional"
	case !ok:
		errs["_root"] = "type check ('array') failed"
	}
	for i, it := range items {
		at := fmt.Sprintf("[%d]", i)
		obj, ok := it.(map[string]any)
		if !ok {
			errs[at] = "type check ('object') failed"
			continue
		}
		for _, k := range []string{"path", "method"} {
			val, set := obj[k]
			switch {
			case !set || val == nil:
				errs[at+"."+k] = "property is missing and it is not optional"
			case perlRefType(val) != "":
				errs[at+"."+k] = fmt.Sprintf("type check ('string') failed - got %s", perlRefType(val))
			case k == "method" && !commandMethodRE.MatchString(fmt.Sprint(val)):
				errs[at+"."+k] = "value does not match the regex pattern"
			}
		}
		if a, set := obj["args"]; set && a != nil {
			if _, ok := a.(map[string]any); !ok {
				errs[at+".args"] = "type check ('object') failed"
			}
		}
	}
	if len(errs) == 0 {
		return ""
	}
	return exceptionText("commands is not a valid array of commands: Parameter verification failed.", errs)
}

var commandMethodRE = regexp.MustCompile(`^(?:(GET|POST|PUT|DELETE))$`)

// perlRefType is what ref() gives for a decoded JSON value.
func perlRefType(v any) string {
	switch v.(type) {
	case []any:
		return "ARRAY"
	case map[string]any:
		return "HASH"
	case bool:
		return "JSON::PP::Boolean"
	}
	return ""
}

// jsonXSSyntax is the error JSON::XS's decoder (decode_sv and friends)
// reports for v, which Go's decoder refused.
func jsonXSSyntax(v string, _ error) string {
	d := &xsDecoder{s: v}
	d.value()
	if d.err == "" {
		d.ws()
		if d.i < len(d.s) {
			d.err = "garbage after JSON object"
		}
	}
	if d.err == "" {
		d.err = "malformed JSON string, neither tag, array, object, number, string or atom"
	}
	return jsonXSError(v, d.err, d.i)
}

// jsonXSError is JSON::XS's croak text, with the rest of the input shown
// as pv_uni_display does (at most 20 characters, then "..."), and the
// caller's location decode_json appends (pve-manager 9.x Nodes.pm).
func jsonXSError(v, msg string, off int) string {
	before := "(end of string)"
	if off < len(v) {
		r := []rune(v[off:])
		before = string(r)
		if len(r) > 20 {
			before = string(r[:20]) + "..."
		}
	}
	chars := len([]rune(v[:min(off, len(v))]))
	return fmt.Sprintf("%s, at character offset %d (before \"%s\") at /usr/share/perl5/PVE/API2/Nodes.pm line 99.", msg, chars, before)
}

// xsDecoder walks JSON as JSON::XS does, to stop where it stops with its
// message.
type xsDecoder struct {
	s   string
	i   int
	err string
}

func (d *xsDecoder) ws() {
	for d.i < len(d.s) && strings.IndexByte(" \t\r\n", d.s[d.i]) >= 0 {
		d.i++
	}
}

func (d *xsDecoder) peek() byte {
	if d.i < len(d.s) {
		return d.s[d.i]
	}
	return 0
}

func (d *xsDecoder) value() {
	d.ws()
	switch c := d.peek(); {
	case c == '"':
		d.str()
	case c == '[':
		d.i++
		d.ws()
		if d.peek() == ']' {
			d.i++
			return
		}
		for d.err == "" {
			d.value()
			if d.err != "" {
				return
			}
			d.ws()
			switch d.peek() {
			case ']':
				d.i++
				return
			case ',':
				d.i++
			default:
				d.err = ", or ] expected while parsing array"
			}
		}
	case c == '{':
		d.i++
		d.ws()
		if d.peek() == '}' {
			d.i++
			return
		}
		for d.err == "" {
			d.ws()
			if d.peek() != '"' {
				d.err = "'\"' expected"
				return
			}
			if d.str(); d.err != "" {
				return
			}
			d.ws()
			if d.peek() != ':' {
				d.err = "':' expected"
				return
			}
			d.i++
			if d.value(); d.err != "" {
				return
			}
			d.ws()
			switch d.peek() {
			case '}':
				d.i++
				return
			case ',':
				d.i++
			default:
				d.err = ", or } expected while parsing object/hash"
			}
		}
	case c == '-' || (c >= '0' && c <= '9'):
		d.num()
	case c == 't' || c == 'f' || c == 'n':
		lit := map[byte]string{'t': "true", 'f': "false", 'n': "null"}[c]
		if !strings.HasPrefix(d.s[d.i:], lit) {
			d.err = "'" + lit + "' expected"
			return
		}
		d.i += len(lit)
	default:
		d.err = "malformed JSON string, neither tag, array, object, number, string or atom"
	}
}

func (d *xsDecoder) str() {
	d.i++
	for d.i < len(d.s) {
		switch c := d.s[d.i]; {
		case c == '"':
			d.i++
			return
		case c == '\\':
			d.i++
			if d.i >= len(d.s) || strings.IndexByte(`"\/bfnrtu`, d.s[d.i]) < 0 {
				d.err = "illegal backslash escape sequence in string"
				return
			}
			d.i++
		case c < 0x20:
			d.err = "invalid character encountered while parsing JSON string"
			return
		default:
			d.i++
		}
	}
	d.err = "unexpected end of string while parsing JSON string"
}

func (d *xsDecoder) num() {
	digits := func() int {
		n := 0
		for d.i < len(d.s) && d.s[d.i] >= '0' && d.s[d.i] <= '9' {
			d.i++
			n++
		}
		return n
	}
	if d.peek() == '-' {
		d.i++
		if c := d.peek(); c < '0' || c > '9' {
			d.err = "malformed number (no digits after initial minus)"
			return
		}
	}
	if d.peek() == '0' {
		d.i++
		if c := d.peek(); c >= '0' && c <= '9' {
			d.err = "malformed number (leading zero must not be followed by another digit)"
			return
		}
	} else {
		digits()
	}
	if d.peek() == '.' {
		d.i++
		if digits() == 0 {
			d.err = "malformed number (no digits after decimal point)"
			return
		}
	}
	if c := d.peek(); c == 'e' || c == 'E' {
		d.i++
		if c := d.peek(); c == '+' || c == '-' {
			d.i++
		}
		if digits() == 0 {
			d.err = "malformed number (no digits after exp sign)"
		}
	}
}

// cephECPool is ec_parse_and_check and what follows in createpool: a named
// profile must exist (the simulated cluster has none); an EC pool itself
// (data and metadata pools, a new profile) is not modelled.
func cephECPool(ec string) *apiError {
	if ec == "" {
		return nil
	}
	m, _ := parsePropertyString(cephECFormat, "erasure-coding", ec)
	if p, _ := m["profile"].(string); p != "" {
		return die("Erasure code profile '%s' does not exist.\n", p)
	}
	return die("pvesim does not simulate erasure-coded pools")
}

// draidVdev is ZFS.pm's dRAID handling for createzfs: the vdev argument
// of zpool create (draid[N][:<data>d][:<spares>s], zero counts left out)
// and the disks the configuration needs (the level's minimum less two,
// plus data and spares). Other levels return themselves and no minimum.
func draidVdev(level, config string) (string, int) {
	if !strings.HasPrefix(level, "draid") {
		return level, 0
	}
	need := zfsMinDisks[level] - 2
	vdev := level
	if config != "" {
		m, _ := parsePropertyString(draidConfigFormat, "draid-config", config)
		for _, k := range []string{"data", "spares"} {
			s, _ := m[k].(string)
			n, _ := strconv.Atoi(s)
			need += n
			if n != 0 {
				vdev += fmt.Sprintf(":%d%c", n, k[0])
			}
		}
	}
	return vdev, need
}
