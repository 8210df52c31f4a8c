package ceph

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// Whole-plan check of OSD destroys. Each destroy's drain checks at apply
// that the pools keep enough hosts without that one OSD; applied one after
// another, the first of two OSDs of a host is drained and destroyed and
// only the second is refused. So at plan every destroy records itself
// (framework.PlanRegistry) and judges all OSD destroys recorded so far:
// the set only grows worse as destroys are added, so the last destroy of
// an unsafe set always sees it and refuses, whatever order Terraform
// planned them in.

// osdDestroyFacts is what one planned OSD destroy records.
type osdDestroyFacts struct {
	node, device string
	ids          []int64
	force        bool
}

const osdPoolsPlanKey = "ceph/pools"

// checkOSDDestroySet records the destroy of st and refuses when the OSD
// destroys the plan holds so far would, together, leave a pool with
// fewer hosts than copies (PVE's replicated_rule: one copy per host).
func checkOSDDestroySet(ctx context.Context, pd *framework.ProviderData, st *osdModel, diags *diag.Diagnostics) {
	if pd == nil || pd.Client == nil || st.ID.IsNull() || st.ID.IsUnknown() {
		return
	}
	facts := osdDestroyFacts{node: st.Node.ValueString(), device: st.Device.ValueString(), ids: st.ids(ctx), force: st.Force.ValueBool()}
	all := pd.RecordPlan(framework.PlannedChange{Kind: osdTypeName, ID: st.ID.ValueString(), Action: framework.PlanDestroy, Facts: facts})
	destroys := framework.Changes(all, osdTypeName, framework.PlanDestroy)
	// One destroy alone is judged by its drain at apply, before anything
	// changes (preflightDrain).
	if len(destroys) < 2 {
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
	c, err := pd.NodeClient(ctx, facts.node)
	if err != nil {
		return
	}
	// Unreadable Ceph: the drains check again at apply.
	tree, err := cachedTree(ctx, pd, c, facts.node)
	if err != nil || tree == nil {
		return
	}
	pools, err := framework.CachedRead(ctx, pd.Reads, osdPoolsPlanKey, func(ctx context.Context) ([]pve.CephPool, error) {
		return c.CephListPools(ctx, facts.node)
	})
	if err != nil {
		return
	}
	reasons := osdSetReasons(tree, pools, removed)
	if len(reasons) == 0 {
		return
	}
	sort.Slice(removed, func(i, j int) bool { return removed[i] < removed[j] })
	diags.AddError("Unable to Destroy Ceph OSDs "+osdNames(removed),
		fmt.Sprintf("This plan destroys %d OSD resources together: %s.\n\n%s\n\nApplied one after another, the first would be drained "+
			"and destroyed and a later one refused when its drain finds too few hosts left, so the provider refuses the whole plan "+
			"and nothing is changed. Destroy fewer OSDs at once (keep at least one OSD in on each host a pool needs), add OSDs on "+
			"another host first, or lower the pool's size; force = true on every one of them destroys anyway.",
			len(labels), strings.Join(labels, ", "), strings.Join(reasons, "\n")))
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
		// (the API does not publish other rules).
		if p.CrushRule != "" && p.CrushRule != "replicated_rule" {
			continue
		}
		if p.Size <= int64(len(left)) || p.Size > int64(len(before)) {
			// Enough hosts left, or too few already before this plan
			// (then each drain refuses on its own at apply).
			continue
		}
		msg := fmt.Sprintf("Pool %q keeps size = %d copies on distinct hosts (CRUSH rule %s), but without these OSDs only %d host(s) "+
			"have OSDs that are in (%s)", p.Name, p.Size, ruleName(p.CrushRule), len(left), strings.Join(hosts, ", "))
		if len(emptied) > 0 {
			msg += fmt.Sprintf("; %s would lose its last OSDs", strings.Join(emptied, ", "))
		}
		if int64(len(left)) < p.MinSize {
			msg += fmt.Sprintf(", fewer than the pool's min_size = %d, so its PGs would stop serving I/O", p.MinSize)
		}
		reasons = append(reasons, msg+".")
	}
	return reasons
}
