package adopt

import (
	"fmt"
	"math/big"
	"reflect"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// generate writes every group as a resource block and its import blocks.
func (r *run) generate() {
	r.linkGroups()
	for _, g := range r.groups {
		if len(g.instances) == 0 {
			continue
		}
		r.writeGroup(g)
	}
}

func (r *run) writeGroup(g *group) {
	objs := make([]map[string]any, len(g.instances))
	for i, in := range g.instances {
		objs[i] = r.configOf(g, in)
	}
	applyRefs(g, objs)
	names := attrNames(objs)
	single := len(g.instances) == 1 && g.instances[0].key == ""

	body := r.file(g.File)
	if len(body.Attributes())+len(body.Blocks()) > 0 {
		body.AppendNewline()
	}
	if g.Comment != "" {
		comment(body, g.Comment)
	}
	if single {
		b := body.AppendNewBlock("resource", []string{g.Type, g.Name}).Body()
		for _, n := range names {
			if v, ok := objs[0][n]; ok {
				setValue(b, n, v)
			}
		}
		r.dependsOn(b, g)
		r.res.Imports = append(r.res.Imports, Import{To: g.address(), ID: g.instances[0].id})
		return
	}

	// An instance at an attribute's default has no value for it; where the
	// attribute varies, its locals entry says the default rather than null.
	fillDefaults(g, names, objs)
	// Values every instance shares are written in the block; the others
	// come from the locals map, one entry per key.
	common := map[string]bool{}
	for _, n := range names {
		common[n] = true
		first, ok := objs[0][n]
		for _, o := range objs {
			v, has := o[n]
			if !has || !ok || !reflect.DeepEqual(v, first) {
				common[n] = false
				break
			}
		}
	}
	nodeIsKey := true
	for i, in := range g.instances {
		if objs[i]["node"] != in.key {
			nodeIsKey = false
		}
	}
	splits := r.splits(g, names, common, objs)
	local := map[string]any{}
	for i, in := range g.instances {
		entry := map[string]any{}
		for _, n := range names {
			if common[n] || (n == "node" && nodeIsKey) || g.Exprs[n] != "" {
				continue
			}
			if s, ok := splits[n]; ok {
				entry[n] = s.parts[i]
				continue
			}
			entry[n] = objs[i][n] // nil (null) where this instance has none
		}
		local[in.key] = entry
	}
	varying := false
	for _, e := range local {
		if m, ok := e.(map[string]any); ok && len(m) > 0 {
			varying = true
		}
	}
	b := body.AppendNewBlock("resource", []string{g.Type, g.Name}).Body()
	if varying {
		setExpr(b, "for_each", "local."+g.Local)
	} else {
		keys := make([]string, 0, len(local))
		for k := range local {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		setExpr(b, "for_each", "toset("+string(hclwrite.TokensForValue(val(keys)).Bytes())+")")
	}
	b.AppendNewline()
	for _, n := range names {
		switch {
		case g.Exprs[n] != "":
			setExpr(b, n, g.Exprs[n])
		case n == "node" && nodeIsKey:
			setExpr(b, n, "each.key")
		case common[n]:
			setValue(b, n, objs[0][n])
		case splits[n] != nil:
			setValue(b, n, splits[n].tmpl)
		default:
			setExpr(b, n, "each.value."+n)
		}
	}
	r.dependsOn(b, g)
	if varying {
		lb := block(r.file(g.File), "locals")
		setValue(lb, g.Local, local)
	}
	for _, in := range g.instances {
		r.res.Imports = append(r.res.Imports, Import{To: fmt.Sprintf("%s[%q]", g.address(), in.key), ID: in.id})
	}
}

func (r *run) dependsOn(b *hclwrite.Body, g *group) {
	var deps []string
	for _, d := range g.DependsOn {
		if o, ok := r.byAddr[d]; ok && len(o.instances) > 0 {
			deps = append(deps, d)
		}
	}
	if len(deps) > 0 {
		setExpr(b, "depends_on", "["+strings.Join(deps, ", ")+"]")
	}
}

// identityAttrs are the attributes that say which object a block is, in
// the order they are written first: where it lives, then what it is.
var identityAttrs = []string{"node", "name", "storage", "type", "who", "target", "vmid", "vm_id", "slot", "sid",
	"group", "rule", "handle", "path", "unit", "iface", "device"}

// attrNames are the attributes any instance sets: the identifying ones
// first (identityAttrs), then the others in alphabetical order.
func attrNames(objs []map[string]any) []string {
	seen := map[string]bool{}
	for _, o := range objs {
		for k := range o {
			seen[k] = true
		}
	}
	var names, rest []string
	for _, k := range identityAttrs {
		if seen[k] {
			names = append(names, k)
		}
	}
	for k := range seen {
		if !contains(identityAttrs, k) {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	return append(names, rest...)
}

// configOf is the configuration of one object: every attribute a
// configuration may set that Read filled, unless it is at its default or
// the group omits it. Sensitive values become variables.
func (r *run) configOf(g *group, in *instance) map[string]any {
	out := map[string]any{}
	for name, spec := range g.specs {
		if !spec.configurable || name == "id" || contains(g.Omit, name) {
			continue
		}
		v, ok := in.state[name]
		if !ok || v.IsNull() || !v.IsKnown() || (spec.def != nil && spec.def.Equal(v)) {
			continue
		}
		if spec.sensitive {
			out[name] = r.sensitive(g, in, name)
			continue
		}
		out[name] = goOf(v, spec.nested)
	}
	return out
}

// sensitive declares (once per group and attribute) a sensitive variable
// holding the attribute (a map by key for a for_each group), and returns
// the reference to it.
func (r *run) sensitive(g *group, in *instance, name string) Expr {
	vname := g.Local + "_" + name
	if !contains(r.res.Variables, vname) {
		r.res.Variables = append(r.res.Variables, vname)
		v := block(r.file("main.tf"), "variable", vname)
		typ, what := "string", ""
		if in.key != "" {
			typ, what = "map(string)", ", by key"
		}
		set(v, "description", fmt.Sprintf("%s of %s%s (sensitive: the adoption never writes it to a file).", name, g.address(), what))
		setExpr(v, "type", typ)
		set(v, "sensitive", true)
	}
	if in.key == "" {
		return Expr("var." + vname)
	}
	return Expr(fmt.Sprintf("var.%s[%q]", vname, in.key))
}

// goOf converts a state value into what val and tokens write; nested
// limits an object to its configurable attributes (nested attributes).
func goOf(v tftypes.Value, nested map[string]*attrSpec) any {
	if v.IsNull() || !v.IsKnown() {
		return nil
	}
	t := v.Type()
	switch {
	case t.Is(tftypes.String):
		var s string
		_ = v.As(&s)
		return s
	case t.Is(tftypes.Bool):
		var b bool
		_ = v.As(&b)
		return b
	case t.Is(tftypes.Number):
		var f big.Float
		_ = v.As(&f)
		if i, acc := f.Int64(); acc == big.Exact {
			return i
		}
		x, _ := f.Float64()
		return x
	case t.Is(tftypes.List{}), t.Is(tftypes.Set{}), t.Is(tftypes.Tuple{}):
		var elems []tftypes.Value
		_ = v.As(&elems)
		out := make([]any, len(elems))
		for i, e := range elems {
			out[i] = goOf(e, nested)
		}
		return out
	case t.Is(tftypes.Map{}):
		var m map[string]tftypes.Value
		_ = v.As(&m)
		out := make(map[string]any, len(m))
		for k, e := range m {
			out[k] = goOf(e, nested)
		}
		return out
	case t.Is(tftypes.Object{}):
		var m map[string]tftypes.Value
		_ = v.As(&m)
		out := map[string]any{}
		for k, e := range m {
			if nested != nil {
				spec, ok := nested[k]
				if !ok || !spec.configurable || e.IsNull() || (spec.def != nil && spec.def.Equal(e)) {
					continue
				}
				out[k] = goOf(e, spec.nested)
				continue
			}
			if !e.IsNull() {
				out[k] = goOf(e, nil)
			}
		}
		return out
	}
	return nil
}
