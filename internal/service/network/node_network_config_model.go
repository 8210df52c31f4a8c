package network

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

type nodeNetworkConfigModel struct {
	ID                                   types.String   `tfsdk:"id"`
	Node                                 types.String   `tfsdk:"node"`
	Interfaces                           types.Map      `tfsdk:"interfaces"`
	RollbackTimeoutSeconds               types.Int64    `tfsdk:"rollback_timeout_seconds"`
	AllowManagementChangeWithoutRollback types.Bool     `tfsdk:"allow_management_change_without_rollback"`
	Timeouts                             timeouts.Value `tfsdk:"timeouts"`
}

// ifaceObjectType is the object type of one entry of interfaces.
func ifaceObjectType() types.ObjectType {
	at := map[string]attr.Type{}
	for name, a := range ifaceSettingsAttributes(true) {
		at[name] = a.GetType()
	}
	return types.ObjectType{AttrTypes: at}
}

// interfaces returns the entries of interfaces; ok is false while the map
// or one of its entries is unknown.
func (m *nodeNetworkConfigModel) interfaces(ctx context.Context) (map[string]ifaceSettings, bool, diag.Diagnostics) {
	if m.Interfaces.IsNull() || m.Interfaces.IsUnknown() {
		return nil, !m.Interfaces.IsUnknown(), nil
	}
	for _, v := range m.Interfaces.Elements() {
		if v.IsUnknown() {
			return nil, false, nil // a whole entry unknown at plan: checks wait
		}
	}
	out := map[string]ifaceSettings{}
	diags := m.Interfaces.ElementsAs(ctx, &out, false)
	return out, true, diags
}

// ownedKind reports whether the resource owns every interface of this type
// on the node: bridges, bonds and VLANs exist only by configuration.
func ownedKind(typ string) bool { return typ == typeBridge || typ == typeBond || typ == typeVLAN }

// nicConfigured reports whether a physical NIC carries configuration
// beyond a bare `manual` stanza; autostart alone does not count (PVE's
// writer sets it on every bond slave).
func nicConfigured(in *pve.NetworkInterface) bool {
	return interfaceCIDR(in.CIDR, in.Address, in.Netmask) != "" || in.Gateway != "" ||
		interfaceCIDR(in.CIDR6, in.Address6, in.Netmask6) != "" || in.Gateway6 != "" ||
		in.MTU > 0 || strings.TrimSpace(in.Comments) != ""
}

// interfacesFromAPI is what the node has that this resource owns: every
// bridge, bond and VLAN, the NICs named in keep, and the NICs that carry
// configuration.
func interfacesFromAPI(ctx context.Context, list *pve.NetworkList, keep map[string]bool) (types.Map, diag.Diagnostics) {
	var diags diag.Diagnostics
	elems := map[string]attr.Value{}
	for i := range list.Interfaces {
		in := &list.Interfaces[i]
		switch {
		case ownedKind(in.Type):
		case in.Type == typeEth && (keep[in.Iface] || nicConfigured(in)):
		default:
			continue
		}
		var s ifaceSettings
		diags.Append(s.fromAPI(ctx, in)...)
		obj, d := types.ObjectValueFrom(ctx, ifaceObjectType().AttrTypes, s)
		diags.Append(d...)
		elems[in.Iface] = obj
	}
	m, d := types.MapValue(ifaceObjectType(), elems)
	diags.Append(d...)
	return m, diags
}

// Staging steps, in the order stageNodeNetwork runs them.
const (
	stepStrip  = "strip"  // an interface that stays loses a gateway or ports first
	stepReset  = "reset"  // an unlisted NIC goes back to a bare manual stanza
	stepDelete = "delete" // a bridge, bond or VLAN that leaves
	stepCreate = "create"
	stepUpdate = "update"
	stepMTU    = "mtu" // an MTU change of an interface that stays, last
)

type stagingStep struct {
	Kind  string
	Iface string
	Req   pve.NetworkInterfaceRequest
}

