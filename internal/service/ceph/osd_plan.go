package ceph

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// Whole-plan check of OSD destroys. Each destroy's drain checks at apply
// that the pools keep enough hosts without that one OSD; applied one after
// another, the first of two OSDs of a host is drained and destroyed and
// only the second is refused, and even a single refused destroy comes
// after the plan's other changes. So at plan every destroy records itself
// (framework.PlanRegistry) and judges all OSD destroys recorded so far,
// one or more, with the drain's rule. More OSD destroys only make it worse,
// so the last destroy of an unsafe set always sees it and refuses, whatever
// order Terraform planned them in. A pool recorded later can make it
// better (its destroy, or a lower size), but an earlier record judged it as
// PVE lists it and may have refused already; the message then says to
// apply the pool's change first (the plan cannot be amended afterwards).

// osdDestroyFacts is what one planned OSD destroy records.
type osdDestroyFacts struct {
	node, device string
	ids          []int64
	force        bool
}

// checkOSDDestroySet records the destroy of st and judges the plan's OSD
// destroys against the pools the plan keeps.
func checkOSDDestroySet(ctx context.Context, pd *framework.ProviderData, st *osdModel, diags *diag.Diagnostics) {
	if pd == nil || pd.Client == nil || st.ID.IsNull() || st.ID.IsUnknown() {
		return
	}
	facts := osdDestroyFacts{node: st.Node.ValueString(), device: st.Device.ValueString(), ids: st.ids(ctx), force: st.Force.ValueBool()}
	all := pd.RecordPlan(framework.PlannedChange{Kind: osdTypeName, ID: st.ID.ValueString(), Action: framework.PlanDestroy, Facts: facts})
	judgeOSDDestroys(ctx, pd, facts.node, all, diags)
}

// poolPlanFacts is what a pve_ceph_pool records: a pool that stays (or is
// created) with its planned size, or a pool the plan destroys (destroyed
// set). Pools no pve_ceph_pool records are read from PVE (created by hand,
// or managed elsewhere) and count as they are. A destroyed pool counts
// for nothing: a destroy of the whole lab (pools first, then their OSDs)
// is not refused for pools about to go. That a pool destroy is recorded
// before the OSD destroys is Terraform's order: a pool that depends on
// its OSDs is destroyed, and planned, before them (destroy edges are part
// of the plan graph); without that dependency the apply may destroy an
// OSD first too, and its drain would count the pool as well.
type poolPlanFacts struct {
	pool      pve.CephPool
	node      string
	destroyed bool
}

// checkPoolKept records a planned pool that stays and judges the OSD
// destroys recorded so far against it (the pool may be planned last).
func checkPoolKept(ctx context.Context, pd *framework.ProviderData, plan, state *poolModel, diags *diag.Diagnostics) {
	if pd == nil || pd.Client == nil {
		return
	}
	size, minSize := plan.Size, plan.MinSize
	if size.IsUnknown() || size.IsNull() {
		size = state.Size
	}
	if minSize.IsUnknown() || minSize.IsNull() {
		minSize = state.MinSize
	}
	node := plan.Node
	if node.IsUnknown() || node.IsNull() {
		node = state.Node
	}
	name := plan.Name
	if name.IsUnknown() || name.IsNull() {
		name = state.Name
	}
	if size.IsUnknown() || size.IsNull() || node.IsUnknown() || node.IsNull() || name.IsUnknown() || name.IsNull() {
		return
	}
	rule := ""
	if !plan.CrushRule.IsUnknown() && !plan.CrushRule.IsNull() {
		rule = plan.CrushRule.ValueString()
	} else if !state.CrushRule.IsNull() && !state.CrushRule.IsUnknown() {
		rule = state.CrushRule.ValueString()
	}
	f := poolPlanFacts{node: node.ValueString(), pool: pve.CephPool{Name: name.ValueString(), Size: size.ValueInt64(), MinSize: minSize.ValueInt64(), CrushRule: rule}}
	all := pd.RecordPlan(framework.PlannedChange{Kind: poolTypeName, ID: f.pool.Name, Action: framework.PlanKeep, Facts: f})
	judgeOSDDestroys(ctx, pd, f.node, all, diags)
}

