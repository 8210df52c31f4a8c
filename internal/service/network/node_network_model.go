package network

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// Interface types this resource manages. PVE knows more (OVS*, alias,
// fabric, vnet); those belong to other resources or are not managed yet.
const (
	typeBridge = "bridge"
	typeBond   = "bond"
	typeVLAN   = "vlan"
	typeEth    = "eth"
)

var interfaceTypes = []string{typeBridge, typeBond, typeVLAN, typeEth}

// bondModes are the values PVE's bond_mode accepts.
var bondModes = []string{"balance-rr", "active-backup", "balance-xor", "broadcast", "802.3ad",
	"balance-tlb", "balance-alb", "balance-slb", "lacp-balance-slb", "lacp-balance-tcp"}

var bondXmitHashPolicies = []string{"layer2", "layer2+3", "layer3+4"}

type nodeNetworkModel struct {
	ID    types.String `tfsdk:"id"`
	Node  types.String `tfsdk:"node"`
	Iface types.String `tfsdk:"iface"`
	ifaceSettings
	Active   types.Bool     `tfsdk:"active"`
	Timeouts timeouts.Value `tfsdk:"timeouts"`
	// The dead-man rollback's settings (node_network_rollback.go), not PVE's.
	RollbackTimeout types.Int64 `tfsdk:"rollback_timeout_seconds"`
	AllowNoRollback types.Bool  `tfsdk:"allow_management_change_without_rollback"`
}

// ifaceSettings are the attributes of one interface that pve_node_network
// and each entry of pve_node_network_config's interfaces share.
type ifaceSettings struct {
	Type               types.String `tfsdk:"type"`
	CIDR               types.String `tfsdk:"cidr"`
	Gateway            types.String `tfsdk:"gateway"`
	CIDR6              types.String `tfsdk:"cidr6"`
	Gateway6           types.String `tfsdk:"gateway6"`
	MTU                types.Int64  `tfsdk:"mtu"`
	Autostart          types.Bool   `tfsdk:"autostart"`
	Comments           types.String `tfsdk:"comments"`
	BridgePorts        types.List   `tfsdk:"bridge_ports"`
	BridgeVLANAware    types.Bool   `tfsdk:"bridge_vlan_aware"`
	BridgeVIDs         types.String `tfsdk:"bridge_vids"`
	Slaves             types.List   `tfsdk:"slaves"`
	BondMode           types.String `tfsdk:"bond_mode"`
	BondXmitHashPolicy types.String `tfsdk:"bond_xmit_hash_policy"`
	BondPrimary        types.String `tfsdk:"bond_primary"`
	VLANID             types.Int64  `tfsdk:"vlan_id"`
	VLANRawDevice      types.String `tfsdk:"vlan_raw_device"`
}

var timeoutAttrTypes = map[string]attr.Type{
	"create": types.StringType, "update": types.StringType, "delete": types.StringType,
}

func networkID(node, iface string) string { return node + "/" + iface }

// fromAPI sets every attribute PVE reports from one interface of the staged
// (interfaces.new) view, which is what GET returns.
func (m *nodeNetworkModel) fromAPI(ctx context.Context, node string, in *pve.NetworkInterface) diag.Diagnostics {
	m.ID = types.StringValue(networkID(node, in.Iface))
	m.Node = types.StringValue(node)
	m.Iface = types.StringValue(in.Iface)
	m.Active = types.BoolValue(in.Active)
	m.Timeouts = timeouts.Value{Object: types.ObjectNull(timeoutAttrTypes)}
	m.RollbackTimeout = types.Int64Value(int64(defaultRollbackTimeout / time.Second))
	m.AllowNoRollback = types.BoolValue(false)
	return m.ifaceSettings.fromAPI(ctx, in)
}

