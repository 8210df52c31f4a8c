package network

import (
	"context"
	"fmt"
	"sort"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// Plan-time references of pve_node_network (issue #13): the node, and the
// interfaces an interface is built on (bridge ports, bond slaves, a VLAN's
// raw device) must exist on the node or be created in the same plan;
// otherwise PVE's writer refuses the staged file in the apply ("bond
// 'bond0' slave 'x' does not exist", from PVE/INotify.pm's
// __write_etc_network_interfaces). pve_node_network_config checks its own
// set in checkAgainstNode.

// planRefs notes the interface for resources that refer to it (a VM's
// bridge, another interface's port) and checks what it refers to.
func (r *nodeNetworkResource) planRefs(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var m nodeNetworkModel
	if req.Plan.Get(ctx, &m).HasError() || m.Node.IsUnknown() || m.Iface.IsUnknown() {
		return
	}
	node := m.Node.ValueString()
	r.PD.PlanNote(framework.PlannedIfaces, node+"/"+m.Iface.ValueString(), m.Type.ValueString())
	if r.PD == nil || r.PD.Client == nil || (!req.State.Raw.IsNull() && req.Plan.Raw.Equal(req.State.Raw)) {
		return
	}
	framework.PlanCheckNodeAttr(ctx, r.PD, req, resp, nodeNetworkTypeName)
	if resp.Diagnostics.HasError() {
		return
	}
	var prior *nodeNetworkModel
	if !req.State.Raw.IsNull() {
		prior = &nodeNetworkModel{}
		if req.State.Get(ctx, prior).HasError() {
			return
		}
	}
	refs := newIfaceRefs(ctx, &m, prior)
	if len(refs) == 0 {
		return
	}
	list, err := listNetwork(ctx, r.PD, node)
	if err != nil {
		return // the apply meets the real error
	}
	r.reportMissingRefs(node, m.Iface.ValueString(), refs, list, &resp.Diagnostics)
}

// ifaceRef is an interface m refers to by name: at attribute attr, the
// interface name, what it is to m.
type ifaceRef struct {
	at         path.Path
	attr, name string
	what       string
	value      string // the attribute's value when it is not name
}

// newIfaceRefs are the interfaces m refers to that it did not refer to on
// the same node before (prior, nil on create): the ones to check.
func newIfaceRefs(ctx context.Context, m, prior *nodeNetworkModel) []ifaceRef {
	var refs []ifaceRef
	listRefs := func(attr string, l, before types.List, what string) {
		if l.IsNull() || l.IsUnknown() {
			return
		}
		var had map[string]bool
		if prior != nil && !before.IsNull() && !before.IsUnknown() && prior.Node.Equal(m.Node) {
			var old []types.String
			_ = before.ElementsAs(ctx, &old, false)
			had = map[string]bool{}
			for _, o := range old {
				had[o.ValueString()] = true
			}
		}
		var names []types.String
		if l.ElementsAs(ctx, &names, false).HasError() {
			return
		}
		for i, n := range names {
			if !n.IsUnknown() && !n.IsNull() && !had[n.ValueString()] {
				refs = append(refs, ifaceRef{at: path.Root(attr).AtListIndex(i), attr: attr, name: n.ValueString(), what: what})
			}
		}
	}
	var priorPorts, priorSlaves types.List
	if prior != nil {
		priorPorts, priorSlaves = prior.BridgePorts, prior.Slaves
	}
	listRefs("bridge_ports", m.BridgePorts, priorPorts, "bridge port")
	listRefs("slaves", m.Slaves, priorSlaves, "bond slave")
	if v := m.VLANRawDevice; !v.IsNull() && !v.IsUnknown() && (prior == nil || !prior.VLANRawDevice.Equal(v) || !prior.Node.Equal(m.Node)) {
		refs = append(refs, ifaceRef{at: path.Root("vlan_raw_device"), attr: "vlan_raw_device", name: v.ValueString(), what: "VLAN raw device"})
	}
	// A dotted VLAN (bcm5720p0.60) rides on the part before the dot.
	if m.Type.ValueString() == typeVLAN && (m.VLANRawDevice.IsNull() || m.VLANRawDevice.IsUnknown()) && (prior == nil || !prior.Node.Equal(m.Node)) {
		if parent, _, ok := splitDottedVLAN(m.Iface.ValueString()); ok {
			refs = append(refs, ifaceRef{path.Root("iface"), "iface", parent, "VLAN parent", m.Iface.ValueString()})
		}
	}
	return refs
}

// reportMissingRefs errors for each of refs (of interface iface) that
// neither list has nor the plan creates.
func (r *nodeNetworkResource) reportMissingRefs(node, iface string, refs []ifaceRef, list *pve.NetworkList, diags *diag.Diagnostics) {
	have := map[string]bool{}
	var nics, others []string
	for _, in := range list.Interfaces {
		have[in.Iface] = true
		switch in.Type {
		case typeEth:
			nics = append(nics, in.Iface)
		case typeBond, typeVLAN, typeBridge:
			others = append(others, in.Iface)
		}
	}
	sort.Strings(nics)
	sort.Strings(others)
	for _, rf := range refs {
		if have[rf.name] {
			continue
		}
		if _, ok := r.PD.PlanNoted(framework.PlannedIfaces, node+"/"+rf.name); ok {
			continue
		}
		refHint := rf.attr + " = pve_node_network.<name>.iface"
		if rf.value != "" {
			refHint = "depends_on = [pve_node_network.<name>]"
		}
		value := rf.value
		if value == "" {
			value = rf.name
		}
		diags.AddAttributeError(rf.at,
			fmt.Sprintf("Unable to plan %s %s: %s %s does not exist on node %s", nodeNetworkTypeName, networkID(node, iface), rf.what, rf.name, node),
			fmt.Sprintf("%s = %q, but node %s has no interface %s. Its NICs: %s; its bridges, bonds and VLANs: %s. PVE would stage "+
				"the change and refuse it when writing the file. Use one of those names, or create the interface with another "+
				"pve_node_network and refer to it (%s) so that Terraform creates it first.",
				rf.at.String(), value, node, rf.name, framework.ListOrNone(nics), framework.ListOrNone(others), refHint))
	}
}

// planNotes notes the interfaces a pve_node_network_config plans, for
// resources that refer to them (a VM's bridge).
func (r *nodeNetworkConfigResource) planNotes(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan nodeNetworkConfigModel
	if req.Plan.Get(ctx, &plan).HasError() || !known(plan.Node) {
		return
	}
	framework.PlanCheckNodeAttr(ctx, r.PD, req, resp, nodeNetworkConfigTypeName)
	ifaces, ok, _ := plan.interfaces(ctx)
	if !ok {
		return
	}
	for name, in := range ifaces {
		r.PD.PlanNote(framework.PlannedIfaces, plan.Node.ValueString()+"/"+name, in.Type.ValueString())
	}
}
