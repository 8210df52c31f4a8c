package pve

import (
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// Params holds request parameters. PVE reads GET/DELETE parameters from the
// query string and POST/PUT parameters from a form body; the client chooses
// the right place, so callers only fill the map.
//
// Use Params{} (not a nil Params) before calling the setters.
type Params map[string]string

// Set sets k to v.
func (p Params) Set(k, v string) { p[k] = v }

// SetBool sets k to "1" or "0". PVE's schema check accepts only 0/1 (or JSON
// booleans) at the top level; "true"/"false" fail with a type error.
func (p Params) SetBool(k string, v bool) {
	if v {
		p[k] = "1"
	} else {
		p[k] = "0"
	}
}

// SetInt sets k to the decimal form of v.
func (p Params) SetInt(k string, v int64) { p[k] = strconv.FormatInt(v, 10) }

// Delete adds keys to PVE's comma-separated "delete" parameter, which removes
// options on update. Duplicates are dropped and order is kept.
func (p Params) Delete(keys ...string) {
	var cur []string
	if s := p["delete"]; s != "" {
		cur = strings.Split(s, ",")
	}
	seen := make(map[string]bool, len(cur)+len(keys))
	for _, k := range cur {
		seen[k] = true
	}
	for _, k := range keys {
		k = strings.TrimSpace(k)
		if k == "" || seen[k] {
			continue
		}
		seen[k] = true
		cur = append(cur, k)
	}
	if len(cur) > 0 {
		p["delete"] = strings.Join(cur, ",")
	}
}

// Encode returns the URL-encoded form sorted by key, so requests are
// deterministic (contract tests compare them byte for byte).
func (p Params) Encode() string {
	if len(p) == 0 {
		return ""
	}
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(k))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(p[k]))
	}
	return b.String()
}

// PathEscape escapes one path segment (node name, interface name, UPID...).
// Build paths only from escaped segments: a UPID contains ':' and '@', and
// user input must not be able to change the path.
func PathEscape(seg string) string { return url.PathEscape(seg) }
