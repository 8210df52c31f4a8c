package network

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

const nodeNetworkConfigTypeName = "pve_node_network_config"

var (
	_ resource.Resource                   = (*nodeNetworkConfigResource)(nil)
	_ resource.ResourceWithConfigure      = (*nodeNetworkConfigResource)(nil)
	_ resource.ResourceWithImportState    = (*nodeNetworkConfigResource)(nil)
	_ resource.ResourceWithValidateConfig = (*nodeNetworkConfigResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*nodeNetworkConfigResource)(nil)
)

// NewNodeNetworkConfigResource is the constructor the provider registers.
func NewNodeNetworkConfigResource() resource.Resource {
	return &nodeNetworkConfigResource{framework.ResourceBase{TypeName: nodeNetworkConfigTypeName}}
}

type nodeNetworkConfigResource struct{ framework.ResourceBase }

func (r *nodeNetworkConfigResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A node's whole interface set (`/etc/network/interfaces`) in one resource, so that a change across " +
			"interfaces, such as moving the management address from the installer's `vmbr0` to `bridge0` over `bond0`, is staged " +
			"in one pass and applied with one reload of the node.",
		Attributes: mergeAttributes(rollbackAttributes(), map[string]schema.Attribute{
			"id":   framework.IDAttribute("The node name."),
			"node": framework.NodeAttribute("Node name, such as `z2g4a`. Changing it replaces the resource (the old node is left as it is).", framework.NodeReplaces),
			"interfaces": schema.MapNestedAttribute{
				Required: true,
				MarkdownDescription: "The node's interfaces by name, such as `bond0`, `bridge0`, `bridge0.60` or `cx354ap1` (2 to 20 characters). " +
					"Each entry has the attributes of `pve_node_network` except `node`, `iface`, `active` and `timeouts`.",
				NestedObject: schema.NestedAttributeObject{Attributes: ifaceSettingsAttributes(true)},
				Validators: []validator.Map{
					mapvalidator.KeysAre(stringvalidator.LengthBetween(2, 20),
						stringvalidator.RegexMatches(ifaceNameRE, "must start with a letter and contain only letters, digits and underscores, optionally followed by .VLANID")),
				},
			},
		}),
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true}),
		},
	}
}

func (m *nodeNetworkConfigModel) applyOptions() networkApplyOptions {
	return networkApplyOptions{
		RollbackTimeout:      time.Duration(m.RollbackTimeoutSeconds.ValueInt64()) * time.Second,
		AllowWithoutRollback: m.AllowManagementChangeWithoutRollback.ValueBool(),
	}
}

