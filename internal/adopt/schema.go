package adopt

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/defaults"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// attrSpec is what the generator needs to know of one attribute of a
// resource's schema: whether a configuration may set it, its default (an
// attribute at its default is left out, as a user would), whether it is
// sensitive (a variable, never a literal), and for nested attributes the
// same for their attributes.
type attrSpec struct {
	configurable bool // Required or Optional
	sensitive    bool
	def          *tftypes.Value
	nested       map[string]*attrSpec // nested attributes' object
}

// specsOf reads a resource's schema.
func specsOf(ctx context.Context, res resource.Resource) map[string]*attrSpec {
	var resp resource.SchemaResponse
	res.Schema(ctx, resource.SchemaRequest{}, &resp)
	return specs(ctx, resp.Schema.Attributes)
}

func specs(ctx context.Context, attrs map[string]schema.Attribute) map[string]*attrSpec {
	out := make(map[string]*attrSpec, len(attrs))
	for name, a := range attrs {
		s := &attrSpec{configurable: a.IsRequired() || a.IsOptional(), sensitive: a.IsSensitive()}
		var def attr.Value
		switch x := a.(type) {
		case schema.StringAttribute:
			if x.Default != nil {
				var r defaults.StringResponse
				x.Default.DefaultString(ctx, defaults.StringRequest{}, &r)
				def = r.PlanValue
			}
		case schema.BoolAttribute:
			if x.Default != nil {
				var r defaults.BoolResponse
				x.Default.DefaultBool(ctx, defaults.BoolRequest{}, &r)
				def = r.PlanValue
			}
		case schema.Int64Attribute:
			if x.Default != nil {
				var r defaults.Int64Response
				x.Default.DefaultInt64(ctx, defaults.Int64Request{}, &r)
				def = r.PlanValue
			}
		case schema.Float64Attribute:
			if x.Default != nil {
				var r defaults.Float64Response
				x.Default.DefaultFloat64(ctx, defaults.Float64Request{}, &r)
				def = r.PlanValue
			}
		case schema.ListAttribute:
			if x.Default != nil {
				var r defaults.ListResponse
				x.Default.DefaultList(ctx, defaults.ListRequest{}, &r)
				def = r.PlanValue
			}
		case schema.SetAttribute:
			if x.Default != nil {
				var r defaults.SetResponse
				x.Default.DefaultSet(ctx, defaults.SetRequest{}, &r)
				def = r.PlanValue
			}
		case schema.MapAttribute:
			if x.Default != nil {
				var r defaults.MapResponse
				x.Default.DefaultMap(ctx, defaults.MapRequest{}, &r)
				def = r.PlanValue
			}
		case schema.SingleNestedAttribute:
			s.nested = specs(ctx, x.Attributes)
			if x.Default != nil {
				var r defaults.ObjectResponse
				x.Default.DefaultObject(ctx, defaults.ObjectRequest{}, &r)
				def = r.PlanValue
			}
		case schema.ListNestedAttribute:
			s.nested = specs(ctx, x.NestedObject.Attributes)
			if x.Default != nil {
				var r defaults.ListResponse
				x.Default.DefaultList(ctx, defaults.ListRequest{}, &r)
				def = r.PlanValue
			}
		case schema.SetNestedAttribute:
			s.nested = specs(ctx, x.NestedObject.Attributes)
			if x.Default != nil {
				var r defaults.SetResponse
				x.Default.DefaultSet(ctx, defaults.SetRequest{}, &r)
				def = r.PlanValue
			}
		case schema.MapNestedAttribute:
			s.nested = specs(ctx, x.NestedObject.Attributes)
			if x.Default != nil {
				var r defaults.MapResponse
				x.Default.DefaultMap(ctx, defaults.MapRequest{}, &r)
				def = r.PlanValue
			}
		}
		if def != nil {
			if tv, err := def.ToTerraformValue(ctx); err == nil {
				s.def = &tv
			}
		}
		out[name] = s
	}
	return out
}
