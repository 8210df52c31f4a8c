package network

import (
	"context"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

var (
	ifaceNameRE = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_]{1,20}(\.\d+)?$`)
)

// typeAttributes lists the attributes that belong to one interface type
// only; setting one on another type is refused at plan time.
var typeAttributes = map[string][]string{
	"bridge_ports":          {typeBridge},
	"bridge_vids":           {typeBridge},
	"slaves":                {typeBond},
	"bond_mode":             {typeBond},
	"bond_xmit_hash_policy": {typeBond},
	"bond_primary":          {typeBond},
	"vlan_id":               {typeVLAN},
	"vlan_raw_device":       {typeVLAN},
}

func (r *nodeNetworkResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m nodeNetworkModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	validateIfaceSettings(ctx, &m.ifaceSettings, m.Iface, path.Empty(), path.Root("iface"), &resp.Diagnostics)
}

// validateIfaceSettings applies the per-type rules to one interface whose
// attributes live under base (the root for pve_node_network, one map entry
// of pve_node_network_config); errors about the name go to namePath.
func validateIfaceSettings(ctx context.Context, m *ifaceSettings, iface types.String, base, namePath path.Path, diags *diag.Diagnostics) {
	if m.Type.IsUnknown() || m.Type.IsNull() {
		return
	}
	typ := m.Type.ValueString()
	set := map[string]attr.Value{
		"bridge_ports": m.BridgePorts, "bridge_vids": m.BridgeVIDs, "slaves": m.Slaves, "bond_mode": m.BondMode,
		"bond_xmit_hash_policy": m.BondXmitHashPolicy, "bond_primary": m.BondPrimary,
		"vlan_id": m.VLANID, "vlan_raw_device": m.VLANRawDevice,
	}
	for name, v := range set {
		if v.IsNull() || slices.Contains(typeAttributes[name], typ) {
			continue
		}
		addAttrError(diags, base.AtName(name), "Attribute not valid for this interface type",
			fmt.Sprintf("%s applies only to type = %q; this interface has type = %q. Remove %s or change type.", name, typeAttributes[name][0], typ, name))
	}
	if typ != typeBridge && !m.BridgeVLANAware.IsNull() && !m.BridgeVLANAware.IsUnknown() && m.BridgeVLANAware.ValueBool() {
		addAttrError(diags, base.AtName("bridge_vlan_aware"), "Attribute not valid for this interface type",
			fmt.Sprintf("bridge_vlan_aware applies only to type = \"bridge\"; this interface has type = %q.", typ))
	}

	checkGatewaySubnets(m, iface, base, diags)
	if typ == typeBond && known(m.BondMode) && slices.Contains(ovsBondModes, m.BondMode.ValueString()) {
		addAttrError(diags, base.AtName("bond_mode"), "OVS bond mode on a Linux bond",
			fmt.Sprintf("%q is an Open vSwitch bond mode; a Linux bond (type = \"bond\") does not come up with it. Use one of %s (802.3ad for LACP).",
				m.BondMode.ValueString(), strings.Join(linuxBondModes(), ", ")))
	}

	switch typ {
	case typeBridge:
		if !m.BridgeVIDs.IsNull() && !m.BridgeVLANAware.IsUnknown() && (m.BridgeVLANAware.IsNull() || !m.BridgeVLANAware.ValueBool()) {
			addAttrError(diags, base.AtName("bridge_vids"), "bridge_vids needs a VLAN-aware bridge",
				"Set bridge_vlan_aware = true, or remove bridge_vids.")
		}
	case typeBond:
		if m.Slaves.IsNull() {
			addAttrError(diags, base.AtName("slaves"), "Missing bond slaves",
				"A bond needs slaves, such as slaves = [\"bcm5720p0\", \"bcm5720p1\"].")
		}
		mode := m.BondMode.ValueString()
		if !m.BondXmitHashPolicy.IsNull() && !m.BondMode.IsUnknown() && mode != "balance-xor" && mode != "802.3ad" {
			addAttrError(diags, base.AtName("bond_xmit_hash_policy"), "bond_xmit_hash_policy needs bond_mode balance-xor or 802.3ad",
				fmt.Sprintf("PVE only uses a transmit hash policy in balance-xor and 802.3ad mode; bond_mode is %q. Remove bond_xmit_hash_policy or change bond_mode.", modeOrDefault(mode)))
		}
		if !m.BondPrimary.IsNull() && !m.BondPrimary.IsUnknown() {
			if !m.BondMode.IsUnknown() && mode != "active-backup" {
				addAttrError(diags, base.AtName("bond_primary"), "bond_primary needs bond_mode active-backup",
					fmt.Sprintf("PVE only uses a primary slave in active-backup mode; bond_mode is %q.", modeOrDefault(mode)))
			}
			var slaves []string
			if !m.Slaves.IsNull() && !m.Slaves.IsUnknown() {
				diags.Append(m.Slaves.ElementsAs(ctx, &slaves, true)...)
				if !slices.Contains(slaves, m.BondPrimary.ValueString()) {
					addAttrError(diags, base.AtName("bond_primary"), "bond_primary is not a slave",
						fmt.Sprintf("bond_primary %q must be one of slaves %v.", m.BondPrimary.ValueString(), slaves))
				}
			}
		}
	case typeVLAN:
		validateVLANName(m, iface, base, namePath, diags)
	}
}

func modeOrDefault(mode string) string {
	if mode == "" {
		return "balance-rr (the default)"
	}
	return mode
}

// validateVLANName applies PVE's naming rules: parent.ID derives both values
// from the name, vlanID needs a raw device, any other name needs both.
func validateVLANName(m *ifaceSettings, iface types.String, base, namePath path.Path, diags *diag.Diagnostics) {
	if iface.IsUnknown() || iface.IsNull() {
		return
	}
	name := iface.ValueString()
	if parent, id, ok := splitDottedVLAN(name); ok {
		if id < 1 || id > 4094 {
			addAttrError(diags, namePath, "VLAN id out of range",
				fmt.Sprintf("The VLAN id in %q must be between 1 and 4094.", name))
		}
		if !m.VLANID.IsNull() && !m.VLANID.IsUnknown() && m.VLANID.ValueInt64() != id {
			addAttrError(diags, base.AtName("vlan_id"), "vlan_id contradicts the interface name",
				fmt.Sprintf("%q carries VLAN %d in its name; remove vlan_id or set it to %d.", name, id, id))
		}
		if !m.VLANRawDevice.IsNull() && !m.VLANRawDevice.IsUnknown() && m.VLANRawDevice.ValueString() != parent {
			addAttrError(diags, base.AtName("vlan_raw_device"), "vlan_raw_device contradicts the interface name",
				fmt.Sprintf("%q rides on %q by its name; remove vlan_raw_device or set it to %q.", name, parent, parent))
		}
		return
	}
	if m.VLANRawDevice.IsNull() {
		addAttrError(diags, base.AtName("vlan_raw_device"), "Missing vlan_raw_device",
			fmt.Sprintf("A VLAN not named PARENT.ID (such as bridge0.60) needs vlan_raw_device; %q is not.", name))
	}
	if strings.HasPrefix(name, "vlan") {
		if id, err := strconv.ParseInt(strings.TrimPrefix(name, "vlan"), 10, 64); err == nil {
			if id < 1 || id > 4094 {
				addAttrError(diags, namePath, "VLAN id out of range",
					fmt.Sprintf("The VLAN id in %q must be between 1 and 4094.", name))
			}
			return
		}
	}
	if m.VLANID.IsNull() {
		addAttrError(diags, base.AtName("vlan_id"), "Missing vlan_id",
			fmt.Sprintf("A VLAN with a custom name such as %q needs vlan_id.", name))
	}
}

// vidsValidator checks a space-separated list of VLAN ids and ranges.
type vidsValidator struct{}

func (vidsValidator) Description(context.Context) string {
	return "space-separated VLAN ids (1-4094) and ranges such as `2-4094` or `10 20 100-200`"
}
func (v vidsValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }
func (v vidsValidator) ValidateString(ctx context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	s := req.ConfigValue.ValueString()
	fail := func(why string) {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid bridge_vids",
			fmt.Sprintf("%q: %s. Use %s.", s, why, v.Description(ctx)))
	}
	items := strings.Split(s, " ")
	if strings.TrimSpace(s) == "" {
		fail("the list is empty")
		return
	}
	for _, it := range items {
		lo, hi, isRange := strings.Cut(it, "-")
		a, err1 := strconv.Atoi(lo)
		b := a
		var err2 error
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		switch {
		case it == "":
			fail("items must be separated by single spaces")
			return
		case err1 != nil || err2 != nil:
			fail(fmt.Sprintf("%q is not a VLAN id or range", it))
			return
		case a < 1 || b > 4094 || a > b:
			fail(fmt.Sprintf("%q is outside 1-4094 or reversed", it))
			return
		}
	}
}

// bridgeVIDsPlanModifier plans bridge_vids when it is not configured: none
// on a bridge that is not VLAN-aware, PVE's current value while the bridge
// stays VLAN-aware, otherwise unknown until PVE reports its default.
type bridgeVIDsPlanModifier struct{}

func (bridgeVIDsPlanModifier) Description(context.Context) string {
	return "keeps PVE's bridge_vids while the bridge stays VLAN-aware"
}
func (m bridgeVIDsPlanModifier) MarkdownDescription(ctx context.Context) string {
	return m.Description(ctx)
}
func (bridgeVIDsPlanModifier) PlanModifyString(ctx context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if !req.ConfigValue.IsNull() {
		return
	}
	// Siblings of this attribute: the root for pve_node_network, the
	// interface's map entry for pve_node_network_config.
	base := req.Path.ParentPath()
	var aware, priorAware types.Bool
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, base.AtName("bridge_vlan_aware"), &aware)...)
	var typ types.String
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, base.AtName("type"), &typ)...)
	if typ.ValueString() != typeBridge || (!aware.IsUnknown() && !aware.ValueBool()) {
		resp.PlanValue = types.StringNull()
		return
	}
	if req.State.Raw.IsNull() || req.StateValue.IsNull() {
		return
	}
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, base.AtName("bridge_vlan_aware"), &priorAware)...)
	if priorAware.ValueBool() && !req.StateValue.IsNull() {
		resp.PlanValue = req.StateValue
	}
}

// activePlanModifier keeps `active` as it is unless autostart changes, the
// only attribute that decides whether a reload brings the interface up;
// without it every update would show active as "known after apply".
type activePlanModifier struct{}

func (activePlanModifier) Description(context.Context) string {
	return "keeps active unless autostart changes"
}
func (m activePlanModifier) MarkdownDescription(ctx context.Context) string {
	return m.Description(ctx)
}
func (activePlanModifier) PlanModifyBool(ctx context.Context, req planmodifier.BoolRequest, resp *planmodifier.BoolResponse) {
	if req.State.Raw.IsNull() || req.Plan.Raw.IsNull() || req.StateValue.IsNull() {
		return
	}
	var planned, prior types.Bool
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("autostart"), &planned)...)
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("autostart"), &prior)...)
	if !planned.IsUnknown() && planned.Equal(prior) {
		resp.PlanValue = req.StateValue
	}
}

// checkGatewaySubnets refuses a gateway outside its interface's subnet:
// PVE writes it, and the node then has no route to its default gateway
// (off the management network, that cuts the node off). Unknown values
// skip the check.
func checkGatewaySubnets(m *ifaceSettings, iface types.String, base path.Path, diags *diag.Diagnostics) {
	name := "the interface"
	if known(iface) {
		name = iface.ValueString()
	}
	for _, fam := range []struct {
		gwName, cidrName string
		gw, cidr         types.String
	}{
		{"gateway", "cidr", m.Gateway, m.CIDR},
		{"gateway6", "cidr6", m.Gateway6, m.CIDR6},
	} {
		if !known(fam.gw) || !known(fam.cidr) {
			continue
		}
		p, err1 := netip.ParsePrefix(fam.cidr.ValueString())
		a, err2 := netip.ParseAddr(fam.gw.ValueString())
		if err1 == nil && err2 == nil && !p.Masked().Contains(a) {
			addAttrError(diags, base.AtName(fam.gwName), "Gateway outside the interface's subnet",
				fmt.Sprintf("%s %s of %s is not in %s's subnet %s (from %s = %q); the node could not reach it. "+
					"Use a gateway inside %s, or fix %s.", fam.gwName, a, name, name, p.Masked(), fam.cidrName, fam.cidr.ValueString(), p.Masked(), fam.cidrName))
		}
	}
}
