package node

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
)

// Plan-time references of the node resources (issue #13).

// tunedProfileDirs are where tuned looks for profiles (tuned-adm's "Cannot
// find profile 'x' in '['/etc/tuned/profiles', '/usr/lib/tuned/profiles']'";
// older tuned also reads /etc/tuned/<name> and /usr/lib/tuned/<name>).
var tunedProfileDirs = []string{"/etc/tuned/profiles/", "/etc/tuned/"}

// planProfile refuses a profile the node does not have, from `tuned-adm
// list` (once per node and command), naming the profiles it has. A
// profile a pve_node_file of the plan writes (<dir>/<name>/tuned.conf) is
// let through, and so is everything when the list cannot be read (no SSH
// yet, tuned not installed: the apply says so).
func (r *tunedProfileResource) planProfile(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || r.PD == nil || r.PD.NodeExec == nil {
		return
	}
	var plan, prior tunedProfileModel
	if req.Plan.Get(ctx, &plan).HasError() || plan.Node.IsUnknown() || plan.Profile.IsUnknown() {
		return
	}
	if !req.State.Raw.IsNull() && !req.State.Get(ctx, &prior).HasError() && prior.Profile.Equal(plan.Profile) && prior.Node.Equal(plan.Node) {
		return
	}
	node := plan.Node.ValueString()
	have, err := framework.CachedRead(ctx, r.PD.Reads, "tuned-adm list@"+node, func(ctx context.Context) (map[string]bool, error) {
		res, err := r.PD.NodeExec.Run(ctx, node, nodeexec.Cmd("tuned-adm", "list"))
		if err != nil {
			return nil, err
		}
		return parseTunedList(string(res.Stdout)), nil
	})
	if err != nil || len(have) == 0 {
		return
	}
	var missing []string
	for _, p := range strings.Fields(plan.Profile.ValueString()) {
		if have[p] || r.profileWrittenByPlan(node, p) {
			continue
		}
		missing = append(missing, p)
	}
	if len(missing) == 0 {
		return
	}
	names := make([]string, 0, len(have))
	for p := range have {
		names = append(names, p)
	}
	sort.Strings(names)
	resp.Diagnostics.AddAttributeError(path.Root("profile"),
		fmt.Sprintf("Unable to plan %s %s: tuned profile %s does not exist on the node", tunedTypeName, node, strings.Join(missing, ", ")),
		fmt.Sprintf("profile = %q, but `tuned-adm list` on node %s has no profile %s (tuned-adm profile would fail: \"Cannot find profile '%s'\"). "+
			"Profiles on the node: %s. Use one of them, or write a custom profile to /etc/tuned/profiles/<name>/tuned.conf with a "+
			"pve_node_file and refer to it (depends_on) so that Terraform writes it first.",
			plan.Profile.ValueString(), node, strings.Join(missing, ", "), missing[0], strings.Join(names, ", ")))
}

func (r *tunedProfileResource) profileWrittenByPlan(node, profile string) bool {
	for _, dir := range tunedProfileDirs {
		if _, ok := r.PD.PlanNoted(framework.PlannedFiles, node+":"+dir+profile+"/tuned.conf"); ok {
			return true
		}
	}
	return false
}

// parseTunedList reads the profile names of `tuned-adm list`: lines
// "- name<spaces>- summary" after "Available profiles:".
func parseTunedList(out string) map[string]bool {
	have := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		rest, ok := strings.CutPrefix(line, "- ")
		if !ok {
			continue
		}
		if f := strings.Fields(rest); len(f) > 0 {
			have[f[0]] = true
		}
	}
	return have
}

// noteFile records the file a pve_node_file plans, for resources that use
// it (a custom tuned profile).
func (r *fileResource) noteFile(ctx context.Context, req resource.ModifyPlanRequest) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan fileModel
	if req.Plan.Get(ctx, &plan).HasError() || plan.Node.IsUnknown() || plan.Path.IsUnknown() {
		return
	}
	r.PD.PlanNote(framework.PlannedFiles, plan.Node.ValueString()+":"+plan.Path.ValueString(), "")
}

// nodeNICs lists the node's physical NICs as the API reports them (type
// eth in GET /nodes/{node}/network, shared with the network resources),
// for an error that names a NIC the node lacks; "" when unknown.
func nodeNICs(ctx context.Context, pd *framework.ProviderData, node string) string {
	if pd == nil || pd.Client == nil {
		return ""
	}
	list, err := pd.PlanNodeNetwork(ctx, node)
	if err != nil {
		return ""
	}
	var nics []string
	for _, in := range list.Interfaces {
		if in.Type == "eth" {
			nics = append(nics, in.Iface)
		}
	}
	sort.Strings(nics)
	return " Its NICs: " + framework.ListOrNone(nics) + "."
}
