package adopt

import (
	"fmt"
	"reflect"
	"sort"

	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// fillDefaults gives every instance that has no value for one of names
// (it is at its schema default) that default, so that a varying attribute
// reads `enabled = true` in the locals map rather than null.
func fillDefaults(g *group, names []string, objs []map[string]any) {
	for _, n := range names {
		spec := g.specs[n]
		if spec == nil || spec.def == nil {
			continue
		}
		for _, o := range objs {
			if _, ok := o[n]; !ok {
				o[n] = goOf(*spec.def, spec.nested)
			}
		}
	}
}

// split is a Group.Split attribute as written: the block's value (Exprs
// where instances differ) and each instance's differing values.
type split struct {
	tmpl  any
	parts []any
}

// splits are the Split attributes of g that vary and whose instances have
// the same keys at the top.
func (r *run) splits(g *group, names []string, common map[string]bool, objs []map[string]any) map[string]*split {
	out := map[string]*split{}
	for _, n := range names {
		if common[n] || !contains(g.Split, n) {
			continue
		}
		vals := make([]any, len(objs))
		for i, o := range objs {
			vals[i] = o[n]
		}
		if _, ok := sameKeys(vals); !ok {
			continue
		}
		tmpl, parts := splitValue(vals, "each.value."+n)
		out[n] = &split{tmpl: tmpl, parts: parts}
	}
	return out
}

// splitValue splits the instances' values vals (one per instance) at ref:
// equal values stay literal (parts nil); maps with the same keys are split
// key by key; anything else is ref, each instance's value its part.
func splitValue(vals []any, ref string) (any, []any) {
	equal := true
	for _, v := range vals[1:] {
		equal = equal && reflect.DeepEqual(v, vals[0])
	}
	if equal {
		return vals[0], nil
	}
	keys, ok := sameKeys(vals)
	if !ok {
		return Expr(ref), vals
	}
	tmpl := map[string]any{}
	parts := make([]any, len(vals))
	for i := range parts {
		parts[i] = map[string]any{}
	}
	for _, k := range keys {
		sub := make([]any, len(vals))
		for i, v := range vals {
			if m, ok := v.(map[string]any); ok {
				sub[i] = m[k]
			}
		}
		t, p := splitValue(sub, ref+keyRef(k))
		tmpl[k] = t
		for i := range p {
			if m, ok := parts[i].(map[string]any); ok {
				m[k] = p[i]
			}
		}
	}
	return tmpl, parts
}

// sameKeys returns the keys of vals when every one is a map with the same
// keys (sorted).
func sameKeys(vals []any) ([]string, bool) {
	var keys []string
	for i, v := range vals {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if i == 0 {
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			continue
		}
		if len(m) != len(keys) {
			return nil, false
		}
		for _, k := range keys {
			if _, ok := m[k]; !ok {
				return nil, false
			}
		}
	}
	return keys, true
}

// keyRef is the traversal of map key k: .k, or ["k"] where k is not an
// identifier (bridge0.60).
func keyRef(k string) string {
	if hclsyntax.ValidIdentifier(k) {
		return "." + k
	}
	return fmt.Sprintf("[%q]", k)
}
