package framework

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

func TestUpdateTimeoutsOnlyKeepsStateAndTakesPlannedTimeouts(t *testing.T) {
	ctx := context.Background()
	s := schema.Schema{
		Attributes: map[string]schema.Attribute{"fingerprint": schema.StringAttribute{Computed: true}},
		Blocks:     map[string]schema.Block{"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Delete: true})},
	}
	typ := s.Type().TerraformType(ctx)
	tt := typ.(tftypes.Object).AttributeTypes["timeouts"]
	value := func(fp, create string) tftypes.Value {
		return tftypes.NewValue(typ, map[string]tftypes.Value{
			"fingerprint": tftypes.NewValue(tftypes.String, fp),
			"timeouts": tftypes.NewValue(tt, map[string]tftypes.Value{
				"create": tftypes.NewValue(tftypes.String, create),
				"delete": tftypes.NewValue(tftypes.String, nil),
			}),
		})
	}
	req := resource.UpdateRequest{
		Plan:  tfsdk.Plan{Schema: s, Raw: value("AA:BB (planned, unknown to PVE)", "30m")},
		State: tfsdk.State{Schema: s, Raw: value("AA:BB", "10m")},
	}
	resp := resource.UpdateResponse{State: tfsdk.State{Schema: s, Raw: value("", "")}}
	UpdateTimeoutsOnly(ctx, req, &resp)
	if resp.Diagnostics.HasError() {
		t.Fatal(resp.Diagnostics)
	}
	var fp, create string
	resp.Diagnostics.Append(resp.State.GetAttribute(ctx, path.Root("fingerprint"), &fp)...)
	resp.Diagnostics.Append(resp.State.GetAttribute(ctx, path.Root("timeouts").AtName("create"), &create)...)
	if resp.Diagnostics.HasError() {
		t.Fatal(resp.Diagnostics)
	}
	if fp != "AA:BB" || create != "30m" {
		t.Fatalf("state after update: fingerprint %q (want the prior AA:BB), timeouts.create %q (want the planned 30m)", fp, create)
	}
}
