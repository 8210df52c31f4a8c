package storage

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
)

// rbdDefaultPool is RBDPlugin's default pool when none is given.
const rbdDefaultPool = "rbd"

// checkRefs checks at plan what the storage refers to: the nodes it is
// limited to, and for an rbd storage of the cluster's own Ceph (no
// monhost) the pool. PVE accepts both unchecked, so today such a storage
// is created and then never works (issue #13).
func (r *storageResource) checkRefs(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || r.PD == nil || r.PD.Client == nil {
		return
	}
	var plan storageModel
	if resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...); resp.Diagnostics.HasError() {
		return
	}
	var state *storageModel
	if !req.State.Raw.IsNull() {
		state = &storageModel{}
		if resp.Diagnostics.Append(req.State.Get(ctx, state)...); resp.Diagnostics.HasError() {
			return
		}
	}
	action := "Create"
	if state != nil {
		action = "Update"
	}
	summary := fmt.Sprintf("Unable to %s storage %s", action, plan.Storage.ValueString())
	for _, n := range setStrings(ctx, plan.Nodes) {
		framework.PlanCheckNode(ctx, r.PD, types.StringValue(n), path.Root("nodes"), storageTypeName, &resp.Diagnostics)
	}
	r.checkRBDPool(ctx, &plan, state, summary, &resp.Diagnostics)
}

// checkRBDPool refuses an rbd storage of the cluster's own Ceph whose pool
// does not exist, unless this plan creates it (pve_ceph_pool planned
// first, which a reference to its name ensures).
func (r *storageResource) checkRBDPool(ctx context.Context, plan, state *storageModel, summary string, diags *diag.Diagnostics) {
	if plan.Type.IsUnknown() || plan.Type.ValueString() != "rbd" || !plan.MonHost.IsNull() || plan.Pool.IsUnknown() {
		return
	}
	pool := rbdDefaultPool
	if !plan.Pool.IsNull() {
		pool = plan.Pool.ValueString()
	}
	if state != nil && (state.Pool.ValueString() == plan.Pool.ValueString() || (state.Pool.IsNull() && pool == rbdDefaultPool)) {
		return // unchanged
	}
	if _, ok := r.PD.PlanNoted(framework.PlannedCephPools, pool); ok {
		return
	}
	members, err := r.PD.Members(ctx)
	if err != nil || len(members) == 0 {
		return
	}
	node := members[0]
	if !plan.Nodes.IsUnknown() {
		for _, n := range setStrings(ctx, plan.Nodes) {
			if slices.Contains(members, n) {
				node = n
				break
			}
		}
	}
	pools, err := r.PD.PlanCephPools(ctx, node)
	names := make([]string, 0, len(pools))
	for _, p := range pools {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	if err != nil {
		// No Ceph yet (it may come in this plan): nothing to compare with.
		tflog.Debug(ctx, "Ceph pools not readable at plan; the rbd storage's pool is checked by use", map[string]any{"node": node, "error": err.Error()})
		return
	}
	if slices.Contains(names, pool) {
		return
	}
	attr := "pool = " + fmt.Sprintf("%q", pool)
	if plan.Pool.IsNull() {
		attr = "pool (unset: PVE's default \"rbd\")"
	}
	var usable []string
	for _, n := range names {
		if !strings.HasPrefix(n, ".") { // .mgr and other internal pools hold no guest disks
			usable = append(usable, n)
		}
	}
	diags.AddAttributeError(path.Root("pool"), summary,
		fmt.Sprintf("%s: the cluster's Ceph has no such pool; its pools are %s. PVE would create the storage, and every disk on it would "+
			"fail. Name an existing pool, or create it with pve_ceph_pool and refer to it (pool = pve_ceph_pool.<name>.name) so that the "+
			"plan sees it being created. For an external Ceph cluster set monhost.", attr, framework.Quoted(usable)))
}
