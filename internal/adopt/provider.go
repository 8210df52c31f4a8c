package adopt

import (
	"context"
	"fmt"
	"math/big"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/pvelab/terraform-provider-pve/internal/provider"
)

// reader imports objects through the provider itself, in-process and
// read-only: each object's state is what the resource's own ImportState and
// Read produce, so the configuration written from it plans no change by
// construction (where Read is right; the adoption tests check it is).
type reader struct {
	server  tfprotov6.ProviderServer
	types   map[string]tftypes.Type // resource type -> its state type
	schemas map[string]resource.Resource
}

// newReader starts the read-only provider and configures it with cfg
// (attribute name -> value of the provider's configuration).
func newReader(ctx context.Context, cfg map[string]any) (*reader, error) {
	server, err := provider.Server(provider.NewReadOnly("adopt", allowSSH))()
	if err != nil {
		return nil, err
	}
	sch, err := server.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		return nil, err
	}
	if err := diagErr(sch.Diagnostics); err != nil {
		return nil, err
	}
	rd := &reader{server: server, types: map[string]tftypes.Type{}, schemas: map[string]resource.Resource{}}
	for name, s := range sch.ResourceSchemas {
		rd.types[name] = s.ValueType()
	}
	for _, f := range provider.NewReadOnly("adopt", allowSSH)().Resources(ctx) {
		res := f()
		var md resource.MetadataResponse
		res.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "pve"}, &md)
		rd.schemas[md.TypeName] = res
	}

	ptype, ok := sch.Provider.ValueType().(tftypes.Object)
	if !ok {
		return nil, fmt.Errorf("the provider's configuration is not an object")
	}
	cv, err := objectValue(ptype, cfg)
	if err != nil {
		return nil, fmt.Errorf("provider configuration: %w", err)
	}
	dv, err := tfprotov6.NewDynamicValue(ptype, cv)
	if err != nil {
		return nil, err
	}
	cr, err := server.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{TerraformVersion: "1.5.0", Config: &dv})
	if err != nil {
		return nil, err
	}
	if err := diagErr(cr.Diagnostics); err != nil {
		return nil, err
	}
	return rd, nil
}

// read imports one object with its import ID and reads it, as `terraform
// plan` does for an import block. It returns the object's state, or
// (nil, nil) when Read found no object.
func (rd *reader) read(ctx context.Context, typ, id string) (map[string]tftypes.Value, error) {
	t, ok := rd.types[typ]
	if !ok {
		return nil, fmt.Errorf("the provider has no resource %s", typ)
	}
	ir, err := rd.server.ImportResourceState(ctx, &tfprotov6.ImportResourceStateRequest{TypeName: typ, ID: id})
	if err != nil {
		return nil, err
	}
	if err := diagErr(ir.Diagnostics); err != nil {
		return nil, fmt.Errorf("import %s %q: %w", typ, id, err)
	}
	if len(ir.ImportedResources) != 1 {
		return nil, fmt.Errorf("import %s %q: %d objects imported, want 1", typ, id, len(ir.ImportedResources))
	}
	imp := ir.ImportedResources[0]
	rr, err := rd.server.ReadResource(ctx, &tfprotov6.ReadResourceRequest{TypeName: typ, CurrentState: imp.State, Private: imp.Private})
	if err != nil {
		return nil, err
	}
	if err := diagErr(rr.Diagnostics); err != nil {
		return nil, fmt.Errorf("read %s %q: %w", typ, id, err)
	}
	if rr.NewState == nil {
		return nil, nil
	}
	v, err := rr.NewState.Unmarshal(t)
	if err != nil {
		return nil, err
	}
	if v.IsNull() {
		return nil, nil
	}
	var m map[string]tftypes.Value
	if err := v.As(&m); err != nil {
		return nil, err
	}
	return m, nil
}

func diagErr(ds []*tfprotov6.Diagnostic) error {
	var msgs []string
	for _, d := range ds {
		if d.Severity == tfprotov6.DiagnosticSeverityError {
			msgs = append(msgs, strings.TrimSpace(d.Summary+": "+d.Detail))
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return fmt.Errorf("%s", strings.Join(msgs, "\n"))
}

// objectValue builds a value of object type t from vals (Go strings,
// bools, ints, map[string]any for nested objects); attributes not in vals
// are null, as in a configuration that leaves them out.
func objectValue(t tftypes.Object, vals map[string]any) (tftypes.Value, error) {
	out := map[string]tftypes.Value{}
	for name, at := range t.AttributeTypes {
		v, ok := vals[name]
		if !ok || v == nil {
			out[name] = tftypes.NewValue(at, nil)
			continue
		}
		cv, err := goValue(at, v)
		if err != nil {
			return tftypes.Value{}, fmt.Errorf("%s: %w", name, err)
		}
		out[name] = cv
	}
	for name := range vals {
		if _, ok := t.AttributeTypes[name]; !ok {
			return tftypes.Value{}, fmt.Errorf("no attribute %s", name)
		}
	}
	return tftypes.NewValue(t, out), nil
}

func goValue(t tftypes.Type, v any) (tftypes.Value, error) {
	switch tt := t.(type) {
	case tftypes.Object:
		m, ok := v.(map[string]any)
		if !ok {
			return tftypes.Value{}, fmt.Errorf("want an object, got %T", v)
		}
		return objectValue(tt, m)
	case tftypes.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return tftypes.Value{}, fmt.Errorf("want a map, got %T", v)
		}
		out := map[string]tftypes.Value{}
		for k, e := range m {
			ev, err := goValue(tt.ElementType, e)
			if err != nil {
				return tftypes.Value{}, fmt.Errorf("%s: %w", k, err)
			}
			out[k] = ev
		}
		return tftypes.NewValue(t, out), nil
	case tftypes.List:
		// A single nested block arrives as a list of one in some schemas.
		ev, err := goValue(tt.ElementType, v)
		if err != nil {
			return tftypes.Value{}, err
		}
		return tftypes.NewValue(t, []tftypes.Value{ev}), nil
	}
	switch x := v.(type) {
	case string, bool:
		return tftypes.NewValue(t, x), nil
	case int:
		return tftypes.NewValue(t, new(big.Float).SetInt64(int64(x))), nil
	}
	return tftypes.Value{}, fmt.Errorf("cannot convert %T to %s", v, t)
}
