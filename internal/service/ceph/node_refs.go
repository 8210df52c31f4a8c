package ceph

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
)

var _ resource.ResourceWithModifyPlan = (*managerResource)(nil)

// ModifyPlan refuses, at plan, a create (or a node change) naming a node
// the cluster does not have: PVE's "no such cluster node" comes at apply.
func (r *managerResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	framework.PlanCheckNodeAttr(ctx, r.PD, req, resp, managerTypeName)
}