func (r *nodeNetworkConfigResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	if r.Client(&resp.Diagnostics) == nil {
		return
	}
	var plan nodeNetworkConfigModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Create(ctx, defaultNetworkTimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r.write(ctx, "Create", &plan, &resp.State, &resp.Diagnostics)
}

func (r *nodeNetworkConfigResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	if r.Client(&resp.Diagnostics) == nil {
		return
	}
	var plan nodeNetworkConfigModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Update(ctx, defaultNetworkTimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r.write(ctx, "Update", &plan, &resp.State, &resp.Diagnostics)
}

// write stages the whole interface set and reloads once, then stores what
// the node reports. After a reload that failed with the new configuration
// in place it still stores it, as pve_node_network does.
func (r *nodeNetworkConfigResource) write(ctx context.Context, action string, plan *nodeNetworkConfigModel, st *tfsdk.State, diags *diagList) {
	node := plan.Node.ValueString()
	desired, _, d := plan.interfaces(ctx)
	diags.Append(d...)
	if diags.HasError() {
		return
	}
	var staged int
	warnings, err := applyNetworkChange(ctx, r.PD, node, plan.applyOptions(), func(ctx context.Context, c *pve.Client, current *pve.NetworkList) error {
		steps, err := planStaging(ctx, node, desired, current)
		if err != nil {
			return err
		}
		if len(steps) == 0 {
			return errNothingToDo
		}
		staged = len(steps)
		tflog.Info(ctx, "staging node network configuration", map[string]any{"node": node, "steps": fmt.Sprint(steps)})
		return stageNodeNetwork(ctx, c, node, steps)
	})
	if errors.Is(err, errNothingToDo) {
		err = nil
	}
	addWarnings(diags, node, warnings)
	if err != nil {
		framework.AddUnable(diags, action, "node network configuration", node, err)
		var rf *ReloadFailedError
		if !errors.As(err, &rf) || !rf.ConfigInPlace {
			return
		}
	} else if staged > 0 {
		tflog.Info(ctx, "node network configuration applied with one reload", map[string]any{"node": node, "steps": staged})
	}
	keep := map[string]bool{}
	for n := range desired {
		keep[n] = true
	}
	state, d := r.read(ctx, node, keep)
	if err != nil && d.HasError() {
		return
	}
	diags.Append(d...)
	if state == nil || diags.HasError() && err == nil {
		return
	}
	state.RollbackTimeoutSeconds = plan.RollbackTimeoutSeconds
	state.AllowManagementChangeWithoutRollback = plan.AllowManagementChangeWithoutRollback
	state.Timeouts = plan.Timeouts
	diags.Append(st.Set(ctx, state)...)
}

func (r *nodeNetworkConfigResource) read(ctx context.Context, node string, keep map[string]bool) (*nodeNetworkConfigModel, diagList) {
	var diags diagList
	list, err := listNetwork(ctx, r.PD, node)
	if err != nil {
		framework.AddUnable(&diags, "Read", "node network configuration", node, err)
		return nil, diags
	}
	ifaces, d := interfacesFromAPI(ctx, list, keep)
	diags.Append(d...)
	return &nodeNetworkConfigModel{
		ID:         types.StringValue(node),
		Node:       types.StringValue(node),
		Interfaces: ifaces,
		// Defaults until the prior state or the plan says otherwise (import).
		RollbackTimeoutSeconds:               types.Int64Value(int64(defaultRollbackTimeout / time.Second)),
		AllowManagementChangeWithoutRollback: types.BoolValue(false),
		Timeouts:                             timeouts.Value{Object: types.ObjectNull(map[string]attr.Type{"create": types.StringType, "update": types.StringType})},
	}, diags
}

func (r *nodeNetworkConfigResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if r.Client(&resp.Diagnostics) == nil {
		return
	}
	var prior nodeNetworkConfigModel
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	keep := map[string]bool{}
	if ifaces, _, _ := prior.interfaces(ctx); ifaces != nil {
		for n := range ifaces {
			keep[n] = true
		}
	}
	state, diags := r.read(ctx, prior.Node.ValueString(), keep)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !prior.RollbackTimeoutSeconds.IsNull() {
		state.RollbackTimeoutSeconds = prior.RollbackTimeoutSeconds
	}
	if !prior.AllowManagementChangeWithoutRollback.IsNull() {
		state.AllowManagementChangeWithoutRollback = prior.AllowManagementChangeWithoutRollback
	}
	if !prior.Timeouts.IsNull() {
		state.Timeouts = prior.Timeouts
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
}

// Delete never changes the node: removing its bridges would cut it off
// (its management address is on one). It only forgets the resource.
func (r *nodeNetworkConfigResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var prior nodeNetworkConfigModel
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	node := prior.Node.ValueString()
	resp.Diagnostics.AddWarning("Node network configuration of "+node+" left in place",
		"Destroying pve_node_network_config only removes it from the Terraform state. The node keeps its interfaces as they are: "+
			"deleting them would take the node's management address and cut it off. Change the network in the PVE UI, or manage it again with Terraform.")
}

func (r *nodeNetworkConfigResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if !framework.IsNodeName(req.ID) {
		resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf("Expected a node name, such as z2g4a; got %q.", req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("node"), req.ID)...)
}