// fromAPI sets the shared interface attributes from what PVE reports.
func (m *ifaceSettings) fromAPI(ctx context.Context, in *pve.NetworkInterface) diag.Diagnostics {
	var diags diag.Diagnostics
	m.Type = types.StringValue(in.Type)
	m.CIDR = optString(interfaceCIDR(in.CIDR, in.Address, in.Netmask))
	m.Gateway = optString(in.Gateway)
	m.CIDR6 = optString(interfaceCIDR(in.CIDR6, in.Address6, in.Netmask6))
	m.Gateway6 = optString(in.Gateway6)
	if in.MTU > 0 {
		m.MTU = types.Int64Value(in.MTU)
	} else {
		m.MTU = types.Int64Null()
	}
	m.Autostart = types.BoolValue(in.Autostart)
	m.Comments = optString(strings.TrimSuffix(in.Comments, "\n"))

	m.BridgePorts = types.ListNull(types.StringType)
	m.BridgeVLANAware = types.BoolValue(false)
	m.BridgeVIDs = types.StringNull()
	m.Slaves = types.ListNull(types.StringType)
	m.BondMode = types.StringNull()
	m.BondXmitHashPolicy = types.StringNull()
	m.BondPrimary = types.StringNull()
	m.VLANID = types.Int64Null()
	m.VLANRawDevice = types.StringNull()

	var d diag.Diagnostics
	switch in.Type {
	case typeBridge:
		m.BridgePorts, d = optList(ctx, ifaceList(in.BridgePorts))
		diags.Append(d...)
		m.BridgeVLANAware = types.BoolValue(in.BridgeVLANAware)
		if in.BridgeVLANAware {
			m.BridgeVIDs = optString(normalizeVIDs(in.BridgeVIDs))
		}
	case typeBond:
		m.Slaves, d = optList(ctx, ifaceList(in.Slaves))
		diags.Append(d...)
		m.BondMode = optString(in.BondMode)
		m.BondXmitHashPolicy = optString(in.BondXmitHashPolicy)
		m.BondPrimary = optString(in.BondPrimary)
	case typeVLAN:
		if in.VLANID > 0 {
			m.VLANID = types.Int64Value(in.VLANID)
		}
		m.VLANRawDevice = optString(in.VLANRawDevice)
	}
	return diags
}

// request builds the PVE parameters for the planned model. On update, prior
// is the current state: attributes set there but null in the plan are
// removed with PVE's delete list, never sent empty.
func (m *nodeNetworkModel) request(ctx context.Context, prior *nodeNetworkModel) (pve.NetworkInterfaceRequest, diag.Diagnostics) {
	if prior == nil {
		return m.ifaceSettings.request(ctx, m.Iface.ValueString(), nil)
	}
	return m.ifaceSettings.request(ctx, m.Iface.ValueString(), &prior.ifaceSettings)
}

