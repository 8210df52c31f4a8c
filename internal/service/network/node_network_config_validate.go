package network

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// ovsBondModes are bond_mode values PVE accepts only for OVS bonds; a Linux
// bond with one does not come up.
var ovsBondModes = []string{"balance-slb", "lacp-balance-slb", "lacp-balance-tcp"}

func linuxBondModes() []string {
	var out []string
	for _, m := range bondModes {
		if !slices.Contains(ovsBondModes, m) {
			out = append(out, m)
		}
	}
	return out
}

func ifacePath(name string) path.Path { return path.Root("interfaces").AtMapKey(name) }

func (r *nodeNetworkConfigResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m nodeNetworkConfigModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ifaces, known, d := m.interfaces(ctx)
	resp.Diagnostics.Append(d...)
	if !known || resp.Diagnostics.HasError() {
		return
	}
	for _, name := range sortedKeys(ifaces) {
		s := ifaces[name]
		validateIfaceSettings(ctx, &s, types.StringValue(name), ifacePath(name), ifacePath(name), &resp.Diagnostics)
	}
	checkInterfaceSet(ctx, ifaces, &resp.Diagnostics)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func known(v interface {
	IsNull() bool
	IsUnknown() bool
}) bool {
	return !v.IsNull() && !v.IsUnknown()
}

func listItems(ctx context.Context, l types.List) []string {
	if !known(l) {
		return nil
	}
	var out []string
	l.ElementsAs(ctx, &out, false)
	return out
}

// checkInterfaceSet runs the checks across the interfaces that need no
// node: one default gateway per family, a port
// or slave used once, the types of slaves and ports, Linux bond modes.
// Unknown values skip the checks that need them.
func checkInterfaceSet(ctx context.Context, ifaces map[string]ifaceSettings, diags *diag.Diagnostics) {
	names := sortedKeys(ifaces)
	for _, fam := range []struct {
		gw, cidr, label string
		get             func(*ifaceSettings) (types.String, types.String)
	}{
		{"gateway", "cidr", "IPv4", func(s *ifaceSettings) (types.String, types.String) { return s.Gateway, s.CIDR }},
		{"gateway6", "cidr6", "IPv6", func(s *ifaceSettings) (types.String, types.String) { return s.Gateway6, s.CIDR6 }},
	} {
		var holders []string
		for _, n := range names {
			s := ifaces[n]
			gw, _ := fam.get(&s)
			if !known(gw) {
				continue // unknown at plan: it may still turn out unset
			}
			holders = append(holders, n)
		}
		if len(holders) > 1 {
			for _, n := range holders[1:] {
				addAttrError(diags, ifacePath(n).AtName(fam.gw), "More than one default gateway",
					fmt.Sprintf("A node has one %s default gateway; %s is set on %s. Keep %s on one interface only (usually the management bridge) and remove it from the others.",
						fam.label, fam.gw, strings.Join(holders, ", "), fam.gw))
			}
		}
	}

	// A port or slave belongs to one bond or bridge.
	owner := map[string]string{}
	for _, n := range names {
		s := ifaces[n]
		attrName := ""
		var items []string
		switch s.Type.ValueString() {
		case typeBond:
			attrName, items = "slaves", listItems(ctx, s.Slaves)
		case typeBridge:
			attrName, items = "bridge_ports", listItems(ctx, s.BridgePorts)
		default:
			continue
		}
		for _, it := range items {
			if o, dup := owner[it]; dup {
				addAttrError(diags, ifacePath(n).AtName(attrName), "Interface used twice",
					fmt.Sprintf("%s is already in %s of %s; an interface can be in one bond's slaves or one bridge's bridge_ports only. Remove it from one of them.",
						it, portsAttr(ifaces, o), o))
				continue
			}
			owner[it] = n
			if it == n {
				addAttrError(diags, ifacePath(n).AtName(attrName), "Interface uses itself",
					fmt.Sprintf("%s cannot be in its own %s.", n, attrName))
				continue
			}
			other, listed := ifaces[it]
			if !listed || !known(other.Type) {
				continue
			}
			t := other.Type.ValueString()
			switch {
			case s.Type.ValueString() == typeBond && t != typeEth:
				addAttrError(diags, ifacePath(n).AtName("slaves"), "Bond slave is not a NIC",
					fmt.Sprintf("%s is a %s; a bond's slaves must be physical NICs (type = \"eth\"). Use NICs as slaves, and put a %s on top of the bond instead.", it, t, t))
			case s.Type.ValueString() == typeBridge && t == typeBridge:
				addAttrError(diags, ifacePath(n).AtName("bridge_ports"), "Bridge port is a bridge",
					fmt.Sprintf("%s is a bridge; bridge_ports takes NICs (eth), bonds or VLANs. Bridge a VLAN of %s (such as %s.10) or its ports instead.", it, it, it))
			}
			if s.Type.ValueString() == typeBridge && hasAddress(&other) {
				addAttrError(diags, ifacePath(it), "Bridge port carries an address",
					fmt.Sprintf("%s is in bridge_ports of %s but has an address; PVE refuses an address on a bridge port. Move cidr/cidr6 (and gateway) to %s.", it, n, n))
			}
		}
	}

	checkMTUs(ctx, ifaces, diags)
}

// addAttrError files an error under p and, for a path inside interfaces,
// names it in the text too: Terraform can point only at the whole map
// expression in the configuration.
func addAttrError(diags *diag.Diagnostics, p path.Path, summary, detail string) {
	if len(p.Steps()) > 1 {
		detail = p.String() + ": " + detail
	}
	diags.AddAttributeError(p, summary, detail)
}

// checkMTUs applies PVE's writer rule ($check_mtu in INotify.pm) to the
// final set: a bond's MTU is at least each slave's, a bridge port's and a
// VLAN parent's at least the bridge's or VLAN's. An unset MTU is 1500,
// except on a bond, which takes its slaves'; a NIC left out of interfaces
// ends with none.
func checkMTUs(ctx context.Context, ifaces map[string]ifaceSettings, diags *diag.Diagnostics) {
	mtuOf := func(name string, child int64) (int64, bool) {
		s, listed := ifaces[name]
		switch {
		case !listed:
			return 1500, true
		case s.MTU.IsUnknown() || s.Type.IsUnknown():
			return 0, false
		case !s.MTU.IsNull():
			return s.MTU.ValueInt64(), true
		case s.Type.ValueString() == typeBond:
			return child, true
		}
		return 1500, true
	}
	check := func(parent, child string, at path.Path, fix string) {
		c, ok := ifaces[child]
		if !ok || !known(c.MTU) {
			return
		}
		pm, ok := mtuOf(parent, c.MTU.ValueInt64())
		if ok && pm < c.MTU.ValueInt64() {
			addAttrError(diags, at, "MTU lower than the interface on top",
				fmt.Sprintf("%s has MTU %d (1500 when unset), lower than %s's %d; PVE refuses that. %s", parent, pm, child, c.MTU.ValueInt64(), fix))
		}
	}
	for _, n := range sortedKeys(ifaces) {
		s := ifaces[n]
		switch s.Type.ValueString() {
		case typeBond:
			for _, sl := range listItems(ctx, s.Slaves) {
				if _, listed := ifaces[sl]; listed && known(s.MTU) {
					check(n, sl, ifacePath(sl).AtName("mtu"), fmt.Sprintf("Set %s's mtu to at least %s's, or leave the bond's unset.", n, sl))
				}
			}
		case typeBridge:
			for _, port := range listItems(ctx, s.BridgePorts) {
				check(port, n, ifacePath(n).AtName("mtu"), fmt.Sprintf("Give %s an mtu at least as large, or lower the bridge's.", port))
			}
		case typeVLAN:
			if p := vlanParent(n, s.VLANRawDevice.ValueString()); p != "" {
				check(p, n, ifacePath(n).AtName("mtu"), fmt.Sprintf("Give %s an mtu at least as large, or lower the VLAN's.", p))
			}
		}
	}
}

func hasAddress(s *ifaceSettings) bool { return !s.CIDR.IsNull() || !s.CIDR6.IsNull() }

func portsAttr(ifaces map[string]ifaceSettings, n string) string {
	if ifaces[n].Type.ValueString() == typeBond {
		return "slaves"
	}
	return "bridge_ports"
}

// checkAgainstNode runs the checks that need the node's physical NICs:
// eth entries are NICs of the node, other entries do not take a NIC's name,
// and ports, slaves and VLAN parents are in interfaces or are NICs.
func checkAgainstNode(ctx context.Context, node string, ifaces map[string]ifaceSettings, nics []string, diags *diag.Diagnostics) {
	nicList := strings.Join(nics, ", ")
	if nicList == "" {
		nicList = "(none)"
	}
	for _, n := range sortedKeys(ifaces) {
		s := ifaces[n]
		if !known(s.Type) {
			continue
		}
		isNIC := slices.Contains(nics, n)
		switch t := s.Type.ValueString(); {
		case t == typeEth && !isNIC:
			addAttrError(diags, ifacePath(n).AtName("type"), "No such physical NIC",
				fmt.Sprintf("Node %s has no physical NIC %q; its NICs are %s. Use one of them, or another type for a bridge, bond or VLAN.", node, n, nicList))
		case t != typeEth && isNIC:
			addAttrError(diags, ifacePath(n).AtName("type"), "Physical NIC with another type",
				fmt.Sprintf("%s is a physical NIC of node %s; it can only be type = \"eth\". Name the %s differently (such as bond0, bridge0).", n, node, t))
		}
		var refs []string
		attrName := ""
		switch s.Type.ValueString() {
		case typeBond:
			attrName, refs = "slaves", listItems(ctx, s.Slaves)
		case typeBridge:
			attrName, refs = "bridge_ports", listItems(ctx, s.BridgePorts)
		case typeVLAN:
			if p := vlanParent(n, s.VLANRawDevice.ValueString()); p != "" && (isDottedVLAN(n) || known(s.VLANRawDevice)) {
				attrName, refs = "vlan_raw_device", []string{p}
			}
		}
		for _, ref := range refs {
			if _, listed := ifaces[ref]; listed || slices.Contains(nics, ref) {
				continue
			}
			at := ifacePath(n).AtName(attrName)
			if attrName == "vlan_raw_device" && isDottedVLAN(n) {
				at = ifacePath(n)
			}
			addAttrError(diags, at, "Unknown interface",
				fmt.Sprintf("%s uses %q, which is neither in interfaces nor a physical NIC of node %s (NICs: %s). "+
					"Add %q to interfaces (bridges, bonds and VLANs not listed are deleted), or use a NIC.", n, ref, node, nicList, ref))
		}
	}
}

func (r *nodeNetworkConfigResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if r.planNotes(ctx, req, resp); resp.Diagnostics.HasError() { // node_network_refs.go
		return
	}
	if req.Plan.Raw.IsNull() || r.PD == nil {
		return
	}
	var plan nodeNetworkConfigModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() || !known(plan.Node) {
		return
	}
	ifaces, ok, d := plan.interfaces(ctx)
	resp.Diagnostics.Append(d...)
	if !ok || resp.Diagnostics.HasError() {
		return
	}
	node := plan.Node.ValueString()
	list, err := listNetwork(ctx, r.PD, node)
	if err != nil {
		resp.Diagnostics.AddWarning("Interfaces of node "+node+" not checked against its NICs",
			fmt.Sprintf("Could not read the node's interfaces to check ports, slaves and VLAN parents at plan time: %v", err))
		return
	}
	var nics []string
	for _, in := range list.Interfaces {
		if in.Type == typeEth {
			nics = append(nics, in.Iface)
		}
	}
	sort.Strings(nics)
	checkAgainstNode(ctx, node, ifaces, nics, &resp.Diagnostics)
	if resp.Diagnostics.HasError() || req.State.Raw.Equal(req.Plan.Raw) {
		return // an unchanged plan changes no path
	}
	after, d := plannedInterfaceSet(ctx, list.Interfaces, ifaces)
	resp.Diagnostics.Append(d...)
	if !resp.Diagnostics.HasError() {
		resp.Diagnostics.Append(checkManagementChange(ctx, r.PD, node, list.Interfaces, after, plan.applyOptions(), "")...)
	}
}

// plannedInterfaceSet is the node's interface list as this resource's plan
// leaves it: listed interfaces as planned, unlisted bridges, bonds and VLANs
// gone, unlisted NICs reset to bare manual stanzas, everything else kept.
func plannedInterfaceSet(ctx context.Context, current []pve.NetworkInterface, ifaces map[string]ifaceSettings) ([]pve.NetworkInterface, diag.Diagnostics) {
	var diags diag.Diagnostics
	var after []pve.NetworkInterface
	seen := map[string]bool{}
	for i := range current {
		cur := &current[i]
		seen[cur.Iface] = true
		if m, ok := ifaces[cur.Iface]; ok {
			in, d := plannedInterface(ctx, cur, cur.Iface, &m)
			diags.Append(d...)
			after = append(after, in)
			continue
		}
		switch {
		case ownedKind(cur.Type):
			// deleted
		case cur.Type == typeEth && nicConfigured(cur):
			in := *cur
			in.CIDR, in.Address, in.Netmask, in.Gateway = "", "", "", ""
			in.CIDR6, in.Address6, in.Netmask6, in.Gateway6 = "", "", "", ""
			in.MTU, in.Comments = 0, ""
			after = append(after, in)
		default:
			after = append(after, *cur)
		}
	}
	names := make([]string, 0, len(ifaces))
	for name := range ifaces {
		if !seen[name] {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		m := ifaces[name]
		in, d := plannedInterface(ctx, nil, name, &m)
		diags.Append(d...)
		after = append(after, in)
	}
	return after, diags
}

// mapKey is the interface name of an attribute inside interfaces.
func mapKey(entry path.Path) (string, bool) {
	step, _ := entry.Steps().LastStep()
	k, ok := step.(path.PathStepElementKeyString)
	return string(k), ok
}

// sameTypePlan is the plan of an unset computed attribute of one type
// (bond_mode, vlan_id, vlan_raw_device) inside an interfaces entry: null
// for other types, derived from a parent.ID name where PVE derives it, the
// state's value while the entry keeps its type, else unknown.
func sameTypePlan(ctx context.Context, p path.Path, plan, state interface {
	GetAttribute(context.Context, path.Path, any) diag.Diagnostics
}, stateNull bool, diags *diag.Diagnostics) (owner bool, dotted string, id int64, keep bool) {
	base := p.ParentPath()
	step, _ := p.Steps().LastStep()
	name, _ := step.(path.PathStepAttributeName)
	var typ, priorType types.String
	diags.Append(plan.GetAttribute(ctx, base.AtName("type"), &typ)...)
	if typ.IsUnknown() {
		return true, "", 0, false
	}
	if owners := typeAttributes[string(name)]; len(owners) == 0 || typ.ValueString() != owners[0] {
		return false, "", 0, false
	}
	if key, ok := mapKey(base); ok && typ.ValueString() == typeVLAN {
		if parent, vid, ok := splitDottedVLAN(key); ok {
			return true, parent, vid, false
		}
	}
	if stateNull {
		return true, "", 0, false
	}
	diags.Append(state.GetAttribute(ctx, base.AtName("type"), &priorType)...)
	return true, "", 0, priorType.Equal(typ)
}

type sameTypeStringPlanModifier struct{}

func (sameTypeStringPlanModifier) Description(context.Context) string {
	return "keeps PVE's value while the interface keeps its type"
}
func (m sameTypeStringPlanModifier) MarkdownDescription(ctx context.Context) string {
	return m.Description(ctx)
}
func (sameTypeStringPlanModifier) PlanModifyString(ctx context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if !req.ConfigValue.IsNull() || req.Plan.Raw.IsNull() {
		return
	}
	owner, dotted, _, keep := sameTypePlan(ctx, req.Path, req.Plan, req.State, req.State.Raw.IsNull() || req.StateValue.IsNull(), &resp.Diagnostics)
	switch {
	case !owner:
		resp.PlanValue = types.StringNull()
	case dotted != "":
		resp.PlanValue = types.StringValue(dotted)
	case keep:
		resp.PlanValue = req.StateValue
	}
}

type sameTypeInt64PlanModifier struct{}

func (sameTypeInt64PlanModifier) Description(context.Context) string {
	return "keeps PVE's value while the interface keeps its type"
}
func (m sameTypeInt64PlanModifier) MarkdownDescription(ctx context.Context) string {
	return m.Description(ctx)
}
func (sameTypeInt64PlanModifier) PlanModifyInt64(ctx context.Context, req planmodifier.Int64Request, resp *planmodifier.Int64Response) {
	if !req.ConfigValue.IsNull() || req.Plan.Raw.IsNull() {
		return
	}
	owner, _, id, keep := sameTypePlan(ctx, req.Path, req.Plan, req.State, req.State.Raw.IsNull() || req.StateValue.IsNull(), &resp.Diagnostics)
	switch {
	case !owner:
		resp.PlanValue = types.Int64Null()
	case id > 0:
		resp.PlanValue = types.Int64Value(id)
	case keep:
		resp.PlanValue = req.StateValue
	}
}
