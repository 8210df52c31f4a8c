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

// describer is what every framework plan modifier type has.
type describer interface {
	Description(context.Context) string
}

// replacing lists the descriptions of modifiers that replace the resource.
func replacing[M describer](ctx context.Context, mods []M) []string {
	var out []string
	for _, m := range mods {
		if d := m.Description(ctx); strings.Contains(d, replaceDescription) {
			out = append(out, d)
		}
	}
	return out
}

func replacingModifiers(ctx context.Context, attr schema.Attribute) []string {
	switch a := attr.(type) {
	case schema.StringAttribute:
		return replacing(ctx, a.PlanModifiers)
	case schema.Int64Attribute:
		return replacing(ctx, a.PlanModifiers)
	case schema.BoolAttribute:
		return replacing(ctx, a.PlanModifiers)
	case schema.Float64Attribute:
		return replacing(ctx, a.PlanModifiers)
	case schema.ListAttribute:
		return replacing(ctx, a.PlanModifiers)
	case schema.SetAttribute:
		return replacing(ctx, a.PlanModifiers)
	case schema.MapAttribute:
		return replacing(ctx, a.PlanModifiers)
	case schema.MapNestedAttribute:
		return append(replacing(ctx, a.PlanModifiers), nestedReplacing(ctx, a.NestedObject.Attributes)...)
	case schema.ListNestedAttribute:
		return append(replacing(ctx, a.PlanModifiers), nestedReplacing(ctx, a.NestedObject.Attributes)...)
	case schema.SingleNestedAttribute:
		return append(replacing(ctx, a.PlanModifiers), nestedReplacing(ctx, a.Attributes)...)
	}
	return nil
}

func nestedReplacing(ctx context.Context, attrs map[string]schema.Attribute) []string {
	var out []string
	for _, na := range attrs {
		out = append(out, replacingModifiers(ctx, na)...)
	}
	return out
}
