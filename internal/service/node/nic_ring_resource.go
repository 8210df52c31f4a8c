package node

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/resourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
)

const nicRingTypeName = "pve_node_nic_ring"

var (
	_ resource.Resource                     = (*nicRingResource)(nil)
	_ resource.ResourceWithConfigure        = (*nicRingResource)(nil)
	_ resource.ResourceWithImportState      = (*nicRingResource)(nil)
	_ resource.ResourceWithModifyPlan       = (*nicRingResource)(nil)
	_ resource.ResourceWithConfigValidators = (*nicRingResource)(nil)
)

// NewNICRingResource is the constructor the provider registers.
func NewNICRingResource() resource.Resource {
	return &nicRingResource{framework.ResourceBase{TypeName: nicRingTypeName}}
}

type nicRingResource struct{ framework.ResourceBase }

type nicRingModel struct {
	ID          types.String `tfsdk:"id"`
	Node        types.String `tfsdk:"node"`
	Iface       types.String `tfsdk:"iface"`
	RX          types.Int64  `tfsdk:"rx"`
	TX          types.Int64  `tfsdk:"tx"`
	Driver      types.String `tfsdk:"driver"`
	RXMax       types.Int64  `tfsdk:"rx_max"`
	TXMax       types.Int64  `tfsdk:"tx_max"`
	Unit        types.String `tfsdk:"unit"`
	BootCommand types.String `tfsdk:"boot_command"`
}

