package adopt

import (
	"context"
	"fmt"
	"math/big"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Group is one resource block of the generated configuration: every object
// of one resource type an area adopts under one name. With keys it is a
// for_each over a locals map; a single object without a key is a plain
// block.
type Group struct {
	File string // generated file, such as "ceph.tf"
	Type string // resource type, such as "pve_ceph_osd"
	Name string // resource name, such as "lab"
	// Local names the locals map of a for_each group (default
	// <type without pve_>_<name>).
	Local string
	// Comment is written above the block.
	Comment string
	// DependsOn are other groups' addresses (type.name); kept when that
	// group is generated too.
	DependsOn []string
	// Omit are attributes not written even when Read fills them: ones
	// that conflict with another attribute the configuration sets.
	Omit []string
	// Exprs are attributes a for_each block writes as an expression
	// instead of a value, such as vmid = tonumber(each.key) or a reference
	// to another group's instance; the area makes sure the expression
	// evaluates to what Read filled. A plain block writes the value.
	Exprs map[string]string
	// Split are map or object attributes of a for_each group written in
	// the block as the structure all instances share, only the values
	// that differ taken from the locals map (each.value.<attr>.<key>...),
	// instead of the whole value per instance. Where the instances' keys
	// differ, the whole value comes from the locals map as usual.
	Split []string
}

// State is an adopted object's state as the resource's Read left it.
type State map[string]tftypes.Value

// String returns a string attribute ("" when null or not a string).
func (s State) String(name string) string {
	var out string
	if v, ok := s[name]; ok && v.IsKnown() && !v.IsNull() && v.Type().Is(tftypes.String) {
		_ = v.As(&out)
	}
	return out
}

// Bool returns a bool attribute (false when null).
func (s State) Bool(name string) bool {
	var out bool
	if v, ok := s[name]; ok && v.IsKnown() && !v.IsNull() && v.Type().Is(tftypes.Bool) {
		_ = v.As(&out)
	}
	return out
}

// Int returns a number attribute (0 when null).
func (s State) Int(name string) int64 {
	if v, ok := s[name]; ok && v.IsKnown() && !v.IsNull() && v.Type().Is(tftypes.Number) {
		var f big.Float
		if v.As(&f) == nil {
			i, _ := f.Int64()
			return i
		}
	}
	return 0
}

type group struct {
	Group
	refs      map[string]map[string]Expr // linkGroups: attribute -> map key -> reference
	specs     map[string]*attrSpec
	instances []*instance
}

type instance struct {
	key, id string
	state   State
}

func (g *group) address() string { return g.Type + "." + g.Name }

// add imports and reads the object with import ID id and adds it to group
// g under key ("" for a group of one). It returns the object's state, or
// nil when Read found no object (nothing is added then).
func (r *run) add(ctx context.Context, g Group, key, id string) (State, error) {
	st, err := r.read(ctx, g.Type, id)
	if err != nil || st == nil {
		return nil, err
	}
	return st, r.addState(ctx, g, key, id, st)
}

// read imports and reads the object of type typ with import ID id without
// adding it: for an area that decides from the state whether the
// configuration can express the object as it is (then addState adds it,
// without reading it again). nil when Read found no object.
func (r *run) read(ctx context.Context, typ, id string) (State, error) {
	st, err := r.rd.read(ctx, typ, id)
	if err != nil || st == nil {
		return nil, err
	}
	return st, nil
}

// addState adds an object read with r.read to group g under key.
func (r *run) addState(ctx context.Context, g Group, key, id string, st State) error {
	addr := g.Type + "." + g.Name
	grp, ok := r.byAddr[addr]
	if !ok {
		res, ok := r.rd.schemas[g.Type]
		if !ok {
			return fmt.Errorf("the provider has no resource %s", g.Type)
		}
		if g.Local == "" {
			g.Local = strings.TrimPrefix(g.Type, "pve_") + "_" + g.Name
		}
		grp = &group{Group: g, specs: specsOf(ctx, res)}
		r.byAddr[addr] = grp
		r.groups = append(r.groups, grp)
	}
	for _, in := range grp.instances {
		if in.key == key {
			return fmt.Errorf("%s: key %q twice", addr, key)
		}
	}
	grp.instances = append(grp.instances, &instance{key: key, id: id, state: st})
	return nil
}
