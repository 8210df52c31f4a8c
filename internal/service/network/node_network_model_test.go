package network

import (
	"context"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

func TestInterfaceCIDR(t *testing.T) {
	for _, tc := range []struct{ cidr, addr, mask, want string }{
		{"10.0.0.1/24", "10.0.0.1", "24", "10.0.0.1/24"},
		{"", "10.0.0.1", "24", "10.0.0.1/24"},
		{"", "10.0.0.1", "255.255.255.0", "10.0.0.1/24"},
		{"", "10.0.0.1", "255.255.0.0", "10.0.0.1/16"},
		{"", "", "", ""},
	} {
		if got := interfaceCIDR(tc.cidr, tc.addr, tc.mask); got != tc.want {
			t.Errorf("interfaceCIDR(%q,%q,%q) = %q, want %q", tc.cidr, tc.addr, tc.mask, got, tc.want)
		}
	}
}

func TestFromAPIBridge(t *testing.T) {
	in := &pve.NetworkInterface{Iface: "bridge0", Type: "bridge", Address: "172.27.2.10", Netmask: "24",
		Gateway: "172.27.2.254", BridgePorts: []string{"bond0"}, BridgeVLANAware: true, BridgeVIDs: "2-4094",
		Autostart: true, Active: true, Comments: "mgmt\n"}
	var m nodeNetworkModel
	if d := m.fromAPI(context.Background(), "z2g4a", in); d.HasError() {
		t.Fatal(d)
	}
	if m.ID.ValueString() != "z2g4a/bridge0" || m.CIDR.ValueString() != "172.27.2.10/24" ||
		m.Comments.ValueString() != "mgmt" || m.BridgeVIDs.ValueString() != "2-4094" || !m.BridgeVLANAware.ValueBool() {
		t.Errorf("unexpected model %+v", m)
	}
	if !m.Slaves.IsNull() || !m.VLANID.IsNull() || !m.BondMode.IsNull() {
		t.Errorf("attributes of other types must be null: %+v", m)
	}
}

func TestFromAPIBridgeWithoutPorts(t *testing.T) {
	in := &pve.NetworkInterface{Iface: "vmbr1", Type: "bridge", BridgePorts: []string{"none"}}
	var m nodeNetworkModel
	m.fromAPI(context.Background(), "n", in)
	if !m.BridgePorts.IsNull() {
		t.Errorf("PVE's 'none' placeholder must read as no ports, got %v", m.BridgePorts)
	}
	if !m.BridgeVIDs.IsNull() {
		t.Errorf("a bridge that is not VLAN-aware has no vids, got %v", m.BridgeVIDs)
	}
}

// Attributes removed from the configuration are deleted on the node with
// PVE's delete list, never sent empty.
func TestRequestDeletesRemovedAttributes(t *testing.T) {
	ctx := context.Background()
	ports, _ := types.ListValueFrom(ctx, types.StringType, []string{"bond0"})
	prior := nodeNetworkModel{Iface: types.StringValue("vmbr0"), ifaceSettings: ifaceSettings{
		Type: types.StringValue("bridge"),
		CIDR: types.StringValue("10.0.0.1/24"), Gateway: types.StringValue("10.0.0.254"),
		MTU: types.Int64Value(9000), Comments: types.StringValue("x"), BridgePorts: ports,
		BridgeVLANAware: types.BoolValue(true), BridgeVIDs: types.StringValue("2-4094"),
		Autostart: types.BoolValue(true), Slaves: types.ListNull(types.StringType),
	}}
	plan := nodeNetworkModel{Iface: types.StringValue("vmbr0"), ifaceSettings: ifaceSettings{
		Type: types.StringValue("bridge"),
		CIDR: types.StringValue("10.0.0.2/24"), Gateway: types.StringNull(), MTU: types.Int64Null(),
		Comments: types.StringNull(), BridgePorts: types.ListNull(types.StringType),
		BridgeVLANAware: types.BoolValue(false), BridgeVIDs: types.StringNull(),
		Autostart: types.BoolValue(false), Slaves: types.ListNull(types.StringType),
	}}
	r, d := plan.request(ctx, &prior)
	if d.HasError() {
		t.Fatal(d)
	}
	slices.Sort(r.Delete)
	want := []string{"bridge_ports", "bridge_vids", "comments", "gateway", "mtu"}
	if !slices.Equal(r.Delete, want) {
		t.Errorf("delete = %v, want %v", r.Delete, want)
	}
	if r.CIDR == nil || *r.CIDR != "10.0.0.2/24" || r.Autostart == nil || *r.Autostart {
		t.Errorf("changed values not sent: %+v", r)
	}
	if r.BridgeVLANAware == nil || *r.BridgeVLANAware {
		t.Errorf("vlan awareness off must be requested, got %v", r.BridgeVLANAware)
	}
}

// A vlan named parent.id never sends vlan-raw-device or vlan-id: PVE
// derives both from the name.
func TestRequestDottedVLAN(t *testing.T) {
	m := nodeNetworkModel{Iface: types.StringValue("bridge0.60"), ifaceSettings: ifaceSettings{
		Type:   types.StringValue("vlan"),
		VLANID: types.Int64Value(60), VLANRawDevice: types.StringValue("bridge0"),
		BridgePorts: types.ListNull(types.StringType), Slaves: types.ListNull(types.StringType),
	}}
	r, _ := m.request(context.Background(), nil)
	if r.VLANID != nil || r.VLANRawDevice != nil {
		t.Errorf("dotted vlan sent derived options: id=%v dev=%v", r.VLANID, r.VLANRawDevice)
	}
	m.Iface = types.StringValue("storage71")
	r, _ = m.request(context.Background(), nil)
	if r.VLANID == nil || *r.VLANID != 60 || r.VLANRawDevice == nil || *r.VLANRawDevice != "bridge0" {
		t.Errorf("custom-named vlan must send its options: %+v", r)
	}
}
