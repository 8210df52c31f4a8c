package node

import (
	"context"
	"fmt"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework-validators/resourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
)

const serviceTypeName = "pve_node_service"

var (
	_ resource.Resource                     = (*serviceResource)(nil)
	_ resource.ResourceWithConfigure        = (*serviceResource)(nil)
	_ resource.ResourceWithImportState      = (*serviceResource)(nil)
	_ resource.ResourceWithModifyPlan       = (*serviceResource)(nil)
	_ resource.ResourceWithConfigValidators = (*serviceResource)(nil)
	_ resource.ResourceWithValidateConfig   = (*serviceResource)(nil)
)

// NewServiceResource is the constructor the provider registers.
func NewServiceResource() resource.Resource {
	return &serviceResource{framework.ResourceBase{TypeName: serviceTypeName}}
}

type serviceResource struct{ framework.ResourceBase }

type serviceModel struct {
	ID       types.String `tfsdk:"id"`
	Node     types.String `tfsdk:"node"`
	Unit     types.String `tfsdk:"unit"`
	Enabled  types.Bool   `tfsdk:"enabled"`
	Running  types.Bool   `tfsdk:"running"`
	Triggers types.Map    `tfsdk:"triggers"`
}

func (r *serviceResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Whether a systemd unit of a node is enabled and running, such as the reference lab's " +
			"`systemd-journal-upload.service` (enabled and running), with a restart when a value in `triggers` changes (for example " +
			"the `sha256` of a `pve_node_file` holding its configuration).",
		Attributes: map[string]schema.Attribute{
			"id":   framework.IDAttribute("`<node>/<unit>`."),
			"node": framework.NodeAttribute("", framework.NodeReplaces),
			"unit": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Unit name with its type suffix, such as `systemd-journal-upload.service` or `pve-daily-update.timer`.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:          []validator.String{regexValidator{re: unitNameRE, what: unitNameWhat}},
			},
			"enabled": schema.BoolAttribute{
				Optional:            true,
				MarkdownDescription: "Start the unit at boot (`systemctl enable`) or not (`disable`). Unset: not managed.",
			},
			"running": schema.BoolAttribute{
				Optional:            true,
				MarkdownDescription: "Keep the unit active (`systemctl start`) or stopped (`stop`). Unset: not managed.",
			},
			"triggers": schema.MapAttribute{
				ElementType:         types.StringType,
				Optional:            true,
				MarkdownDescription: "Arbitrary values; when any changes, the unit is restarted.",
			},
		},
	}
}

func (r *serviceResource) ConfigValidators(context.Context) []resource.ConfigValidator {
	return []resource.ConfigValidator{resourcevalidator.AtLeastOneOf(path.MatchRoot("enabled"), path.MatchRoot("running"))}
}

func (r *serviceResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m serviceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !m.Running.IsNull() && !m.Running.IsUnknown() && !m.Running.ValueBool() && !m.Triggers.IsNull() {
		resp.Diagnostics.AddAttributeError(path.Root("triggers"), "triggers on a stopped unit",
			"running = false keeps the unit stopped, so triggers would never restart it; remove triggers or running = false.")
	}
}

func (r *serviceResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	framework.PlanRequireNodeExec(r.PD, &resp.Diagnostics, serviceTypeName)
	framework.PlanCheckNodeAttr(ctx, r.PD, req, resp, serviceTypeName)
	var plan serviceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() || plan.Node.IsUnknown() || plan.Unit.IsUnknown() {
		return
	}
	plan.ID = types.StringValue(plan.Node.ValueString() + "/" + plan.Unit.ValueString())
	resp.Diagnostics.Append(resp.Plan.Set(ctx, plan)...)
}

// unitState is what systemctl show reports about a unit.
type unitState struct {
	load, fileState, active string
	needReload              bool
}

func (u unitState) enabled() bool {
	return slices.Contains([]string{"enabled", "enabled-runtime", "alias"}, u.fileState)
}

func (u unitState) running() bool {
	return slices.Contains([]string{"active", "reloading", "activating", "refreshing"}, u.active)
}

func readUnit(ctx context.Context, ex *nodeexec.Pool, node, unit string) (unitState, error) {
	p, err := unitProps(ctx, ex, node, unit, "LoadState", "UnitFileState", "ActiveState", "NeedDaemonReload")
	if err != nil {
		return unitState{}, err
	}
	return unitState{load: p["LoadState"], fileState: p["UnitFileState"], active: p["ActiveState"], needReload: p["NeedDaemonReload"] == "yes"}, nil
}

