package ceph

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
)

// defaultCrushRule is Ceph's default replicated rule: one copy per host.
const defaultCrushRule = "replicated_rule"

// checkPoolRefsAtPlan refuses, at plan, a pool on an unknown node, and a
// size (on create, or a changed size) larger than the number of hosts with
// OSDs: with the default rule (failure domain host) Ceph cannot place the
// copies and the PGs never become active+clean. OSDs this plan creates on
// other hosts count when the pool depends on them. A create is noted for
// the resources planned after it: the pool (an rbd storage's pool) and,
// with add_storages, its storage (a disk's storage). state is nil on create.
func checkPoolRefsAtPlan(ctx context.Context, pd *framework.ProviderData, plan, state *poolModel, diags *diag.Diagnostics) {
	if pd == nil || pd.Client == nil {
		return
	}
	action, id := "Create", plan.Name.ValueString()
	if state != nil {
		action, id = "Update", state.Name.ValueString()
	}
	summary := fmt.Sprintf("Unable to %s Ceph pool %s", action, id)
	if state == nil && !plan.Name.IsUnknown() {
		pd.PlanNote(framework.PlannedCephPools, plan.Name.ValueString(), "")
		if !plan.AddStorages.IsUnknown() && plan.AddStorages.ValueBool() {
			// PVE's add_storages makes an rbd storage of the pool's name,
			// which a disk of this plan may name.
			pd.PlanNote(framework.PlannedStorages, plan.Name.ValueString(), "")
		}
	}
	if !framework.PlanCheckNode(ctx, pd, plan.Node, path.Root("node"), poolTypeName, diags) || plan.Node.IsUnknown() {
		return
	}
	checkCrushRuleAtPlan(ctx, pd, plan, state, summary, diags)
	if plan.Size.IsUnknown() || plan.Size.IsNull() || (state != nil && state.Size.Equal(plan.Size)) {
		return
	}
	if !plan.CrushRule.IsUnknown() && !plan.CrushRule.IsNull() && plan.CrushRule.ValueString() != defaultCrushRule {
		return // another failure domain: CRUSH rules are not read here
	}
	node := plan.Node.ValueString()
	c, err := pd.NodeClient(ctx, node)
	if err != nil {
		return
	}
	tree, err := cachedTree(ctx, pd, c, node)
	if err != nil {
		// Ceph not set up yet (it may be in this plan): nothing to count.
		tflog.Debug(ctx, "OSD tree not readable at plan; the pool's size is not checked against its hosts", map[string]any{"node": node, "error": err.Error()})
		return
	}
	hosts := map[string]bool{}
	for _, o := range tree.OSDs {
		if o.Host != "" {
			hosts[o.Host] = true
		}
	}
	existing := len(hosts)
	for _, h := range pd.PlanNotedKeys(plannedOSDHosts) {
		hosts[h] = true
	}
	size := plan.Size.ValueInt64()
	if size <= int64(len(hosts)) {
		return
	}
	names := make([]string, 0, len(hosts))
	for h := range hosts {
		names = append(names, h)
	}
	sort.Strings(names)
	have := "no host has OSDs"
	if len(names) > 0 {
		have = fmt.Sprintf("%d host(s) have OSDs (%s)", len(names), strings.Join(names, ", "))
		if planned := len(names) - existing; planned > 0 {
			have += fmt.Sprintf(", %d of them from OSDs this plan creates", planned)
		}
	}
	fix := fmt.Sprintf("or set size to at most %d", len(names))
	if len(names) < 2 {
		fix = "a replicated pool needs OSDs on at least two hosts (size 1 keeps no redundancy)"
	}
	diags.AddAttributeError(path.Root("size"), summary,
		fmt.Sprintf("size = %d, but %s. With the CRUSH rule %s Ceph puts each copy on a different host, so it can place at most %d "+
			"of the %d copies: every placement group would stay undersized and never become active+clean. Add OSDs on %d more host(s) "+
			"(pve_ceph_osd resources the pool lists in depends_on count, as Terraform plans them first); %s.",
			size, have, defaultCrushRule, len(names), size, size-int64(len(names)), fix))
}

// crushRulesKey is the read-cache key of the cluster's CRUSH rule names.
const crushRulesKey = "plan/ceph/rules"

// checkCrushRuleAtPlan refuses a crush_rule the cluster's Ceph does not
// have (GET /nodes/{node}/ceph/rules, once per command): Ceph refuses it
// only when the create or update task sets it, and a create then leaves
// a pool with the default rule behind. An unset, unknown or unchanged
// rule, and rules that cannot be read (Ceph set up by this plan), pass.
func checkCrushRuleAtPlan(ctx context.Context, pd *framework.ProviderData, plan, state *poolModel, summary string, diags *diag.Diagnostics) {
	if plan.CrushRule.IsNull() || plan.CrushRule.IsUnknown() || (state != nil && state.CrushRule.Equal(plan.CrushRule)) {
		return
	}
	node, rule := plan.Node.ValueString(), plan.CrushRule.ValueString()
	rules, err := framework.CachedRead(ctx, pd.Reads, crushRulesKey, func(ctx context.Context) ([]string, error) {
		c, err := pd.NodeClient(ctx, node)
		if err != nil {
			return nil, err
		}
		return c.CephRules(ctx, node)
	})
	if err != nil {
		tflog.Debug(ctx, "CRUSH rules not readable at plan; crush_rule is checked by Ceph at apply", map[string]any{"node": node, "error": err.Error()})
		return
	}
	if slices.Contains(rules, rule) {
		return
	}
	diags.AddAttributeError(path.Root("crush_rule"), summary,
		fmt.Sprintf("crush_rule = %q: the cluster's Ceph has no such CRUSH rule; its rules are %s. Use one of them (omit crush_rule for "+
			"Ceph's default %s), or create the rule first (`ceph osd crush rule create-replicated <name> <root> <failure-domain> "+
			"[<device-class>]` on a node) and plan again.", rule, framework.Quoted(rules), defaultCrushRule))
}

// checkRefs runs checkPoolRefsAtPlan for a create or an update.
func (r *poolResource) checkRefs(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan poolModel
	if resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...); resp.Diagnostics.HasError() {
		return
	}
	if req.State.Raw.IsNull() {
		checkPoolRefsAtPlan(ctx, r.PD, &plan, nil, &resp.Diagnostics)
		return
	}
	var state poolModel
	if resp.Diagnostics.Append(req.State.Get(ctx, &state)...); resp.Diagnostics.HasError() {
		return
	}
	checkPoolRefsAtPlan(ctx, r.PD, &plan, &state, &resp.Diagnostics)
}