func (s stagingStep) String() string { return s.Kind + " " + s.Iface }

// typeRank orders interfaces of equal dependency depth: NICs, bonds,
// bridges, VLANs.
func typeRank(typ string) int {
	switch typ {
	case typeEth:
		return 0
	case typeBond:
		return 1
	case typeBridge:
		return 2
	case typeVLAN:
		return 3
	}
	return 4
}

// vlanParent is the interface a VLAN rides on: named by parent.ID or by
// vlan-raw-device.
func vlanParent(iface, rawDevice string) string {
	if p, _, ok := splitDottedVLAN(iface); ok {
		return p
	}
	return rawDevice
}

// dependencyOrder sorts names so that every interface comes after the
// interfaces it uses (slaves, ports, VLAN parent); ties by type, then name.
// A cycle is an error (PVE's writer refuses one anyway).
func dependencyOrder(names []string, typeOf func(string) string, deps func(string) []string) ([]string, error) {
	in := map[string]bool{}
	for _, n := range names {
		in[n] = true
	}
	done := map[string]bool{}
	var out []string
	for len(out) < len(names) {
		var ready []string
		for _, n := range names {
			if done[n] {
				continue
			}
			ok := true
			for _, d := range deps(n) {
				if in[d] && !done[d] && d != n {
					ok = false
					break
				}
			}
			if ok {
				ready = append(ready, n)
			}
		}
		if len(ready) == 0 {
			var left []string
			for _, n := range names {
				if !done[n] {
					left = append(left, n)
				}
			}
			sort.Strings(left)
			return nil, fmt.Errorf("interfaces %s use each other in a cycle (ports, slaves or VLAN parents)", strings.Join(left, ", "))
		}
		sort.Slice(ready, func(i, j int) bool {
			ri, rj := typeRank(typeOf(ready[i])), typeRank(typeOf(ready[j]))
			if ri != rj {
				return ri < rj
			}
			return ready[i] < ready[j]
		})
		// One level at a time, so the type order holds within a level.
		for _, n := range ready {
			done[n] = true
			out = append(out, n)
		}
	}
	return out, nil
}