func (r *serviceResource) apply(ctx context.Context, action string, plan serviceModel, prior *serviceModel, diags *diag.Diagnostics) bool {
	if r.Client(diags) == nil || !framework.RequireNodeExec(r.PD, diags, serviceTypeName) {
		return false
	}
	ex := r.PD.NodeExec
	node, unit := plan.Node.ValueString(), plan.Unit.ValueString()
	id := node + "/" + unit
	fail := func(err error) { framework.AddUnable(diags, action, "service", id, err) }
	unlock, err := ex.Lock(ctx, node)
	if err != nil {
		fail(err)
		return false
	}
	defer unlock()
	cur, err := readUnit(ctx, ex, node, unit)
	if err != nil {
		fail(err)
		return false
	}
	switch cur.load {
	case "not-found":
		fail(fmt.Errorf("node %s has no unit %s (systemctl show: LoadState=not-found); install its package or write its unit file first", node, unit))
		return false
	case "masked":
		if (!plan.Running.IsNull() && plan.Running.ValueBool()) || (!plan.Enabled.IsNull() && plan.Enabled.ValueBool()) {
			fail(fmt.Errorf("%s is masked on node %s; it can be neither started nor enabled until someone runs systemctl unmask %s", unit, node, unit))
			return false
		}
	}
	if cur.needReload {
		diags.AddWarning("systemd has not loaded the changed unit files of "+unit,
			fmt.Sprintf("The unit file or drop-ins of %s on node %s changed on disk without a systemctl daemon-reload, so systemd still uses the old "+
				"ones. Set daemon_reload = true on the pve_node_file that writes them.", unit, node))
	}
	verbs, err := plan.systemctlVerbs(cur, prior, node)
	if err != nil {
		fail(err)
		return false
	}
	for _, verb := range verbs {
		tflog.Info(ctx, "systemctl", map[string]any{"node": node, "args": []string{verb, unit}})
		if _, err := ex.Run(ctx, node, nodeexec.Cmd("systemctl", verb, unit)); err != nil {
			fail(err)
			return false
		}
	}
	got, err := readUnit(ctx, ex, node, unit)
	if err == nil {
		err = plan.checkApplied(got, node)
	}
	if err != nil {
		fail(err)
		return false
	}
	return true
}

// systemctlVerbs are the systemctl commands, in order, that bring the unit
// from cur to m: enable or disable, start or stop, and a restart when the
// triggers changed.
func (m *serviceModel) systemctlVerbs(cur unitState, prior *serviceModel, node string) ([]string, error) {
	unit := m.Unit.ValueString()
	var verbs []string
	if !m.Enabled.IsNull() && m.Enabled.ValueBool() != cur.enabled() {
		switch cur.fileState {
		case "static", "indirect", "generated", "transient":
			return nil, fmt.Errorf("%s is %s on node %s: it has no [Install] section to enable or disable (it is started by other units); remove enabled", unit, cur.fileState, node)
		}
		verb := "disable"
		if m.Enabled.ValueBool() {
			verb = "enable"
		}
		verbs = append(verbs, verb)
	}
	started := false
	if !m.Running.IsNull() && m.Running.ValueBool() != cur.running() {
		verb := "stop"
		if m.Running.ValueBool() {
			verb, started = "start", true
		}
		verbs = append(verbs, verb)
	}
	// Triggers restart the unit when they change (on create: a unit that
	// already runs, as its configuration may have changed in this apply).
	triggered := len(m.Triggers.Elements()) > 0 && (prior == nil || !prior.Triggers.Equal(m.Triggers))
	if triggered && !started && (m.Running.IsNull() || m.Running.ValueBool()) {
		verb := "try-restart"
		if prior != nil && !m.Running.IsNull() {
			verb = "restart"
		}
		verbs = append(verbs, verb)
	}
	return verbs, nil
}

// checkApplied errors when the unit, as read back, is not as m wants it.
func (m *serviceModel) checkApplied(got unitState, node string) error {
	unit := m.Unit.ValueString()
	if !m.Enabled.IsNull() && got.enabled() != m.Enabled.ValueBool() {
		return fmt.Errorf("%s is %s after systemctl enable/disable", unit, got.fileState)
	}
	if !m.Running.IsNull() && got.running() != m.Running.ValueBool() {
		return fmt.Errorf("%s is %s after systemctl start/stop; see journalctl -u %s on node %s", unit, got.active, unit, node)
	}
	return nil
}

func (r *serviceResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan serviceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() || !r.apply(ctx, "Create", plan, nil, &resp.Diagnostics) {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *serviceResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state serviceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() || !r.apply(ctx, "Update", plan, &state, &resp.Diagnostics) {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *serviceResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state serviceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() || r.Client(&resp.Diagnostics) == nil ||
		!framework.RequireNodeExec(r.PD, &resp.Diagnostics, serviceTypeName) {
		return
	}
	node, unit := state.Node.ValueString(), state.Unit.ValueString()
	u, err := readUnit(ctx, r.PD.NodeExec, node, unit)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "service", node+"/"+unit, err)
		return
	}
	if u.load == "not-found" {
		resp.Diagnostics.AddWarning("Unit "+unit+" is gone from node "+node,
			"systemd no longer knows the unit (its package or unit file was removed); the resource is removed from the state.")
		resp.State.RemoveResource(ctx)
		return
	}
	imported := state.Enabled.IsNull() && state.Running.IsNull()
	if !state.Enabled.IsNull() || imported {
		state.Enabled = types.BoolValue(u.enabled())
	}
	if !state.Running.IsNull() || imported {
		state.Running = types.BoolValue(u.running())
	}
	state.ID = types.StringValue(node + "/" + unit)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// Delete stops managing the unit; it stays as it is.
func (r *serviceResource) Delete(ctx context.Context, req resource.DeleteRequest, _ *resource.DeleteResponse) {
	var state serviceModel
	if diags := req.State.Get(ctx, &state); !diags.HasError() {
		tflog.Info(ctx, "no longer managing the unit; it stays as it is", map[string]any{"node": state.Node.ValueString(), "unit": state.Unit.ValueString()})
	}
}

// ImportState takes <node>/<unit>; enabled and running come from the node.
func (r *serviceResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	node, unit, ok := splitImportID(req.ID)
	if !ok || !unitNameRE.MatchString(unit) {
		resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf("Import %s with <node>/<unit>, such as z2g4a/systemd-journal-upload.service; got %q.", serviceTypeName, req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("node"), node)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("unit"), unit)...)
}