// ifaceRE is a Linux interface name (at most 15 bytes) made of characters
// that need no escaping in a systemd unit.
var ifaceRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,14}$`)

func (r *nicRingResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "The RX and TX ring sizes of a physical NIC (`ethtool -G`), such as `rx 2048 tx 2048` on the reference " +
			"lab's ConnectX-3 storage port, kept across reboots.",
		Attributes: map[string]schema.Attribute{
			"id":   framework.IDAttribute("`<node>/<iface>`."),
			"node": framework.NodeAttribute("", framework.NodeReplaces),
			"iface": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "The physical network interface, such as `cx354ap1` (bonds, bridges and VLANs have no rings of their own).",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators: []validator.String{regexValidator{re: ifaceRE,
					what: "a network interface name of at most 15 letters, digits, '_', '.' or '-', such as cx354ap1"}},
			},
			"rx": schema.Int64Attribute{
				Optional: true,
				Computed: true,
				MarkdownDescription: "RX ring size (descriptors). Unset: not managed, and the NIC's current value is shown. At least one " +
					"of `rx` and `tx` must be set.",
				PlanModifiers: []planmodifier.Int64{int64planmodifier.UseStateForUnknown()},
				Validators:    []validator.Int64{int64validator.Between(1, 1<<20)},
			},
			"tx": schema.Int64Attribute{
				Optional:            true,
				Computed:            true,
				MarkdownDescription: "TX ring size (descriptors). Unset: not managed, and the NIC's current value is shown.",
				PlanModifiers:       []planmodifier.Int64{int64planmodifier.UseStateForUnknown()},
				Validators:          []validator.Int64{int64validator.Between(1, 1<<20)},
			},
			"driver": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The NIC's driver as `ethtool -i` reports it, such as `mlx4_en`.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"rx_max": schema.Int64Attribute{
				Computed:            true,
				MarkdownDescription: "The largest RX ring the NIC supports (`ethtool -g`, pre-set maximums).",
				PlanModifiers:       []planmodifier.Int64{int64planmodifier.UseStateForUnknown()},
			},
			"tx_max": schema.Int64Attribute{
				Computed:            true,
				MarkdownDescription: "The largest TX ring the NIC supports.",
				PlanModifiers:       []planmodifier.Int64{int64planmodifier.UseStateForUnknown()},
			},
			"unit": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The systemd unit that sets the sizes at boot, `pve-nic-ring-<iface>.service`.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"boot_command": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "The command the enabled unit runs when the device appears, such as `ethtool -G cx354ap1 rx 2048 tx 2048`; " +
					"empty when the unit is missing, disabled or was changed outside Terraform.",
			},
		},
	}
}

func (r *nicRingResource) ConfigValidators(context.Context) []resource.ConfigValidator {
	return []resource.ConfigValidator{resourcevalidator.AtLeastOneOf(path.MatchRoot("rx"), path.MatchRoot("tx"))}
}

// configured returns the sizes the configuration sets (nil: unmanaged).
func configured(m nicRingModel) (rx, tx *int) {
	if !m.RX.IsNull() && !m.RX.IsUnknown() {
		v := int(m.RX.ValueInt64())
		rx = &v
	}
	if !m.TX.IsNull() && !m.TX.IsUnknown() {
		v := int(m.TX.ValueInt64())
		tx = &v
	}
	return rx, tx
}

// ModifyPlan reads the NIC so that sizes it would not keep are refused
// at plan time, and plans the unit the apply writes.
func (r *nicRingResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	framework.PlanRequireNodeExec(r.PD, &resp.Diagnostics, nicRingTypeName)
	if framework.PlanCheckNodeAttr(ctx, r.PD, req, resp, nicRingTypeName); resp.Diagnostics.HasError() {
		return
	}
	var plan, config nicRingModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() || plan.Node.IsUnknown() || plan.Iface.IsUnknown() {
		return
	}
	node, iface := plan.Node.ValueString(), plan.Iface.ValueString()
	plan.ID = types.StringValue(node + "/" + iface)
	plan.Unit = types.StringValue(ringUnitName(iface))
	if config.RX.IsUnknown() || config.TX.IsUnknown() {
		plan.BootCommand = types.StringUnknown()
	} else {
		rx, tx := configured(config)
		plan.BootCommand = types.StringValue(bootCommand(iface, rx, tx))
	}
	if r.PD != nil && r.PD.NodeExec != nil {
		info, err := readNIC(ctx, r.PD.NodeExec, node, iface)
		switch {
		case errors.Is(err, errNoDevice):
			resp.Diagnostics.AddAttributeError(path.Root("iface"), "Unknown network interface",
				fmt.Sprintf("Node %s has no network device %s (ethtool: No such device). Name a physical NIC of the node, as `ip link` shows it.%s", node, iface, nodeNICs(ctx, r.PD, node)))
			return
		case errors.Is(err, errNoRings):
			resp.Diagnostics.AddAttributeError(path.Root("iface"), "Network interface without rings", err.Error()+".")
			return
		case err != nil:
			// The node may not be reachable yet; the apply checks again.
			tflog.Warn(ctx, "cannot read the NIC at plan time; checking at apply", map[string]any{"node": node, "iface": iface, "error": err.Error()})
		default:
			plan.Driver = types.StringValue(info.driver)
			plan.RXMax = types.Int64Value(int64(info.rxMax))
			plan.TXMax = types.Int64Value(int64(info.txMax))
			rx, tx := configured(config)
			if rx != nil {
				if msg := checkRing(info, iface, "rx", *rx); msg != "" {
					resp.Diagnostics.AddAttributeError(path.Root("rx"), "Invalid rx", msg)
				}
			}
			if tx != nil {
				if msg := checkRing(info, iface, "tx", *tx); msg != "" {
					resp.Diagnostics.AddAttributeError(path.Root("tx"), "Invalid tx", msg)
				}
			}
		}
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, plan)...)
}

// read fills m from the node; found is false when the NIC is gone.
func (r *nicRingResource) read(ctx context.Context, m *nicRingModel, diags *diag.Diagnostics) (found bool, err error) {
	ex := r.PD.NodeExec
	node, iface := m.Node.ValueString(), m.Iface.ValueString()
	info, err := readNIC(ctx, ex, node, iface)
	if errors.Is(err, errNoDevice) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	m.ID = types.StringValue(node + "/" + iface)
	m.RX, m.TX = types.Int64Value(int64(info.rx)), types.Int64Value(int64(info.tx))
	m.Driver = types.StringValue(info.driver)
	m.RXMax, m.TXMax = types.Int64Value(int64(info.rxMax)), types.Int64Value(int64(info.txMax))
	m.Unit = types.StringValue(ringUnitName(iface))
	cmd, why, err := readBootCommand(ctx, ex, node, iface)
	if err != nil {
		return false, err
	}
	if why != "" && diags != nil {
		diags.AddWarning("NIC ring sizes of "+iface+" on node "+node+" are not kept across reboots",
			why+" The next apply writes and enables the unit again.")
	}
	m.BootCommand = types.StringValue(cmd)
	return true, nil
}

// readBootCommand returns what the unit sets at boot, or "" and why not.
func readBootCommand(ctx context.Context, ex *nodeexec.Pool, node, iface string) (cmd, why string, err error) {
	unitPath := ringUnitPath(iface)
	content, ok, err := readOptionalFile(ctx, ex, node, unitPath)
	if err != nil {
		return "", "", err
	}
	if !ok {
		return "", fmt.Sprintf("The unit file %s is missing.", unitPath), nil
	}
	rx, tx, ok := parseRingUnit(iface, string(content))
	if !ok {
		return "", fmt.Sprintf("The unit file %s was changed outside Terraform.", unitPath), nil
	}
	props, err := unitProps(ctx, ex, node, ringUnitName(iface), "UnitFileState", "NeedDaemonReload")
	if err != nil {
		return "", "", err
	}
	if props["UnitFileState"] != "enabled" {
		return "", fmt.Sprintf("The unit %s is %s, not enabled.", ringUnitName(iface), orUnknown(props["UnitFileState"])), nil
	}
	if props["NeedDaemonReload"] == "yes" {
		return "", fmt.Sprintf("systemd has not loaded the current unit file %s (it needs a daemon-reload).", unitPath), nil
	}
	return bootCommand(iface, rx, tx), "", nil
}

// apply sets the sizes, writes and enables the unit, and returns what the
// node then reports.
func (r *nicRingResource) apply(ctx context.Context, action string, plan, config nicRingModel, diags *diag.Diagnostics) (nicRingModel, bool) {
	if r.Client(diags) == nil || !framework.RequireNodeExec(r.PD, diags, nicRingTypeName) {
		return plan, false
	}
	ex := r.PD.NodeExec
	node, iface := plan.Node.ValueString(), plan.Iface.ValueString()
	id := node + "/" + iface
	fail := func(err error) { framework.AddUnable(diags, action, "NIC ring sizes", id, err) }
	unlock, err := ex.Lock(ctx, node)
	if err != nil {
		fail(err)
		return plan, false
	}
	defer unlock()
	// Sizes the configuration leaves unset are not touched.
	rx, tx := configured(config)
	if err := setRings(ctx, ex, node, iface, rx, tx); err != nil {
		fail(err)
		return plan, false
	}
	if err := installRingUnit(ctx, ex, node, iface, rx, tx); err != nil {
		fail(err)
		return plan, false
	}
	m := plan
	found, err := r.read(ctx, &m, nil)
	switch {
	case err != nil:
		fail(err)
		return plan, false
	case !found:
		fail(fmt.Errorf("%w: node %s has no network device %s", errNoDevice, node, iface))
		return plan, false
	case m.BootCommand.ValueString() != bootCommand(iface, rx, tx):
		fail(fmt.Errorf("the unit %s does not run %q after writing and enabling it (it runs %q)", ringUnitName(iface), bootCommand(iface, rx, tx), m.BootCommand.ValueString()))
		return plan, false
	}
	return m, true
}

// setRings sets the NIC's ring sizes rx and tx (nil: left as they are)
// with ethtool when they differ, and puts the previous sizes back when the
// driver applied other sizes than asked.
func setRings(ctx context.Context, ex *nodeexec.Pool, node, iface string, rx, tx *int) error {
	info, err := readNIC(ctx, ex, node, iface)
	if err != nil {
		return err
	}
	var args []string
	var undo []string
	for _, c := range []struct {
		attr string
		want *int
		cur  int
	}{{"rx", rx, info.rx}, {"tx", tx, info.tx}} {
		if c.want == nil {
			continue
		}
		if msg := checkRing(info, iface, c.attr, *c.want); msg != "" {
			return errors.New(msg)
		}
		if *c.want != c.cur {
			args = append(args, c.attr, strconv.Itoa(*c.want))
			undo = append(undo, c.attr, strconv.Itoa(c.cur))
		}
	}
	if len(args) == 0 {
		return nil
	}
	tflog.Info(ctx, "setting NIC ring sizes", map[string]any{"node": node, "iface": iface, "args": args})
	if _, err := ex.Run(ctx, node, nodeexec.Cmd("ethtool", "-G", iface).Arg(args...)); err != nil {
		return err
	}
	got, err := readNIC(ctx, ex, node, iface)
	if err != nil {
		return err
	}
	var changed, use []string
	if rx != nil && got.rx != *rx {
		changed = append(changed, fmt.Sprintf("rx %d instead of %d", got.rx, *rx))
		use = append(use, fmt.Sprintf("rx = %d", got.rx))
	}
	if tx != nil && got.tx != *tx {
		changed = append(changed, fmt.Sprintf("tx %d instead of %d", got.tx, *tx))
		use = append(use, fmt.Sprintf("tx = %d", got.tx))
	}
	if len(changed) == 0 {
		return nil
	}
	restored := "restored the previous sizes"
	if _, err := ex.Run(ctx, node, nodeexec.Cmd("ethtool", "-G", iface).Arg(undo...)); err != nil {
		restored = "could not restore the previous sizes: " + err.Error()
	}
	return fmt.Errorf("the %s driver of %s applied %s; the provider %s. Set values the driver keeps (such as %s), so that "+
		"what Terraform records is what the NIC runs", orUnknown(got.driver), iface, strings.Join(changed, " and "), restored, strings.Join(use, ", "))
}

// installRingUnit writes the unit that sets the sizes again at boot (when
// its content differs), reloads systemd when it needs to, and enables the
// unit.
func installRingUnit(ctx context.Context, ex *nodeexec.Pool, node, iface string, rx, tx *int) error {
	want := ringUnit(iface, rx, tx)
	cur, exists, err := readOptionalFile(ctx, ex, node, ringUnitPath(iface))
	if err != nil {
		return err
	}
	if !exists || string(cur) != want {
		if err := ex.WriteFile(ctx, node, nodeexec.File{Path: ringUnitPath(iface), Content: []byte(want), Mode: 0o644}); err != nil {
			return err
		}
	}
	props, err := unitProps(ctx, ex, node, ringUnitName(iface), "UnitFileState", "NeedDaemonReload")
	if err != nil {
		return err
	}
	if props["NeedDaemonReload"] == "yes" || props["UnitFileState"] == "" {
		if err := daemonReload(ctx, ex, node); err != nil {
			return err
		}
	}
	if props["UnitFileState"] != "enabled" {
		if _, err := ex.Run(ctx, node, nodeexec.Cmd("systemctl", "enable", ringUnitName(iface))); err != nil {
			return err
		}
	}
	return nil
}

func (r *nicRingResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan, config nicRingModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	out, ok := r.apply(ctx, "Create", plan, config, &resp.Diagnostics)
	if !ok {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &out)...)
}

func (r *nicRingResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, config nicRingModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	out, ok := r.apply(ctx, "Update", plan, config, &resp.Diagnostics)
	if !ok {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &out)...)
}

func (r *nicRingResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state nicRingModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() || r.Client(&resp.Diagnostics) == nil ||
		!framework.RequireNodeExec(r.PD, &resp.Diagnostics, nicRingTypeName) {
		return
	}
	found, err := r.read(ctx, &state, &resp.Diagnostics)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "NIC ring sizes", state.Node.ValueString()+"/"+state.Iface.ValueString(), err)
		return
	}
	if !found {
		resp.Diagnostics.AddWarning("Network interface "+state.Iface.ValueString()+" is gone",
			fmt.Sprintf("Node %s no longer has a network device %s; the resource is removed from the state.", state.Node.ValueString(), state.Iface.ValueString()))
		resp.State.RemoveResource(ctx)
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// Delete disables and removes the unit; the NIC keeps its sizes until
// the next reboot.
func (r *nicRingResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state nicRingModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() || r.Client(&resp.Diagnostics) == nil ||
		!framework.RequireNodeExec(r.PD, &resp.Diagnostics, nicRingTypeName) {
		return
	}
	ex := r.PD.NodeExec
	node, iface := state.Node.ValueString(), state.Iface.ValueString()
	fail := func(err error) {
		framework.AddUnable(&resp.Diagnostics, "Delete", "NIC ring sizes", node+"/"+iface, err)
	}
	unlock, err := ex.Lock(ctx, node)
	if err != nil {
		fail(err)
		return
	}
	defer unlock()
	props, err := unitProps(ctx, ex, node, ringUnitName(iface), "UnitFileState")
	if err != nil {
		fail(err)
		return
	}
	if props["UnitFileState"] != "" {
		// --now only marks the oneshot stopped: it has no ExecStop, the
		// NIC keeps its sizes.
		if _, err := ex.Run(ctx, node, nodeexec.Cmd("systemctl", "disable", "--now", ringUnitName(iface))); err != nil {
			fail(err)
			return
		}
	}
	if err := ex.RemoveFile(ctx, node, ringUnitPath(iface)); err != nil {
		fail(err)
		return
	}
	if err := daemonReload(ctx, ex, node); err != nil {
		fail(err)
		return
	}
	tflog.Info(ctx, "removed the NIC ring unit; the NIC keeps its sizes until the next reboot", map[string]any{"node": node, "iface": iface})
}

func (r *nicRingResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	node, iface, ok := splitImportID(req.ID)
	if !ok || !ifaceRE.MatchString(iface) {
		resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf("Import %s with <node>/<iface>, such as z2g4a/cx354ap1; got %q.", nicRingTypeName, req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("node"), node)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("iface"), iface)...)
}
