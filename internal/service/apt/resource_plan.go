package apt

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
)

var _ resource.ResourceWithModifyPlan = (*repoResource)(nil)

// ModifyPlan checks at plan what the apply would otherwise find missing
// (issue #13): the node, a standard repository handle the node does not
// offer (PVE's standard-repos of GET /nodes/{node}/apt/repositories), and
// an entry path/index the node does not have (unless a pve_node_file of
// the plan writes that file). The read is the one Read uses, cached.
func (r *repoResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || r.PD == nil || r.PD.Client == nil {
		return
	}
	if framework.PlanCheckNodeAttr(ctx, r.PD, req, resp, typeName); resp.Diagnostics.HasError() {
		return
	}
	var plan repoModel
	if req.Plan.Get(ctx, &plan).HasError() || plan.Node.IsUnknown() || plan.Handle.IsUnknown() {
		return
	}
	if !req.State.Raw.IsNull() {
		var prior repoModel
		if !req.State.Get(ctx, &prior).HasError() && prior.Node.Equal(plan.Node) && prior.Handle.Equal(plan.Handle) &&
			(!plan.Handle.IsNull() || prior.Path.Equal(plan.Path) && prior.Index.Equal(plan.Index)) {
			return // the same repository: it was checked when planned
		}
	}
	node := plan.Node.ValueString()
	c, err := r.PD.NodeClient(ctx, node)
	if err != nil {
		return
	}
	repos, err := r.read(ctx, c, node)
	if err != nil {
		return // the apply meets the real error
	}
	if !plan.Handle.IsNull() && plan.Handle.ValueString() != "" {
		handle := plan.Handle.ValueString()
		if repos.Standard(handle) == nil {
			resp.Diagnostics.AddAttributeError(path.Root("handle"),
				fmt.Sprintf("Unable to plan %s %s/%s: node %s offers no standard repository %s", typeName, node, handle, node, handle),
				fmt.Sprintf("Node %s offers no standard repository %q; it offers: %s (GET /nodes/%s/apt/repositories, standard-repos, "+
					"for the node's release). Set handle to one of those (Ceph handles name the Ceph release the node's PVE ships), "+
					"or manage a repository PVE does not know by path and index.", node, handle, handleList(repos), node))
		}
		return
	}
	if plan.Path.IsNull() || plan.Index.IsNull() || plan.Path.IsUnknown() || plan.Index.IsUnknown() {
		return
	}
	p, idx := plan.Path.ValueString(), plan.Index.ValueInt64()
	if _, ok := entryAt(repos, p, idx); ok {
		return
	}
	if _, ok := r.PD.PlanNoted(framework.PlannedFiles, node+":"+p); ok {
		return
	}
	resp.Diagnostics.AddAttributeError(path.Root("index"),
		fmt.Sprintf("Unable to plan %s %s/%s:%d: node %s has no such APT entry", typeName, node, p, idx, node),
		fmt.Sprintf("Node %s has no APT entry %d in %s; it has: %s. (path = %q, index = %d.) Use one of those, or write "+
			"the file with a pve_node_file and refer to it (path = pve_node_file.<name>.path) so that Terraform writes it first.",
			node, idx, p, describeFiles(repos), p, idx))
}