// recordPoolDestroy records that the plan destroys the pool in state, so
// that the OSD destroys planned after it do not count it.
func recordPoolDestroy(pd *framework.ProviderData, state *poolModel) {
	if pd == nil || pd.Client == nil || state.Name.IsNull() || state.Name.IsUnknown() {
		return
	}
	pd.RecordPlan(framework.PlannedChange{Kind: poolTypeName, ID: state.Name.ValueString(), Action: framework.PlanDestroy,
		Facts: poolPlanFacts{node: state.Node.ValueString(), destroyed: true}})
}

// judgeOSDDestroys refuses when the OSD destroys recorded so far would,
// alone or together, leave a pool with fewer hosts than copies (PVE's
// replicated_rule: one copy per host), the rule each drain applies at
// apply (preflightDrain). Refused at plan, nothing of the plan is applied
// before a drain refuses.
func judgeOSDDestroys(ctx context.Context, pd *framework.ProviderData, node string, all []framework.PlannedChange, diags *diag.Diagnostics) {
	destroys := framework.Changes(all, osdTypeName, framework.PlanDestroy)
	if len(destroys) == 0 {
		return
	}
	var removed []int64
	var labels []string
	allForced := true
	for _, d := range destroys {
		f, ok := d.Facts.(osdDestroyFacts)
		if !ok {
			continue
		}
		removed = append(removed, f.ids...)
		labels = append(labels, fmt.Sprintf("%s %s (%s on %s %s)", osdTypeName, d.ID, osdNames(f.ids), f.node, f.device))
		allForced = allForced && f.force
	}
	// force = true on every one of them: the user asked not to be asked.
	if allForced {
		return
	}
	c, err := pd.NodeClient(ctx, node)
	if err != nil {
		return
	}
	// Unreadable Ceph: the drains check again at apply.
	tree, err := cachedTree(ctx, pd, c, node)
	if err != nil || tree == nil {
		return
	}
	pools, unrecorded, ok := plannedPools(ctx, pd, node, all)
	if !ok || len(pools) == 0 {
		return
	}
	reasons := osdSetReasons(tree, pools, removed)
	if len(reasons) == 0 {
		return
	}
	if hint := laterPoolHint(tree, pools, unrecorded, removed); hint != "" {
		reasons = append(reasons, hint)
	}
	sort.Slice(removed, func(i, j int) bool { return removed[i] < removed[j] })
	if len(labels) == 1 {
		framework.RefuseDestroy(diags, "", "Ceph OSD "+osdNames(removed),
			fmt.Sprintf("This plan destroys %s.\n\n%s\n\nIts drain would refuse at apply, after the plan's other changes were applied, "+
				"so the provider refuses the plan and nothing is changed. Add an OSD on another host first (or keep this one), or lower "+
				"the pool's size (the pool's size attribute, or `ceph osd pool set <pool> size <n>` for a pool Terraform does not "+
				"manage); force = true destroys anyway, leaving those PGs with fewer copies.",
				labels[0], strings.Join(reasons, "\n")))
		return
	}
	framework.RefuseDestroy(diags, "", "Ceph OSDs "+osdNames(removed),
		fmt.Sprintf("This plan destroys %d OSD resources together: %s.\n\n%s\n\nApplied one after another, the first would be drained "+
			"and destroyed and a later one refused when its drain finds too few hosts left, so the provider refuses the whole plan "+
			"and nothing is changed. Destroy fewer OSDs at once (keep at least one OSD in on each host a pool needs), add OSDs on "+
			"another host first, or lower the pool's size; force = true on every one of them destroys anyway.",
			len(labels), strings.Join(labels, ", "), strings.Join(reasons, "\n")))
}

// plannedPools are the pools the plan leaves: those a pve_ceph_pool keeps
// (with its planned size), and those PVE lists that no pve_ceph_pool of
// the plan records (created by hand). ok is false when PVE's pools cannot
// be read; the drains check at apply. unrecorded names the pools read
// from PVE.
func plannedPools(ctx context.Context, pd *framework.ProviderData, node string, all []framework.PlannedChange) (pools []pve.CephPool, unrecorded map[string]bool, ok bool) {
	recorded := map[string]bool{}
	for _, c := range all {
		if c.Kind != poolTypeName {
			continue
		}
		recorded[c.ID] = true
		if f, ok := c.Facts.(poolPlanFacts); ok && !f.destroyed {
			pools = append(pools, f.pool)
		}
	}
	listed, err := pd.PlanCephPools(ctx, node)
	if err != nil {
		tflog.Debug(ctx, "Ceph pools not readable at plan; OSD destroys are checked by their drains", map[string]any{"node": node, "error": err.Error()})
		return nil, nil, false
	}
	unrecorded = map[string]bool{}
	for _, p := range listed {
		if !recorded[p.Name] {
			pools = append(pools, p)
			unrecorded[p.Name] = true
		}
	}
	return pools, unrecorded, true
}

