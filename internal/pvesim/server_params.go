package pvesim

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// valueKind is what a parameter value was in Perl after pve-http-server's
// extract_params, when it was not a plain string: check_type refuses a
// reference for any scalar type ("got ARRAY"), except a JSON boolean for a
// boolean, and skips an undefined value as if it were absent.
type valueKind uint8

const (
	kindScalar valueKind = iota
	kindUndef            // a form key without a value ("k" or "k=")
	kindArray            // a repeated form key, or a JSON array
	kindHash             // a JSON object
	kindBool             // JSON true/false: a JSON::PP::Boolean object
)

var perlRef = map[valueKind]string{kindArray: "ARRAY", kindHash: "HASH", kindBool: "JSON::PP::Boolean"}

var typeNames = map[ptype]string{tString: "string", tInteger: "integer", tBoolean: "boolean", tNumber: "number"}

// perlSplit is Perl's split on a one-character class: trailing empty
// fields are dropped.
func perlSplit(s string, seps string) []string {
	var parts []string
	start := 0
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(seps, s[i]) >= 0 {
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	parts = append(parts, s[start:])
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// perlUnescape is decode_urlencoded's unescaping: '+' is a space, %XX a
// byte, anything else (a lone '%') stays.
func perlUnescape(s string) string {
	if !strings.ContainsAny(s, "+%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '+':
			b.WriteByte(' ')
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			n, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			b.WriteByte(byte(n))
			i += 2
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// decodeURLEncoded is pve-http-server's decode_urlencoded: pairs split at
// '&' or ';', key and value at the first two '='-separated fields; a key
// without a value is undefined (and resets an earlier value), a repeated
// key becomes an array. into receives the first value of an array.
func decodeURLEncoded(data string, into map[string]string, kinds map[string]valueKind) {
	vals := map[string]string{}
	kind := map[string]valueKind{}
	for _, kv := range perlSplit(data, "&;") {
		fields := perlSplit(kv, "=")
		k := ""
		if len(fields) > 0 {
			k = perlUnescape(fields[0])
		}
		if len(fields) < 2 {
			vals[k], kind[k] = "", kindUndef
			continue
		}
		v := perlUnescape(fields[1])
		if old, ok := kind[k]; ok && old != kindUndef {
			kind[k] = kindArray // keep the first value for the handler
			continue
		}
		vals[k], kind[k] = v, kindScalar
	}
	for k, v := range vals {
		into[k] = v
		if kind[k] == kindScalar {
			delete(kinds, k)
		} else {
			kinds[k] = kind[k]
		}
	}
}

// jsonParam stores one decoded JSON body value: strings as they are,
// numbers as Perl stringifies what JSON::XS decoded, booleans as 1/0 marked
// JSON::PP::Boolean, arrays and objects marked as references.
func jsonParam(k string, v any, into map[string]string, kinds map[string]valueKind) {
	switch x := v.(type) {
	case bool:
		into[k], kinds[k] = "0", kindBool
		if x {
			into[k] = "1"
		}
	case json.Number:
		into[k] = perlNumber(x.String())
	case string:
		into[k] = x
	default:
		b, _ := json.Marshal(x)
		into[k] = string(b)
		kinds[k] = kindHash
		if _, ok := x.([]any); ok {
			kinds[k] = kindArray
		}
	}
}

// perlNumber is a JSON number as JSON::XS decodes it and Perl prints it:
// an integer that fits stays as written (digits only), one that does not
// is kept as its digits, a fraction or exponent becomes a double printed
// with %.15g (5.0 is "5").
func perlNumber(s string) string {
	if !strings.ContainsAny(s, ".eE") {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return strconv.FormatInt(n, 10)
		}
		if n, err := strconv.ParseUint(s, 10, 64); err == nil {
			return strconv.FormatUint(n, 10)
		}
		return s
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	return strconv.FormatFloat(f, 'g', 15, 64)
}

// checkKind is check_type for a value that was not a plain string; handled
// is true when it decided (a JSON boolean for a boolean passes and is not
// checked further).
func (p param) checkKind(kind valueKind) (msg string, handled bool) {
	switch kind {
	case kindScalar:
		return "", false
	case kindUndef:
		if !p.optional {
			return "property is missing and it is not optional", true
		}
		return "", true
	case kindBool:
		if p.typ == tBoolean {
			return "", true
		}
	}
	return fmt.Sprintf("type check ('%s') failed - got %s", typeNames[p.typ], perlRef[kind]), true
}
