// Package network manages node networking: pve_node_network and the
// pve_node_networks data source.
package network

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

const nodeNetworkTypeName = "pve_node_network"

// defaultNetworkTimeout bounds one stage-and-reload; ifreload normally takes
// seconds, but a node under load or a hung bond negotiation can take longer.
const defaultNetworkTimeout = 5 * time.Minute

var (
	_ resource.Resource                   = (*nodeNetworkResource)(nil)
	_ resource.ResourceWithConfigure      = (*nodeNetworkResource)(nil)
	_ resource.ResourceWithImportState    = (*nodeNetworkResource)(nil)
	_ resource.ResourceWithValidateConfig = (*nodeNetworkResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*nodeNetworkResource)(nil)
)

// NewNodeNetworkResource is the constructor the provider registers.
func NewNodeNetworkResource() resource.Resource {
	return &nodeNetworkResource{framework.ResourceBase{TypeName: nodeNetworkTypeName}}
}

type nodeNetworkResource struct{ framework.ResourceBase }

func (r *nodeNetworkResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := ifaceSettingsAttributes(false)
	resp.Schema = schema.Schema{
		MarkdownDescription: "One network interface of a node (`/etc/network/interfaces`): a bridge, bond, VLAN or physical NIC (`eth`). " +
			"PVE stages every change in `interfaces.new`; this resource applies it at once (`ifreload -a`, one node at a time, never two reloads on one node at once) " +
			"and reverts the staged change if the reload fails. It refuses to run while the node has pending network changes made outside Terraform. " +
			"A physical NIC (`eth`) always exists: creating the resource adopts it, destroying it removes its configuration, never the NIC.",
		Attributes: mergeAttributes(attrs, rollbackAttributes(), map[string]schema.Attribute{
			"id":   framework.IDAttribute("`node/iface`."),
			"node": framework.NodeAttribute("Node name, such as `z2g4a`. Changing it replaces the interface.", framework.NodeReplaces),
			"iface": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Interface name, such as `bridge0`, `bond0`, `bridge0.60` or `cx354ap1` (at most 20 characters). Changing it replaces the interface.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators: []validator.String{
					stringvalidator.LengthBetween(2, 20),
					stringvalidator.RegexMatches(ifaceNameRE, "must start with a letter and contain only letters, digits and underscores, optionally followed by .VLANID"),
				},
			},
			"active": schema.BoolAttribute{
				Computed:            true,
				MarkdownDescription: "Whether the interface is up on the node.",
				PlanModifiers:       []planmodifier.Bool{activePlanModifier{}},
			},
		}),
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		},
	}
}

// ifaceSettingsAttributes is the schema of ifaceSettings. At the root
// (pve_node_network) a type change replaces the resource and computed
// values keep their state; nested (an entry of pve_node_network_config's
// interfaces) the type may change in place, so computed values are kept
// only while the entry keeps its type.
func ifaceSettingsAttributes(nested bool) map[string]schema.Attribute {
	typeModifiers := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	typeChange := " Changing it replaces the interface."
	keepString := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	keepInt64 := []planmodifier.Int64{int64planmodifier.UseStateForUnknown()}
	if nested {
		typeModifiers = nil
		typeChange = " Changing a bridge, bond or VLAN to another type deletes and recreates it in the same reload."
		keepString = []planmodifier.String{sameTypeStringPlanModifier{}}
		keepInt64 = []planmodifier.Int64{sameTypeInt64PlanModifier{}}
	}
	return mergeAttributes(ifaceAddressAttributes(typeChange, typeModifiers), ifaceKindAttributes(keepString, keepInt64))
}

