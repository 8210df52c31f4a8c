package pve

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
)

// Datacenter options (/etc/pve/datacenter.cfg). PUT takes property strings
// ("secure,network=10.0.0.0/24"); GET returns most of them parsed into JSON
// objects ({"type":"secure","network":"10.0.0.0/24"}), except bwlimit,
// which PVE returns as the string it stored. Values inside objects are
// strings, booleans come as 1/0. GET always reports mac_prefix (BC:24:11
// unless set) and description ("" or each line followed by "\n").

// ClusterOptions is GET /cluster/options, kept raw so that options this
// client does not model survive, with typed accessors.
type ClusterOptions struct {
	Raw map[string]json.RawMessage
}

// Has reports whether PVE returned key.
func (o *ClusterOptions) Has(key string) bool {
	_, ok := o.Raw[key]
	return ok
}

// String returns a plain option as text ("" when absent). Numbers and
// booleans come back as their literal text.
func (o *ClusterOptions) String(key string) string {
	var s flexString
	if raw, ok := o.Raw[key]; ok && json.Unmarshal(raw, &s) == nil {
		return string(s)
	}
	return ""
}

// Object returns a property-string option as key/value pairs, nil when
// absent. It accepts both the parsed object PVE returns for most options
// and the raw property string it returns for some (bwlimit); for a raw
// string, a part without "=" is stored under defaultKey.
func (o *ClusterOptions) Object(key, defaultKey string) map[string]string {
	raw, ok := o.Raw[key]
	if !ok {
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err == nil && obj != nil {
		out := make(map[string]string, len(obj))
		for k, v := range obj {
			var s flexString
			if json.Unmarshal(v, &s) == nil {
				out[k] = string(s)
				continue
			}
			var list []string // user-allow-list comes as an array
			if json.Unmarshal(v, &list) == nil {
				out[k] = strings.Join(list, ";")
			}
		}
		return out
	}
	var s flexString
	if json.Unmarshal(raw, &s) != nil || s == "" {
		return nil
	}
	return ParsePropertyString(defaultKey, string(s))
}

// ClusterOptions reads the datacenter options.
//
//pve:operation GET /cluster/options
func (c *Client) ClusterOptions(ctx context.Context) (*ClusterOptions, error) {
	var raw map[string]json.RawMessage
	if err := c.Get(ctx, "/cluster/options", nil, &raw); err != nil {
		return nil, err
	}
	if raw == nil {
		raw = map[string]json.RawMessage{}
	}
	return &ClusterOptions{Raw: raw}, nil
}

// UpdateClusterOptions sets options (values already rendered as PVE
// expects them, property strings included) and deletes the options named
// in del, in one PUT. PVE applies the deletions after the sets.
//
//pve:operation PUT /cluster/options
func (c *Client) UpdateClusterOptions(ctx context.Context, set map[string]string, del []string) error {
	p := Params{}
	for k, v := range set {
		p.Set(k, v)
	}
	sorted := append([]string(nil), del...)
	sort.Strings(sorted)
	p.Delete(sorted...)
	if len(p) == 0 {
		return nil
	}
	return c.Put(ctx, "/cluster/options", p, nil)
}

// FormatPropertyString renders kv as a PVE property string: the value of
// defaultKey first without "key=", then the other keys sorted. Empty values
// are left out. defaultKey may be "" when the format has none.
func FormatPropertyString(defaultKey string, kv map[string]string) string {
	keys := make([]string, 0, len(kv))
	for k, v := range kv {
		if k != defaultKey && v != "" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys)+1)
	if v := kv[defaultKey]; defaultKey != "" && v != "" {
		if strings.Contains(v, "=") {
			v = defaultKey + "=" + v // bare, it would read as a key
		}
		parts = append(parts, v)
	}
	for _, k := range keys {
		parts = append(parts, k+"="+kv[k])
	}
	return strings.Join(parts, ",")
}

// ParsePropertyString splits a property string into key/value pairs; a part
// without "=" is the value of defaultKey.
func ParsePropertyString(defaultKey, s string) map[string]string {
	out := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if k, v, ok := strings.Cut(part, "="); ok {
			out[k] = v
		} else if defaultKey != "" {
			out[defaultKey] = part
		}
	}
	return out
}
