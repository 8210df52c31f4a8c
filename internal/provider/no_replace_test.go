package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
)

// dataHolders are the resources whose replacement would destroy data
// (volumes, OSDs, pools, storage contents): an attribute change must update
// them in place or be refused at plan, never replace them.
var dataHolders = map[string]bool{
	"pve_vm": true, "pve_vm_disk": true, "pve_storage": true, "pve_node_lvmthin": true, "pve_node_zfs": true,
	"pve_ceph_osd": true, "pve_ceph_pool": true, "pve_ceph_cluster": true,
}

// replaceDescription is how the framework's RequiresReplace* modifiers
// describe themselves.
const replaceDescription = "destroy and recreate"

// No attribute of a data-holding resource carries a RequiresReplace plan
// modifier, so no plan can replace one for an attribute change.
func TestDataHoldingResourcesNeverRequireReplace(t *testing.T) {
	ctx := context.Background()
	p := New("test")()
	seen := map[string]bool{}
	for _, newResource := range p.Resources(ctx) {
		r := newResource()
		var meta resource.MetadataResponse
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "pve"}, &meta)
		if !dataHolders[meta.TypeName] {
			continue
		}
		seen[meta.TypeName] = true
		var sr resource.SchemaResponse
		r.Schema(ctx, resource.SchemaRequest{}, &sr)
		for name, attr := range sr.Schema.Attributes {
			for _, d := range replacingModifiers(ctx, attr) {
				t.Errorf("%s.%s has a plan modifier that replaces the resource: %q", meta.TypeName, name, d)
			}
		}
	}
	for typ := range dataHolders {
		if !seen[typ] {
			t.Errorf("%s is not registered (renamed? update dataHolders)", typ)
		}
	}
}

func replacingModifiers(ctx context.Context, attr schema.Attribute) []string {
	var descs []string
	add := func(d string) {
		if strings.Contains(d, replaceDescription) {
			descs = append(descs, d)
		}
	}
	switch a := attr.(type) {
	case schema.StringAttribute:
		for _, m := range a.PlanModifiers {
			add(m.Description(ctx))
		}
	case schema.Int64Attribute:
		for _, m := range a.PlanModifiers {
			add(m.Description(ctx))
		}
	case schema.BoolAttribute:
		for _, m := range a.PlanModifiers {
			add(m.Description(ctx))
		}
	case schema.Float64Attribute:
		for _, m := range a.PlanModifiers {
			add(m.Description(ctx))
		}
	case schema.ListAttribute:
		for _, m := range a.PlanModifiers {
			add(m.Description(ctx))
		}
	case schema.SetAttribute:
		for _, m := range a.PlanModifiers {
			add(m.Description(ctx))
		}
	case schema.MapAttribute:
		for _, m := range a.PlanModifiers {
			add(m.Description(ctx))
		}
	case schema.MapNestedAttribute:
		for _, m := range a.PlanModifiers {
			add(m.Description(ctx))
		}
		for _, na := range a.NestedObject.Attributes {
			descs = append(descs, replacingModifiers(ctx, na)...)
		}
	case schema.ListNestedAttribute:
		for _, m := range a.PlanModifiers {
			add(m.Description(ctx))
		}
		for _, na := range a.NestedObject.Attributes {
			descs = append(descs, replacingModifiers(ctx, na)...)
		}
	case schema.SingleNestedAttribute:
		for _, m := range a.PlanModifiers {
			add(m.Description(ctx))
		}
		for _, na := range a.Attributes {
			descs = append(descs, replacingModifiers(ctx, na)...)
		}
	}
	return descs
}
