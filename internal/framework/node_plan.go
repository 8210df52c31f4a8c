package framework

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// PlanCheckNode refuses, at plan, a node that is neither a member of the
// endpoint's cluster (GET /nodes, read once per command and shared with
// NodeClient) nor configured in standalone_nodes: PVE would answer the
// first /nodes/{node}/... call of the apply with a 595 "no such node" or a
// hostname lookup error, after other resources of the plan were applied.
// An unknown value (decided by the apply) and a provider that is not
// configured yet are let through, and so is a failed read: the apply then
// meets the real error. resource names the resource type for the summary.
// It reports whether the node passed, so that checks of what is on the
// node run only for a node that may exist.
func PlanCheckNode(ctx context.Context, pd *ProviderData, node types.String, at path.Path, resource string, diags *diag.Diagnostics) bool {
	if pd == nil || pd.Client == nil || node.IsNull() || node.IsUnknown() || node.ValueString() == "" {
		return true
	}
	name := node.ValueString()
	if pd.IsStandalone(name) {
		return true
	}
	members, err := pd.members(ctx)
	if err == nil && !members[name] {
		// A node that joined since the list was read (pve_cluster_node in
		// this apply) must not be refused from a stale list: read again once.
		pd.ClusterChanged()
		members, err = pd.members(ctx)
	}
	if err != nil {
		tflog.Debug(ctx, "node list not readable at plan; the node is checked at apply", map[string]any{"node": name, "error": err.Error()})
		return true
	}
	if members[name] {
		return true
	}
	known := make([]string, 0, len(members)+len(pd.standalone))
	for n := range members {
		known = append(known, n)
	}
	for n := range pd.standalone {
		known = append(known, n+" (standalone_nodes)")
	}
	sort.Strings(known)
	diags.AddAttributeError(at, fmt.Sprintf("Unable to plan %s: unknown node %s", resource, name),
		fmt.Sprintf("%s = %q is not a node of %s (GET /nodes lists %s) and not in the provider's standalone_nodes. "+
			"Use one of those node names (PVE's hostname of the node, as the GUI shows it), or add the node to "+
			"standalone_nodes in the provider block if it is not a cluster member yet.",
			at.String(), name, pd.Client.Endpoint(), ListOrNone(known)))
	return false
}

// ListOrNone joins names for an error text, or says there are none.
func ListOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// PlanCheckNodeAttr is PlanCheckNode for a resource's top-level "node"
// attribute, checked on create and when the node changes: an unchanged
// node was checked when it was planned, and a no-change plan spends no
// request on it.
func PlanCheckNodeAttr(ctx context.Context, pd *ProviderData, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse, resourceType string) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var node types.String
	if req.Plan.GetAttribute(ctx, path.Root("node"), &node).HasError() {
		return
	}
	if !req.State.Raw.IsNull() {
		var prior types.String
		if !req.State.GetAttribute(ctx, path.Root("node"), &prior).HasError() && prior.Equal(node) {
			return
		}
	}
	PlanCheckNode(ctx, pd, node, path.Root("node"), resourceType, &resp.Diagnostics)
}
