package ceph

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
)

// cephOptionsKey is the read-cache key of Ceph's option names
// (`ceph config ls`, once per command).
const cephOptionsKey = "ceph/config-ls"

// checkRefs refuses, at plan, settings whose name Ceph does not know
// (ConfigMonitor's own list, `ceph config ls`), suggesting the closest
// names, and a node the cluster does not have. Only names the plan adds
// are checked: a name already in state was accepted before. The config
// database refuses an unknown name only at apply ("unrecognized config
// option"); ceph.conf takes it silently and it has no effect.
func (r *configResource) checkRefs(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	pd := r.PD
	if req.Plan.Raw.IsNull() || pd == nil || pd.Client == nil {
		return
	}
	var plan configModel
	if resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...); resp.Diagnostics.HasError() {
		return
	}
	action, had := "Create", map[string]bool{}
	if !req.State.Raw.IsNull() {
		action = "Update"
		var st configModel
		if resp.Diagnostics.Append(req.State.Get(ctx, &st)...); resp.Diagnostics.HasError() {
			return
		}
		for k := range st.Settings.Elements() {
			had[k] = true
		}
	}
	summary := fmt.Sprintf("Unable to %s Ceph configuration %s", action, plan.id())
	if !framework.PlanCheckNode(ctx, pd, plan.Node, path.Root("node"), configTypeName, &resp.Diagnostics) ||
		plan.Node.IsUnknown() || plan.Settings.IsUnknown() || pd.NodeExec == nil {
		return
	}
	var fresh []string
	for k := range plan.Settings.Elements() {
		// mgr/<module>/<option> belongs to a manager module, which Ceph
		// lists only while the module is loaded.
		if !had[k] && !strings.Contains(k, "/") && configKeyRE.MatchString(k) {
			fresh = append(fresh, k)
		}
	}
	if len(fresh) == 0 {
		return
	}
	node := plan.Node.ValueString()
	known, err := framework.CachedRead(ctx, pd.Reads, cephOptionsKey, func(ctx context.Context) (map[string]bool, error) {
		var names []string
		if err := (cephCLI{ex: pd.NodeExec, node: node}).json(ctx, &names, "config", "ls"); err != nil {
			return nil, err
		}
		m := make(map[string]bool, len(names))
		for _, n := range names {
			m[n] = true
		}
		return m, nil
	})
	if err != nil || len(known) == 0 {
		// No Ceph yet (it may come in this plan), or no SSH now.
		tflog.Debug(ctx, "Ceph's option list not readable at plan; option names are checked at apply", map[string]any{"node": node, "error": fmt.Sprint(err)})
		return
	}
	sort.Strings(fresh)
	for _, k := range fresh {
		if known[k] {
			continue
		}
		why := fmt.Sprintf("Ceph refuses it when it is set (Error EINVAL: unrecognized config option '%s').", k)
		if plan.Target.ValueString() == targetCephConf {
			why = "Ceph ignores unknown names in ceph.conf, so the setting would have no effect."
		}
		hint := "Check the spelling with `ceph config ls` or `ceph config help <option>` on a node."
		if near := closestOptions(k, known, 3); len(near) > 0 {
			hint = fmt.Sprintf("Did you mean %s? (`ceph config help %s` describes it.)", framework.Quoted(near), near[0])
		}
		resp.Diagnostics.AddAttributeError(path.Root("settings").AtMapKey(k), summary,
			fmt.Sprintf("settings has %q, which is not a Ceph option (ceph config ls on %s lists %d options, not this one). %s %s",
				k, node, len(known), why, hint))
	}
}

// closestOptions are up to n known names nearest to k by edit distance
// (all at the same, smallest distance), within a fifth of k's length:
// typos, not other options.
func closestOptions(k string, known map[string]bool, n int) []string {
	type cand struct {
		name string
		d    int
	}
	limit := max(2, len(k)/5)
	var cs []cand
	for name := range known {
		if d := editDistance(k, name); d <= limit {
			cs = append(cs, cand{name, d})
		}
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].name < cs[j].name
	})
	var out []string
	for i := 0; i < len(cs) && i < n && cs[i].d == cs[0].d; i++ {
		out = append(out, cs[i].name)
	}
	return out
}

// editDistance is the Levenshtein distance of a and b (bytes: option
// names are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
