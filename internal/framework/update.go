package framework

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// UpdateTimeoutsOnly is Update for resources whose other attributes either
// replace the resource or are refused in ModifyPlan: it keeps what PVE
// reported (the prior state) and takes only the planned `timeouts` block.
func UpdateTimeoutsOnly(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var planned timeouts.Value
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("timeouts"), &planned)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.State.Raw = req.State.Raw.Copy()
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("timeouts"), planned)...)
}