// request builds the PVE parameters of interface iface; see
// nodeNetworkModel.request.
func (m *ifaceSettings) request(ctx context.Context, iface string, prior *ifaceSettings) (pve.NetworkInterfaceRequest, diag.Diagnostics) {
	var diags diag.Diagnostics
	r := pve.NetworkInterfaceRequest{Type: m.Type.ValueString()}
	var del []string
	str := func(planned types.String, priorV func(*ifaceSettings) types.String, param string) *string {
		if !planned.IsNull() && !planned.IsUnknown() {
			v := planned.ValueString()
			return &v
		}
		if prior != nil && !priorV(prior).IsNull() {
			del = append(del, param)
		}
		return nil
	}
	r.CIDR = str(m.CIDR, func(p *ifaceSettings) types.String { return p.CIDR }, "cidr")
	r.Gateway = str(m.Gateway, func(p *ifaceSettings) types.String { return p.Gateway }, "gateway")
	r.CIDR6 = str(m.CIDR6, func(p *ifaceSettings) types.String { return p.CIDR6 }, "cidr6")
	r.Gateway6 = str(m.Gateway6, func(p *ifaceSettings) types.String { return p.Gateway6 }, "gateway6")
	r.Comments = str(m.Comments, func(p *ifaceSettings) types.String { return p.Comments }, "comments")
	r.BridgeVIDs = str(m.BridgeVIDs, func(p *ifaceSettings) types.String { return p.BridgeVIDs }, "bridge_vids")
	r.BondMode = str(m.BondMode, func(p *ifaceSettings) types.String { return p.BondMode }, "bond_mode")
	r.BondXmitHashPolicy = str(m.BondXmitHashPolicy, func(p *ifaceSettings) types.String { return p.BondXmitHashPolicy }, "bond_xmit_hash_policy")
	r.BondPrimary = str(m.BondPrimary, func(p *ifaceSettings) types.String { return p.BondPrimary }, "bond-primary")

	if !m.MTU.IsNull() && !m.MTU.IsUnknown() {
		v := m.MTU.ValueInt64()
		r.MTU = &v
	} else if prior != nil && !prior.MTU.IsNull() {
		del = append(del, "mtu")
	}
	// PVE derives the raw device and id of a vlan named parent.id from
	// the name; only custom-named vlans carry them as options.
	if m.Type.ValueString() == typeVLAN && !isDottedVLAN(iface) {
		r.VLANRawDevice = str(m.VLANRawDevice, func(p *ifaceSettings) types.String { return p.VLANRawDevice }, "vlan-raw-device")
		if !m.VLANID.IsNull() && !m.VLANID.IsUnknown() {
			v := m.VLANID.ValueInt64()
			r.VLANID = &v
		} else if prior != nil && !prior.VLANID.IsNull() {
			del = append(del, "vlan-id")
		}
	}
	if !m.Autostart.IsNull() && !m.Autostart.IsUnknown() {
		v := m.Autostart.ValueBool()
		r.Autostart = &v
	}
	if m.Type.ValueString() == typeBridge && !m.BridgeVLANAware.IsNull() && !m.BridgeVLANAware.IsUnknown() {
		v := m.BridgeVLANAware.ValueBool()
		r.BridgeVLANAware = &v
	}
	list := func(planned types.List, priorV func(*ifaceSettings) types.List, param string) *[]string {
		if !planned.IsNull() && !planned.IsUnknown() {
			var out []string
			diags.Append(planned.ElementsAs(ctx, &out, false)...)
			return &out
		}
		if prior != nil && !priorV(prior).IsNull() {
			del = append(del, param)
		}
		return nil
	}
	r.BridgePorts = list(m.BridgePorts, func(p *ifaceSettings) types.List { return p.BridgePorts }, "bridge_ports")
	r.Slaves = list(m.Slaves, func(p *ifaceSettings) types.List { return p.Slaves }, "slaves")
	if prior != nil {
		r.Delete = del
	}
	return r, diags
}

func optString(s string) types.String {
	if s == "" {
		return types.StringNull()
	}
	return types.StringValue(s)
}

func optList(ctx context.Context, items []string) (types.List, diag.Diagnostics) {
	if len(items) == 0 {
		return types.ListNull(types.StringType), nil
	}
	return types.ListValueFrom(ctx, types.StringType, items)
}

// ifaceList drops PVE's "none" placeholder for a bridge without ports.
func ifaceList(items []string) []string {
	var out []string
	for _, it := range items {
		if it != "" && it != "none" {
			out = append(out, it)
		}
	}
	return out
}

// interfaceCIDR returns address/len. PVE reports cidr next to address and
// netmask; older versions give only the latter, with netmask either a prefix
// length ("24") or dotted ("255.255.255.0").
func interfaceCIDR(cidr, address, netmask string) string {
	if cidr != "" {
		return cidr
	}
	if address == "" {
		return ""
	}
	if netmask == "" {
		return address
	}
	if _, err := strconv.Atoi(netmask); err == nil {
		return address + "/" + netmask
	}
	if ip := net.ParseIP(netmask).To4(); ip != nil {
		ones, _ := net.IPMask(ip).Size()
		return fmt.Sprintf("%s/%d", address, ones)
	}
	return address + "/" + netmask
}

// normalizeVIDs renders a VLAN list the way PVE stores it: space-separated.
func normalizeVIDs(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' || r == ';' }), " ")
}

// isDottedVLAN reports whether iface is named parent.id, from which PVE
// derives vlan-raw-device and vlan-id itself.
func isDottedVLAN(iface string) bool {
	_, _, ok := splitDottedVLAN(iface)
	return ok
}

func splitDottedVLAN(iface string) (parent string, id int64, ok bool) {
	i := strings.LastIndex(iface, ".")
	if i <= 0 || i == len(iface)-1 {
		return "", 0, false
	}
	n, err := strconv.ParseInt(iface[i+1:], 10, 64)
	if err != nil {
		return "", 0, false
	}
	return iface[:i], n, true
}