// laterPoolHint explains, when a pool that refuses was read from PVE, how
// to get through if a pve_ceph_pool of the configuration manages it and
// the plan lowers its size or destroys it: Terraform may plan the OSD
// destroy first, and PVE still lists the pool as it is.
func laterPoolHint(tree *pve.CephOSDTree, pools []pve.CephPool, unrecorded map[string]bool, removed []int64) string {
	var names []string
	for _, p := range pools {
		if unrecorded[p.Name] && len(osdSetReasons(tree, []pve.CephPool{p}, removed)) > 0 {
			names = append(names, fmt.Sprintf("%q", p.Name))
		}
	}
	if len(names) == 0 {
		return ""
	}
	what := "Pool " + names[0] + " counts"
	if len(names) > 1 {
		what = "Pools " + strings.Join(names, ", ") + " count"
	}
	return fmt.Sprintf("%s as PVE lists it now: no pve_ceph_pool of this plan was planned for it before these OSDs. "+
		"If one manages it and this plan lowers its size or destroys it, apply that first (terraform apply -target=<the pve_ceph_pool>), "+
		"or, for a pool destroy, add the OSDs to the pool's depends_on (Terraform then plans and destroys the pool before them), "+
		"and plan again.", what)
}

// osdSetReasons says which pools would have fewer hosts with OSDs that
// are in than copies once removed are gone, and which hosts lose their
// last OSDs.
func osdSetReasons(tree *pve.CephOSDTree, pools []pve.CephPool, removed []int64) []string {
	left, before := map[string]bool{}, map[string]bool{}
	for _, o := range tree.OSDs {
		if !o.In {
			continue
		}
		before[o.Host] = true
		if !isTarget(o.ID, removed) {
			left[o.Host] = true
		}
	}
	var emptied, hosts []string
	for h := range before {
		if !left[h] {
			emptied = append(emptied, h)
		}
	}
	for h := range left {
		hosts = append(hosts, h)
	}
	sort.Strings(emptied)
	sort.Strings(hosts)
	var reasons []string
	for _, p := range pools {
		// Only PVE's replicated_rule is known to place one copy per host
		// (the drain at apply judges the same way).
		if p.CrushRule != "" && p.CrushRule != "replicated_rule" {
			continue
		}
		if p.Size <= int64(len(left)) {
			continue
		}
		msg := fmt.Sprintf("Pool %q keeps size = %d copies on distinct hosts (CRUSH rule %s), but without these OSDs only %d host(s) "+
			"have OSDs that are in (%s)", p.Name, p.Size, ruleName(p.CrushRule), len(left), strings.Join(hosts, ", "))
		if len(emptied) > 0 {
			msg += fmt.Sprintf("; %s would lose its last OSDs", strings.Join(emptied, ", "))
		}
		if p.Size > int64(len(before)) {
			// Undersized already: a PG's up set is smaller than size,
			// so Ceph keeps the out OSD in its acting set to make up the
			// copies (active+clean+remapped) even when its host has
			// another OSD, and the drain would wait for good.
			msg += fmt.Sprintf("; only %d host(s) had OSDs that are in before this plan, so the pool is undersized already", len(before))
		}
		if int64(len(left)) < p.MinSize {
			msg += fmt.Sprintf(", fewer than the pool's min_size = %d, so its PGs would stop serving I/O", p.MinSize)
		}
		reasons = append(reasons, msg+".")
	}
	return reasons
}

// planWhole is the pool's part of the whole-plan OSD check, for ModifyPlan.
func (r *poolResource) planWhole(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	var plan, state poolModel
	if req.Plan.Raw.IsNull() {
		if !req.State.Raw.IsNull() && !req.State.Get(ctx, &state).HasError() {
			recordPoolDestroy(r.PD, &state)
		}
		return
	}
	if d := req.Plan.Get(ctx, &plan); d.HasError() {
		return
	}
	if !req.State.Raw.IsNull() {
		if d := req.State.Get(ctx, &state); d.HasError() {
			return
		}
	}
	checkPoolKept(ctx, r.PD, &plan, &state, &resp.Diagnostics)
}