func settingsDeps(ctx context.Context, name string, s *ifaceSettings) []string {
	var out []string
	for _, l := range []types.List{s.Slaves, s.BridgePorts} {
		if l.IsNull() || l.IsUnknown() {
			continue
		}
		var items []string
		l.ElementsAs(ctx, &items, false)
		out = append(out, items...)
	}
	if s.Type.ValueString() == typeVLAN {
		if p := vlanParent(name, s.VLANRawDevice.ValueString()); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func apiDeps(in *pve.NetworkInterface) []string {
	out := append(ifaceList(in.Slaves), ifaceList(in.BridgePorts)...)
	if in.Type == typeVLAN {
		if p := vlanParent(in.Iface, in.VLANRawDevice); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func listValue(ctx context.Context, items []string) types.List {
	l, _ := optList(ctx, items)
	return l
}

// planStaging works out the requests that turn the node's interfaces
// (current, with nothing staged) into desired, in an order in which none of
// PVE's per-request checks (one default gateway per node, a port in one
// bridge or bond) nor its writer's whole-file checks (ports, slaves and
// VLAN parents exist) trips:
//  1. interfaces that stay lose the gateways and ports they give up, and
//     unlisted NICs that carry configuration are reset;
//  2. bridges, bonds and VLANs that leave are deleted, users first;
//  3. interfaces are created or updated, everything after what it uses.
func planStaging(ctx context.Context, node string, desired map[string]ifaceSettings, current *pve.NetworkList) ([]stagingStep, error) {
	strips, resets, deleted, priors := leavingSteps(ctx, desired, current)
	byName := map[string]*pve.NetworkInterface{}
	for i := range current.Interfaces {
		byName[current.Interfaces[i].Iface] = &current.Interfaces[i]
	}
	deletes, err := deleteSteps(deleted, byName)
	if err != nil {
		return nil, err
	}
	writes, err := writeSteps(ctx, node, desired, current, priors, byName)
	if err != nil {
		return nil, err
	}
	return slices.Concat(strips, resets, deletes, writes), nil
}

// leavingSteps is step 1 of planStaging (strips of what interfaces that
// stay give up, resets of unlisted configured NICs), the bridges, bonds and
// VLANs that leave (step 2), and the current settings of each interface.
func leavingSteps(ctx context.Context, desired map[string]ifaceSettings, current *pve.NetworkList) (strips, resets []stagingStep, deleted []string, priors map[string]*ifaceSettings) {
	priors = map[string]*ifaceSettings{}
	for i := range current.Interfaces {
		in := &current.Interfaces[i]
		want, listed := desired[in.Iface]
		var prior ifaceSettings
		prior.fromAPI(ctx, in)
		priors[in.Iface] = &prior
		switch {
		case in.Type == typeEth && !listed:
			if !nicConfigured(in) {
				continue
			}
			bare := ifaceSettings{Type: types.StringValue(typeEth), Autostart: prior.Autostart,
				BridgePorts: types.ListNull(types.StringType), Slaves: types.ListNull(types.StringType)}
			req, _ := bare.request(ctx, in.Iface, &prior)
			resets = append(resets, stagingStep{Kind: stepReset, Iface: in.Iface, Req: req})
		case ownedKind(in.Type) && (!listed || want.Type.ValueString() != in.Type):
			deleted = append(deleted, in.Iface)
		case listed && want.Type.ValueString() == in.Type:
			if step, ok := stripStep(ctx, in.Iface, &prior, &want); ok {
				strips = append(strips, step)
			}
		}
	}
	return strips, resets, deleted, priors
}

// deleteSteps deletes the interfaces deleted, users before what they use.
func deleteSteps(deleted []string, byName map[string]*pve.NetworkInterface) ([]stagingStep, error) {
	var deletes []stagingStep
	delOrder, err := dependencyOrder(deleted, func(n string) string { return byName[n].Type },
		func(n string) []string { return apiDeps(byName[n]) })
	if err != nil {
		return nil, err
	}
	slices.Reverse(delOrder)
	for _, n := range delOrder {
		deletes = append(deletes, stagingStep{Kind: stepDelete, Iface: n})
	}
	return deletes, nil
}

// writeSteps is step 3 of planStaging: creates and updates in dependency
// order, with MTU changes bound by PVE's MTU rule in their own ordered pass.
func writeSteps(ctx context.Context, node string, desired map[string]ifaceSettings, current *pve.NetworkList,
	priors map[string]*ifaceSettings, byName map[string]*pve.NetworkInterface,
) ([]stagingStep, error) {
	names := make([]string, 0, len(desired))
	for n := range desired {
		names = append(names, n)
	}
	order, err := dependencyOrder(names, func(n string) string { return desired[n].Type.ValueString() },
		func(n string) []string { s := desired[n]; return settingsDeps(ctx, n, &s) })
	if err != nil {
		return nil, err
	}
	related := mtuRelated(ctx, names, desired, current)
	var writes, mtuSteps []stagingStep
	for _, n := range order {
		want := desired[n]
		cur := byName[n]
		switch {
		case cur == nil && want.Type.ValueString() == typeEth:
			return nil, fmt.Errorf("node %s has no physical interface %q; the node reports: %s", node, n, ifaceNames(current, typeEth))
		case cur != nil && (cur.Type == typeEth) != (want.Type.ValueString() == typeEth):
			return nil, fmt.Errorf("interface %q on node %s is a %s; a physical NIC cannot become another type, nor another type a NIC", n, node, cur.Type)
		case cur == nil || cur.Type != want.Type.ValueString():
			req, d := want.request(ctx, n, nil)
			if d.HasError() {
				return nil, fmt.Errorf("interface %s: %v", n, d)
			}
			writes = append(writes, stagingStep{Kind: stepCreate, Iface: n, Req: req})
		default:
			prior := priors[n]
			final, d := want.request(ctx, n, prior)
			if d.HasError() {
				return nil, fmt.Errorf("interface %s: %v", n, d)
			}
			same, _ := prior.request(ctx, n, prior)
			if sameRequest(final, same) {
				continue
			}
			// An MTU change of an interface bound to others by PVE's MTU
			// rule waits for the MTU pass; everything else goes now.
			if related[n] && (known(want.MTU) || want.MTU.IsNull()) {
				if !want.MTU.Equal(prior.MTU) {
					interim := want
					interim.MTU = prior.MTU
					req, _ := interim.request(ctx, n, prior)
					mtuSteps = append(mtuSteps, stagingStep{Kind: stepMTU, Iface: n, Req: final})
					if sameRequest(req, same) {
						continue
					}
					final = req
				}
			}
			writes = append(writes, stagingStep{Kind: stepUpdate, Iface: n, Req: final})
		}
	}
	mtu, err := orderMTUSteps(ctx, desired, priors, mtuSteps)
	if err != nil {
		return nil, err
	}
	return append(writes, mtu...), nil
}

// mtuRelated are the interfaces bound to others (ports, slaves, VLAN
// parents) now or in desired, which PVE's MTU rule ties together.
func mtuRelated(ctx context.Context, names []string, desired map[string]ifaceSettings, current *pve.NetworkList) map[string]bool {
	related := map[string]bool{}
	for _, n := range names {
		s := desired[n]
		for _, d := range settingsDeps(ctx, n, &s) {
			related[n], related[d] = true, true
		}
	}
	for i := range current.Interfaces {
		for _, d := range apiDeps(&current.Interfaces[i]) {
			related[current.Interfaces[i].Iface], related[d] = true, true
		}
	}
	return related
}

// orderMTUSteps orders the MTU changes of interfaces that stay so that
// PVE's writer ($check_mtu in INotify.pm: a bond's MTU at least its
// slaves', a bridge port's and a VLAN parent's at least the bridge's or
// VLAN's) accepts every intermediate file: first the lowered MTUs,
// interfaces on top first, then the raised ones, the interfaces underneath
// first. (Raising a bond's slaves before the bond, or lowering a bond before
// the bridge on it, would be refused.) An unset MTU counts as 1500.
func orderMTUSteps(ctx context.Context, desired map[string]ifaceSettings, priors map[string]*ifaceSettings, steps []stagingStep) ([]stagingStep, error) {
	if len(steps) == 0 {
		return nil, nil
	}
	mtu := func(v types.Int64) int64 {
		if v.IsNull() || v.IsUnknown() {
			return 1500
		}
		return v.ValueInt64()
	}
	// parents[n]: the interfaces whose MTU must be at least n's.
	parents := map[string][]string{}
	for _, n := range sortedKeys(desired) {
		s := desired[n]
		switch s.Type.ValueString() {
		case typeBond:
			for _, sl := range listItems(ctx, s.Slaves) {
				parents[sl] = append(parents[sl], n)
			}
		case typeBridge:
			parents[n] = append(parents[n], listItems(ctx, s.BridgePorts)...)
		case typeVLAN:
			if p := vlanParent(n, s.VLANRawDevice.ValueString()); p != "" {
				parents[n] = append(parents[n], p)
			}
		}
	}
	var lower, raise []string
	byName := map[string]stagingStep{}
	for _, st := range steps {
		byName[st.Iface] = st
		if mtu(desired[st.Iface].MTU) < mtu(priors[st.Iface].MTU) {
			lower = append(lower, st.Iface)
		} else {
			raise = append(raise, st.Iface)
		}
	}
	typeOf := func(n string) string { return desired[n].Type.ValueString() }
	deps := func(n string) []string { return parents[n] }
	lowerOrder, err := dependencyOrder(lower, typeOf, deps)
	if err != nil {
		return nil, err
	}
	slices.Reverse(lowerOrder)
	raiseOrder, err := dependencyOrder(raise, typeOf, deps)
	if err != nil {
		return nil, err
	}
	var out []stagingStep
	for _, n := range slices.Concat(lowerOrder, raiseOrder) {
		out = append(out, byName[n])
	}
	return out, nil
}

// sameRequest reports whether an update would change nothing. Values the
// plan leaves unknown (computed, kept by PVE) are not sent and not compared.
func sameRequest(want, have pve.NetworkInterfaceRequest) bool {
	if len(want.Delete) > 0 {
		return false
	}
	w, h := reflect.ValueOf(want), reflect.ValueOf(&have).Elem()
	for i := 0; i < w.NumField(); i++ {
		f := w.Field(i)
		if f.Kind() == reflect.Pointer && f.IsNil() {
			h.Field(i).Set(reflect.Zero(f.Type()))
		}
	}
	have.Delete = nil
	return reflect.DeepEqual(want, have)
}

// stripStep is the request that takes from an interface that stays the
// default gateways it loses and the ports or slaves it gives up, keeping
// everything else as the node has it; ok is false when it loses nothing.
func stripStep(ctx context.Context, iface string, prior, want *ifaceSettings) (stagingStep, bool) {
	s := *prior
	changed := false
	if !prior.Gateway.IsNull() && want.Gateway.IsNull() {
		s.Gateway, changed = types.StringNull(), true
	}
	if !prior.Gateway6.IsNull() && want.Gateway6.IsNull() {
		s.Gateway6, changed = types.StringNull(), true
	}
	keep := func(have, wanted types.List) (types.List, bool) {
		if have.IsNull() || wanted.IsUnknown() {
			return have, false
		}
		var h, w []string
		have.ElementsAs(ctx, &h, false)
		if !wanted.IsNull() {
			wanted.ElementsAs(ctx, &w, false)
		}
		var kept []string
		for _, x := range h {
			if slices.Contains(w, x) {
				kept = append(kept, x)
			}
		}
		return listValue(ctx, kept), len(kept) < len(h)
	}
	var c bool
	if s.BridgePorts, c = keep(prior.BridgePorts, want.BridgePorts); c {
		changed = true
	}
	if s.Slaves, c = keep(prior.Slaves, want.Slaves); c {
		changed = true
		var kept []string
		if !s.Slaves.IsNull() {
			s.Slaves.ElementsAs(ctx, &kept, false)
		}
		// PVE's writer refuses a primary that is no longer a slave.
		if !s.BondPrimary.IsNull() && !slices.Contains(kept, s.BondPrimary.ValueString()) {
			s.BondPrimary = types.StringNull()
		}
	}
	if !changed {
		return stagingStep{}, false
	}
	req, _ := s.request(ctx, iface, prior)
	return stagingStep{Kind: stepStrip, Iface: iface, Req: req}, true
}

// stageNodeNetwork sends the steps; it stops at the first refusal, naming
// the step (applyNetworkChange then reverts what was staged, all ours). A
// step whose answer was lost is read back or sent again (node_network_lost.go);
// one still unanswered after that stops it too.
func stageNodeNetwork(ctx context.Context, c *pve.Client, node string, steps []stagingStep) error {
	for _, st := range steps {
		var err error
		switch st.Kind {
		case stepDelete:
			// Only bridges, bonds and VLANs leave (planStaging).
			err = deleteInterface(ctx, c, node, st.Iface, "")
		case stepCreate:
			err = createInterface(ctx, c, node, st.Iface, st.Req)
		default:
			err = updateInterface(ctx, c, node, st.Iface, st.Req)
		}
		if pve.OutcomeUnknown(err) {
			return fmt.Errorf("staging step %q on node %s got no answer: PVE may have staged it (nothing was applied; the staged steps, "+
				"this one included if PVE took it, were reverted): %w", st.String(), node, err)
		}
		if err != nil {
			return fmt.Errorf("staging step %q on node %s was refused (nothing was applied; the steps staged before it were reverted): %w", st.String(), node, err)
		}
	}
	return nil
}
