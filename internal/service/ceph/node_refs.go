package ceph

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
)

// checkNodeRef refuses, at plan, a create (or a node change) naming a node
// the cluster does not have (GET /nodes, once per command, and the
// standalone_nodes): today PVE's "no such cluster node" comes at apply.
func checkNodeRef(ctx context.Context, pd *framework.ProviderData, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse, what string) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var node types.String
	if resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("node"), &node)...); resp.Diagnostics.HasError() {
		return
	}
	action := "Create"
	if !req.State.Raw.IsNull() {
		var old types.String
		if resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("node"), &old)...); resp.Diagnostics.HasError() || old.Equal(node) {
			return
		}
		action = "Update"
	}
	framework.CheckNodeAtPlan(ctx, pd, node, path.Root("node"), fmt.Sprintf("Unable to %s %s %s", action, what, node.ValueString()), &resp.Diagnostics)
}

var _ resource.ResourceWithModifyPlan = (*managerResource)(nil)

// ModifyPlan checks the manager's node at plan.
func (r *managerResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	checkNodeRef(ctx, r.PD, req, resp, "Ceph manager")
}
