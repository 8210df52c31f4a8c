// Package node manages settings of a PVE node that the API does not reach
// and that the provider changes over SSH: the tuned profile, NIC ring
// sizes, files, systemd units and the CA trust store.
package node

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
)

const tunedTypeName = "pve_node_tuned_profile"

var (
	_ resource.Resource                = (*tunedProfileResource)(nil)
	_ resource.ResourceWithConfigure   = (*tunedProfileResource)(nil)
	_ resource.ResourceWithImportState = (*tunedProfileResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*tunedProfileResource)(nil)
)

// NewTunedProfileResource is the constructor the provider registers.
func NewTunedProfileResource() resource.Resource {
	return &tunedProfileResource{framework.ResourceBase{TypeName: tunedTypeName}}
}

type tunedProfileResource struct{ framework.ResourceBase }

type tunedProfileModel struct {
	ID      types.String `tfsdk:"id"`
	Node    types.String `tfsdk:"node"`
	Profile types.String `tfsdk:"profile"`
}

var (
	// A profile is a directory name under /usr/lib/tuned(/profiles) or
	// /etc/tuned(/profiles); tuned merges several given space-separated.
	tunedProfileRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*( [A-Za-z0-9][A-Za-z0-9._-]*)*$`)
)

func (r *tunedProfileResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "The active [TuneD](https://tuned-project.org/) profile of a node, such as `latency-performance` " +
			"for the reference lab. The provider switches with `tuned-adm profile` and then checks with `tuned-adm active` " +
			"that tuned really runs the profile (without its daemon `tuned-adm profile` exits 0 and changes nothing); a " +
			"stopped tuned daemon or a profile changed outside Terraform shows up as a change in the next plan.\n\n" +
			"Destroying the resource stops managing the profile: the node keeps the one it has.\n\n" +
			"Needs the `tuned` package on the node (`apt install tuned`) and the provider's `ssh` block (as root, or a user " +
			"with password-less sudo); the API is used only to find the node's address (`GET /cluster/status`).",
		Attributes: map[string]schema.Attribute{
			"id":   framework.IDAttribute("The node name."),
			"node": framework.NodeAttribute("", framework.NodeReplaces),
			"profile": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "Profile name as `tuned-adm list` shows it, such as `latency-performance`, `throughput-performance`, " +
					"`virtual-host` or `balanced`; several names separated by single spaces are merged by tuned.",
				Validators: []validator.String{regexValidator{re: tunedProfileRE,
					what: "one or more tuned profile names (letters, digits, '.', '_', '-') separated by single spaces, such as latency-performance"}},
			},
		},
	}
}

// regexValidator refuses values that do not match re, naming the
// attribute and what is expected.
type regexValidator struct {
	re   *regexp.Regexp
	what string
}

func (v regexValidator) Description(context.Context) string { return "must be " + v.what }
func (v regexValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}
func (v regexValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if !v.re.MatchString(req.ConfigValue.ValueString()) {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid "+req.Path.String(),
			fmt.Sprintf("%s must be %s, got %q.", req.Path, v.what, req.ConfigValue.ValueString()))
	}
}

func (r *tunedProfileResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	framework.PlanRequireNodeExec(r.PD, &resp.Diagnostics, tunedTypeName)
	if framework.PlanCheckNodeAttr(ctx, r.PD, req, resp, tunedTypeName); !resp.Diagnostics.HasError() {
		r.planProfile(ctx, req, resp) // node_refs.go
	}
}

// activeProfile is what tuned runs on node: the profile, and whether the
// daemon runs it ("" when there is none or the daemon is stopped).
type activeProfile struct {
	profile string
	preset  string // the configured profile while the daemon is stopped
}

// readActive asks tuned-adm which profile is active.
func readActive(ctx context.Context, ex *nodeexec.Pool, node string) (activeProfile, error) {
	res, err := ex.Run(ctx, node, nodeexec.Cmd("tuned-adm", "active").AcceptExit(1))
	if err != nil {
		if code, ok := nodeexec.ExitCode(err); ok && code == 127 {
			return activeProfile{}, fmt.Errorf("tuned is not installed on node %s (install the package: apt install tuned): %w", node, err)
		}
		return activeProfile{}, err
	}
	a, ok := parseTunedActive(string(res.Stdout))
	if !ok {
		return a, fmt.Errorf("node %s: unexpected output of tuned-adm active: %q", node, res.Stdout)
	}
	return a, nil
}

func (r *tunedProfileResource) apply(ctx context.Context, m *tunedProfileModel, diags *diag.Diagnostics, action string) {
	node, want := m.Node.ValueString(), m.Profile.ValueString()
	if r.Client(diags) == nil || !framework.RequireNodeExec(r.PD, diags, tunedTypeName) {
		return
	}
	ex := r.PD.NodeExec
	unlock, err := ex.Lock(ctx, node)
	if err != nil {
		framework.AddUnable(diags, action, "tuned profile of node", node, err)
		return
	}
	defer unlock()
	tflog.Info(ctx, "switching tuned profile", map[string]any{"node": node, "profile": want})
	if _, err := ex.Run(ctx, node, nodeexec.Cmd("tuned-adm", "profile").Arg(strings.Fields(want)...)); err != nil {
		framework.AddUnable(diags, action, "tuned profile of node", node, err)
		return
	}
	got, err := readActive(ctx, ex, node)
	if err != nil {
		framework.AddUnable(diags, action, "tuned profile of node", node, err)
		return
	}
	if got.profile != want {
		framework.AddUnable(diags, action, "tuned profile of node", node, fmt.Errorf(
			"tuned-adm profile %s succeeded, but tuned-adm active reports %s: the tuned daemon does not run the profile "+
				"(check systemctl status tuned and /var/log/tuned/tuned.log on the node)", want, describe(got)))
		return
	}
	m.ID = types.StringValue(node)
}

func describe(a activeProfile) string {
	switch {
	case a.profile != "":
		return fmt.Sprintf("%q", a.profile)
	case a.preset != "":
		return fmt.Sprintf("no active profile (the daemon is not running; preset %q)", a.preset)
	}
	return "no active profile"
}

func (r *tunedProfileResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan tunedProfileModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	r.apply(ctx, &plan, &resp.Diagnostics, "Create")
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *tunedProfileResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state tunedProfileModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() || r.Client(&resp.Diagnostics) == nil ||
		!framework.RequireNodeExec(r.PD, &resp.Diagnostics, tunedTypeName) {
		return
	}
	node := state.Node.ValueString()
	got, err := readActive(ctx, r.PD.NodeExec, node)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "tuned profile of node", node, err)
		return
	}
	if got.profile == "" {
		msg := fmt.Sprintf("tuned on node %s runs no profile", node)
		if got.preset != "" {
			msg = fmt.Sprintf("The tuned daemon on node %s is not running, so its preset profile %q is not active", node, got.preset)
		}
		resp.Diagnostics.AddWarning("tuned profile of node "+node+" is not active",
			msg+"; the next apply switches to the configured profile, which starts the daemon.")
	}
	state.ID = types.StringValue(node)
	state.Profile = types.StringValue(got.profile)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *tunedProfileResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan tunedProfileModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	r.apply(ctx, &plan, &resp.Diagnostics, "Update")
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// Delete leaves the node's profile as it is: there is no "unset" that
// would not change the node's tuning in some other way.
func (r *tunedProfileResource) Delete(ctx context.Context, req resource.DeleteRequest, _ *resource.DeleteResponse) {
	var state tunedProfileModel
	if diags := req.State.Get(ctx, &state); !diags.HasError() {
		tflog.Info(ctx, "no longer managing the tuned profile; the node keeps it", map[string]any{"node": state.Node.ValueString()})
	}
}

func (r *tunedProfileResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if !framework.IsNodeName(req.ID) {
		resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf("Import %s with the node name, such as z2g4a; got %q.", tunedTypeName, req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("node"), req.ID)...)
}
