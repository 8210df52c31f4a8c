package network

import (
	"context"
	"fmt"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
)

// Whole-plan checks across pve_node_network resources of one node
// (framework.PlanRegistry): two interfaces that claim one NIC as bond
// slave, or two with a default gateway (per address family). Each is fine
// alone; applied one by one the first is written and the second refused.
// Every planned interface records what it will claim (unchanged ones too,
// before ModifyPlan's early return), then judges the records of its node:
// a conflict needs both records, so the later of the two always sees it.

const nodeNetworkKind = "pve_node_network"

type netPlanFacts struct {
	node, iface         string
	slaves              []string
	gateway, gateway6   bool
	gatewayV, gateway6V string
}

func (r *nodeNetworkResource) planWhole(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if r.PD == nil || req.Plan.Raw.IsNull() {
		return // a destroy claims nothing
	}
	var m nodeNetworkModel
	if d := req.Plan.Get(ctx, &m); d.HasError() || !known(m.Node) || !known(m.Iface) {
		return
	}
	f := netPlanFacts{node: m.Node.ValueString(), iface: m.Iface.ValueString()}
	if !m.Slaves.IsNull() && !m.Slaves.IsUnknown() {
		var s []string
		if d := m.Slaves.ElementsAs(ctx, &s, false); !d.HasError() {
			f.slaves = s
		}
	}
	if known(m.Gateway) {
		f.gateway, f.gatewayV = true, m.Gateway.ValueString()
	}
	if known(m.Gateway6) {
		f.gateway6, f.gateway6V = true, m.Gateway6.ValueString()
	}
	id := f.node + "/" + f.iface
	all := r.PD.RecordPlan(framework.PlannedChange{Kind: nodeNetworkKind, ID: id, Action: framework.PlanKeep, Facts: f})
	for _, c := range all {
		o, ok := c.Facts.(netPlanFacts)
		if !ok || c.Kind != nodeNetworkKind || o.node != f.node || o.iface == f.iface {
			continue
		}
		for _, s := range f.slaves {
			if slices.Contains(o.slaves, s) {
				resp.Diagnostics.AddError("Unable to Apply network interface "+id,
					fmt.Sprintf("The plan makes %s a slave of both %s and %s on node %s. A NIC can belong to one bond only: applied one "+
						"after the other, the first bond would be written and the second refused. Nothing is changed. Remove %s from "+
						"the slaves of one of them.", s, f.iface, o.iface, f.node, s))
			}
		}
		if f.gateway && o.gateway {
			resp.Diagnostics.AddError("Unable to Apply network interface "+id,
				fmt.Sprintf("The plan gives node %s two IPv4 default gateways: %s on %s and %s on %s. A node has one default route per "+
					"address family (PVE refuses a second gateway); applied one after the other, the first would be written and the "+
					"second refused. Nothing is changed. Keep gateway on one interface only.", f.node, f.gatewayV, f.iface, o.gatewayV, o.iface))
		}
		if f.gateway6 && o.gateway6 {
			resp.Diagnostics.AddError("Unable to Apply network interface "+id,
				fmt.Sprintf("The plan gives node %s two IPv6 default gateways: %s on %s and %s on %s. Nothing is changed. Keep gateway6 "+
					"on one interface only.", f.node, f.gateway6V, f.iface, o.gateway6V, o.iface))
		}
	}
}