// ifaceAddressAttributes are the settings every interface type has: its
// type, addresses, MTU, autostart and comment.
func ifaceAddressAttributes(typeChange string, typeModifiers []planmodifier.String) map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"type": schema.StringAttribute{
			Required:            true,
			MarkdownDescription: "`bridge`, `bond`, `vlan` or `eth` (a physical NIC)." + typeChange,
			PlanModifiers:       typeModifiers,
			Validators:          []validator.String{stringvalidator.OneOf(interfaceTypes...)},
		},
		"cidr": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "IPv4 address with prefix length, such as `172.27.2.10/24`.",
			Validators:          []validator.String{framework.CIDR(framework.IPv4)},
		},
		"gateway": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "IPv4 default gateway. A node has one default gateway: PVE refuses a second one on another interface.",
			Validators:          []validator.String{framework.IP(framework.IPv4), stringvalidator.AlsoRequires(path.MatchRelative().AtParent().AtName("cidr"))},
		},
		"cidr6": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "IPv6 address with prefix length, such as `fd00::10/64`.",
			Validators:          []validator.String{framework.CIDR(framework.IPv6)},
		},
		"gateway6": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "IPv6 default gateway.",
			Validators:          []validator.String{framework.IP(framework.IPv6), stringvalidator.AlsoRequires(path.MatchRelative().AtParent().AtName("cidr6"))},
		},
		"mtu": schema.Int64Attribute{
			Optional:            true,
			MarkdownDescription: "MTU, 1280 to 65520. A bond's slaves, a bridge's ports and a VLAN's raw device need an MTU at least as large (PVE's default is 1500).",
			Validators:          []validator.Int64{int64validator.Between(1280, 65520)},
		},
		"autostart": schema.BoolAttribute{
			Optional:            true,
			Computed:            true,
			Default:             booldefault.StaticBool(true),
			MarkdownDescription: "Bring the interface up at boot (`auto` line). Default `true`, as in the PVE UI.",
		},
		"comments": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "Comment stored with the interface.",
		},
	}
}

// ifaceKindAttributes are the settings of one interface type each: a
// bridge's, a bond's and a VLAN's.
func ifaceKindAttributes(keepString []planmodifier.String, keepInt64 []planmodifier.Int64) map[string]schema.Attribute {
	onlyFor := func(t string) string { return " Only for `type = \"" + t + "\"`." }
	return map[string]schema.Attribute{
		"bridge_ports": schema.ListAttribute{
			ElementType:         types.StringType,
			Optional:            true,
			MarkdownDescription: "Interfaces enslaved to the bridge, such as `[\"bond0\"]`." + onlyFor(typeBridge),
			Validators: []validator.List{
				listvalidator.SizeAtLeast(1), listvalidator.UniqueValues(),
				listvalidator.ValueStringsAre(stringvalidator.RegexMatches(ifaceNameRE, "must be an interface name")),
			},
		},
		"bridge_vlan_aware": schema.BoolAttribute{
			Optional:            true,
			Computed:            true,
			Default:             booldefault.StaticBool(false),
			MarkdownDescription: "Make the bridge VLAN-aware. Default `false`." + onlyFor(typeBridge),
		},
		"bridge_vids": schema.StringAttribute{
			Optional:            true,
			Computed:            true,
			MarkdownDescription: "VLAN ids a VLAN-aware bridge carries, space-separated ids and ranges such as `2-4094` or `10 20 100-200`. PVE uses `2-4094` when unset. Needs `bridge_vlan_aware = true`.",
			Validators:          []validator.String{vidsValidator{}},
			PlanModifiers:       []planmodifier.String{bridgeVIDsPlanModifier{}},
		},
		"slaves": schema.ListAttribute{
			ElementType:         types.StringType,
			Optional:            true,
			MarkdownDescription: "Interfaces bonded together, such as `[\"bcm5720p0\", \"bcm5720p1\"]`. Required for a bond." + onlyFor(typeBond),
			Validators: []validator.List{
				listvalidator.SizeAtLeast(1), listvalidator.UniqueValues(),
				listvalidator.ValueStringsAre(stringvalidator.RegexMatches(ifaceNameRE, "must be an interface name")),
			},
		},
		"bond_mode": schema.StringAttribute{
			Optional:            true,
			Computed:            true,
			MarkdownDescription: "Bonding mode: `" + strings.Join(linuxBondModes(), "`, `") + "`. PVE uses `balance-rr` when unset; the Open vSwitch modes (`balance-slb`, `lacp-balance-slb`, `lacp-balance-tcp`) are refused, since a Linux bond does not come up with them." + onlyFor(typeBond),
			Validators:          []validator.String{stringvalidator.OneOf(bondModes...)},
			PlanModifiers:       keepString,
		},
		"bond_xmit_hash_policy": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "Transmit hash policy (`layer2`, `layer2+3`, `layer3+4`); only with bond_mode `balance-xor` or `802.3ad`." + onlyFor(typeBond),
			Validators:          []validator.String{stringvalidator.OneOf(bondXmitHashPolicies...)},
		},
		"bond_primary": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "Preferred slave of an `active-backup` bond; must be one of `slaves`." + onlyFor(typeBond),
			Validators:          []validator.String{stringvalidator.RegexMatches(ifaceNameRE, "must be an interface name")},
		},
		"vlan_id": schema.Int64Attribute{
			Optional:            true,
			Computed:            true,
			MarkdownDescription: "VLAN tag, 1 to 4094. Derived from the name for `parent.ID` names such as `bridge0.60`; required for other names." + onlyFor(typeVLAN),
			Validators:          []validator.Int64{int64validator.Between(1, 4094)},
			PlanModifiers:       keepInt64,
		},
		"vlan_raw_device": schema.StringAttribute{
			Optional:            true,
			Computed:            true,
			MarkdownDescription: "Interface the VLAN rides on. Derived from the name for `parent.ID` names; required for other names." + onlyFor(typeVLAN),
			Validators:          []validator.String{stringvalidator.RegexMatches(ifaceNameRE, "must be an interface name")},
			PlanModifiers:       keepString,
		},
	}
}

func mergeAttributes(maps ...map[string]schema.Attribute) map[string]schema.Attribute {
	out := map[string]schema.Attribute{}
	for _, m := range maps {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func (r *nodeNetworkResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	if r.Client(&resp.Diagnostics) == nil {
		return
	}
	var plan nodeNetworkModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Create(ctx, defaultNetworkTimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	node, iface := plan.Node.ValueString(), plan.Iface.ValueString()
	body, diags := plan.request(ctx, nil)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	warnings, err := applyNetworkChange(ctx, r.PD, node, plan.applyOptions(), func(ctx context.Context, c *pve.Client, current *pve.NetworkList) error {
		if plan.Type.ValueString() == typeEth {
			// A physical NIC is always listed; "creating" it configures it.
			existing := findInterface(current.Interfaces, iface)
			if existing == nil {
				return fmt.Errorf("node %s has no physical interface %q; the node reports: %s", node, iface, ifaceNames(current, typeEth))
			}
			if existing.Type != typeEth {
				return fmt.Errorf("interface %q on node %s is a %s, not a physical NIC (eth)", iface, node, existing.Type)
			}
			return updateInterface(ctx, c, node, iface, body)
		}
		return createInterface(ctx, c, node, iface, body)
	})
	r.finishWrite(ctx, "Create", &plan, warnings, err, &resp.State, &resp.Diagnostics)
}

func (r *nodeNetworkResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if r.Client(&resp.Diagnostics) == nil {
		return
	}
	var prior nodeNetworkModel
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	node, iface := prior.Node.ValueString(), prior.Iface.ValueString()
	state, found, diags := r.read(ctx, node, iface)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !found {
		tflog.Warn(ctx, "network interface no longer exists; removing it from state", map[string]any{"id": networkID(node, iface)})
		resp.State.RemoveResource(ctx)
		return
	}
	if !prior.Timeouts.IsNull() {
		state.Timeouts = prior.Timeouts
	}
	state.keepRollbackSettings(&prior)
	resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
}

func (r *nodeNetworkResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	if r.Client(&resp.Diagnostics) == nil {
		return
	}
	var plan, prior nodeNetworkModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Update(ctx, defaultNetworkTimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	node, iface := plan.Node.ValueString(), plan.Iface.ValueString()
	body, diags := plan.request(ctx, &prior)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	warnings, err := applyNetworkChange(ctx, r.PD, node, plan.applyOptions(), func(ctx context.Context, c *pve.Client, current *pve.NetworkList) error {
		if findInterface(current.Interfaces, iface) == nil {
			return fmt.Errorf("interface %q no longer exists on node %s: %w", iface, node, pve.ErrNotFound)
		}
		return updateInterface(ctx, c, node, iface, body)
	})
	r.finishWrite(ctx, "Update", &plan, warnings, err, &resp.State, &resp.Diagnostics)
}

func (r *nodeNetworkResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	if r.Client(&resp.Diagnostics) == nil {
		return
	}
	var prior nodeNetworkModel
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := prior.Timeouts.Delete(ctx, defaultNetworkTimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	node, iface := prior.Node.ValueString(), prior.Iface.ValueString()
	id := networkID(node, iface)
	warnings, err := applyNetworkChange(ctx, r.PD, node, prior.applyOptions(), func(ctx context.Context, c *pve.Client, current *pve.NetworkList) error {
		in := findInterface(current.Interfaces, iface)
		if in == nil {
			return errNothingToDo
		}
		// For an eth this drops its stanza; the NIC itself stays listed.
		return deleteInterface(ctx, c, node, iface, in.Type)
	})
	addWarnings(&resp.Diagnostics, id, warnings)
	if err != nil && !errors.Is(err, errNothingToDo) && !pve.IsNotFound(err) {
		framework.AddUnable(&resp.Diagnostics, "Delete", "network interface", id, err)
	}
}

func (r *nodeNetworkResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	node, iface, ok := strings.Cut(req.ID, "/")
	if !ok || node == "" || iface == "" || strings.Contains(iface, "/") {
		resp.Diagnostics.AddError("Invalid import ID",
			fmt.Sprintf("Expected NODE/IFACE, such as z2g4a/bridge0; got %q.", req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("node"), node)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("iface"), iface)...)
}

// read returns the interface as the node lists it, from the per-command
// cache of the node's interface list (one GET per node, not per interface).
func (r *nodeNetworkResource) read(ctx context.Context, node, iface string) (*nodeNetworkModel, bool, diagList) {
	var diags diagList
	list, err := listNetwork(ctx, r.PD, node)
	if err != nil {
		framework.AddUnable(&diags, "Read", "network interface", networkID(node, iface), err)
		return nil, false, diags
	}
	in := findInterface(list.Interfaces, iface)
	if in == nil {
		return nil, false, diags
	}
	var m nodeNetworkModel
	diags.Append(m.fromAPI(ctx, node, in)...)
	return &m, true, diags
}

// finishWrite reports a create or update and stores what the node has now,
// read back from PVE. After a reload that failed with the new configuration
// already in /etc/network/interfaces it still stores it (Terraform marks a
// failed create tainted), so state never claims less than the node has and
// the next apply replaces instead of failing on "interface already exists".
func (r *nodeNetworkResource) finishWrite(ctx context.Context, action string, plan *nodeNetworkModel, warnings []string, err error, st *tfsdk.State, diags *diagList) {
	node, iface := plan.Node.ValueString(), plan.Iface.ValueString()
	id := networkID(node, iface)
	addWarnings(diags, id, warnings)
	if err != nil {
		framework.AddUnable(diags, action, "network interface", id, err)
		var rf *ReloadFailedError
		if !errors.As(err, &rf) || !rf.ConfigInPlace {
			return
		}
	}
	state, found, d := r.read(ctx, node, iface)
	if err != nil {
		if !d.HasError() && found {
			state.Timeouts = plan.Timeouts
			state.keepRollbackSettings(plan)
			diags.Append(st.Set(ctx, state)...)
		}
		return
	}
	diags.Append(d...)
	if diags.HasError() {
		return
	}
	if !found {
		diags.AddError("Unable to "+action+" network interface "+id, "PVE accepted and applied the change but no longer lists the interface.")
		return
	}
	state.Timeouts = plan.Timeouts
	state.keepRollbackSettings(plan)
	diags.Append(st.Set(ctx, state)...)
}

// errNothingToDo ends a change early when the staging step finds nothing
// to do; no reload follows.
var errNothingToDo = errors.New("nothing to change")

func addWarnings(diags *diagList, id string, warnings []string) {
	for _, w := range warnings {
		if strings.HasPrefix(w, cutoverConfirmedPrefix) {
			diags.AddWarning("Management network change applied on "+id, w)
			continue
		}
		diags.AddWarning("Network reload on "+id+" reported warnings", w)
	}
}
