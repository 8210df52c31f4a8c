package network

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// freshInstall is what the PVE installer leaves: vmbr0 on the chosen NIC
// with the address and gateway, the other NICs unconfigured.
func freshInstall() []pve.NetworkInterface {
	return []pve.NetworkInterface{
		{Iface: "bcm5720p0", Type: "eth", Method: "manual", Autostart: true},
		{Iface: "bcm5720p1", Type: "eth", Method: "manual"},
		{Iface: "cx354ap1", Type: "eth", Method: "manual"},
		{Iface: "vmbr0", Type: "bridge", Method: "static", Autostart: true, Address: "172.27.2.10", Netmask: "24",
			CIDR: "172.27.2.10/24", Gateway: "172.27.2.254", BridgePorts: []string{"bcm5720p0"}},
	}
}

// edit returns a copy of list with fn applied to iface (added when missing;
// removed when fn returns false).
func edit(list []pve.NetworkInterface, iface string, fn func(*pve.NetworkInterface) bool) []pve.NetworkInterface {
	out := slices.Clone(list)
	for i := range out {
		if out[i].Iface == iface {
			if !fn(&out[i]) {
				return slices.Delete(out, i, i+1)
			}
			return out
		}
	}
	in := pve.NetworkInterface{Iface: iface}
	if fn(&in) {
		out = append(out, in)
	}
	return out
}

func cutover(list []pve.NetworkInterface) []pve.NetworkInterface {
	list = edit(list, "vmbr0", func(in *pve.NetworkInterface) bool {
		in.Address, in.Netmask, in.CIDR, in.Gateway, in.Method = "", "", "", "", "manual"
		in.BridgePorts = nil
		return true
	})
	list = edit(list, "bond0", func(in *pve.NetworkInterface) bool {
		in.Type, in.Slaves, in.BondMode, in.Autostart = "bond", []string{"bcm5720p0", "bcm5720p1"}, "802.3ad", true
		return true
	})
	return edit(list, "bridge0", func(in *pve.NetworkInterface) bool {
		in.Type, in.Method, in.Autostart = "bridge", "static", true
		in.CIDR, in.Address, in.Netmask, in.Gateway = "172.27.2.10/24", "172.27.2.10", "24", "172.27.2.254"
		in.BridgePorts = []string{"bond0"}
		return true
	})
}

func TestTouchesManagementPath(t *testing.T) {
	const mgmt = "172.27.2.10"
	for _, tc := range []struct {
		name   string
		addr   string
		before []pve.NetworkInterface
		after  []pve.NetworkInterface
		want   string // "" means not touched
	}{
		{
			name: "the cutover", addr: mgmt, before: freshInstall(), after: cutover(freshInstall()),
			want: "moves 172.27.2.10/24 from vmbr0 (port bcm5720p0) to bridge0 (port bond0: bcm5720p0, bcm5720p1); " +
				"default gateway 172.27.2.254 from vmbr0 to bridge0",
		},
		{
			name: "an unrelated NIC", addr: mgmt, before: freshInstall(),
			after: edit(freshInstall(), "cx354ap1", func(in *pve.NetworkInterface) bool {
				in.CIDR, in.MTU = "169.254.50.10/24", 9000
				return true
			}),
		},
		{
			name: "a new bridge elsewhere", addr: mgmt, before: freshInstall(),
			after: edit(freshInstall(), "vmbr1", func(in *pve.NetworkInterface) bool {
				in.Type, in.BridgePorts = "bridge", []string{"cx354ap1"}
				return true
			}),
		},
		{
			name: "comments and kernel state are not the path", addr: mgmt, before: freshInstall(),
			after: edit(freshInstall(), "vmbr0", func(in *pve.NetworkInterface) bool {
				in.Comments, in.Active, in.Exists = "management\n", true, true
				return true
			}),
		},
		{
			name: "a wrong prefix", addr: mgmt, before: freshInstall(),
			after: edit(freshInstall(), "vmbr0", func(in *pve.NetworkInterface) bool {
				in.CIDR, in.Netmask = "172.27.2.10/8", "8"
				return true
			}),
			want: "changes vmbr0, which holds the management address 172.27.2.10: cidr 172.27.2.10/24 -> 172.27.2.10/8",
		},
		{
			name: "another address", addr: mgmt, before: freshInstall(),
			after: edit(freshInstall(), "vmbr0", func(in *pve.NetworkInterface) bool {
				in.CIDR, in.Address = "172.27.2.11/24", "172.27.2.11"
				return true
			}),
			want: "changes vmbr0, which holds the management address 172.27.2.10: cidr 172.27.2.10/24 -> 172.27.2.11/24",
		},
		{
			name: "the bridge's port swapped", addr: mgmt, before: freshInstall(),
			after: edit(freshInstall(), "vmbr0", func(in *pve.NetworkInterface) bool {
				in.BridgePorts = []string{"bcm5720p1"}
				return true
			}),
			want: "changes vmbr0, which holds the management address 172.27.2.10: bridge_ports bcm5720p0 -> bcm5720p1",
		},
		{
			name: "the port's own settings", addr: mgmt, before: freshInstall(),
			after: edit(freshInstall(), "bcm5720p0", func(in *pve.NetworkInterface) bool {
				in.MTU = 9000
				return true
			}),
			want: "changes bcm5720p0 (on the path of 172.27.2.10 on vmbr0): mtu (none) -> 9000",
		},
		{
			name: "the holder deleted", addr: mgmt, before: freshInstall(),
			after: edit(freshInstall(), "vmbr0", func(*pve.NetworkInterface) bool { return false }),
			want:  "removes vmbr0 (port bcm5720p0), which holds the management address 172.27.2.10/24; removes the default gateway 172.27.2.254 (on vmbr0)",
		},
		{
			name: "the gateway alone", addr: mgmt, before: freshInstall(),
			after: edit(freshInstall(), "vmbr0", func(in *pve.NetworkInterface) bool {
				in.Gateway = "172.27.2.1"
				return true
			}),
			want: "default gateway on vmbr0 from 172.27.2.254 to 172.27.2.1",
		},
		{
			name: "a gateway added elsewhere", addr: mgmt,
			before: edit(freshInstall(), "vmbr0", func(in *pve.NetworkInterface) bool {
				in.Gateway = ""
				return true
			}),
			after: edit(freshInstall(), "vmbr0", func(in *pve.NetworkInterface) bool {
				in.Gateway = ""
				return true
			}),
		},
		{
			name: "an IPv6 gateway moves", addr: mgmt,
			before: edit(freshInstall(), "vmbr0", func(in *pve.NetworkInterface) bool {
				in.CIDR6, in.Gateway6 = "fd00::10/64", "fd00::1"
				return true
			}),
			after: edit(edit(freshInstall(), "vmbr0", func(in *pve.NetworkInterface) bool {
				in.CIDR6 = "fd00::10/64"
				return true
			}), "cx354ap1", func(in *pve.NetworkInterface) bool {
				in.CIDR6, in.Gateway6 = "fd01::10/64", "fd00::1"
				return true
			}),
			want: "default IPv6 gateway fd00::1 from vmbr0 to cx354ap1",
		},
		{
			name: "management over IPv6", addr: "fd00:0::10",
			before: edit(freshInstall(), "vmbr0", func(in *pve.NetworkInterface) bool {
				in.Address6, in.Netmask6 = "fd00::10", "64"
				return true
			}),
			after: edit(freshInstall(), "vmbr0", func(in *pve.NetworkInterface) bool {
				in.Address6, in.Netmask6 = "fd00::10", "48"
				return true
			}),
			want: "changes vmbr0, which holds the management address fd00::10: cidr6 fd00::10/64 -> fd00::10/48",
		},
		{
			name: "a bond slave removed below the bridge", addr: mgmt, before: cutover(freshInstall()),
			after: edit(cutover(freshInstall()), "bond0", func(in *pve.NetworkInterface) bool {
				in.Slaves = []string{"bcm5720p1"}
				return true
			}),
			want: "changes bond0 (on the path of 172.27.2.10 on bridge0): slaves bcm5720p0 bcm5720p1 -> bcm5720p1",
		},
		{
			name: "slaves reordered are the same", addr: mgmt, before: cutover(freshInstall()),
			after: edit(cutover(freshInstall()), "bond0", func(in *pve.NetworkInterface) bool {
				in.Slaves = []string{"bcm5720p1", "bcm5720p0"}
				return true
			}),
		},
		{
			name: "a VLAN holding the address, its raw device's bond changes", addr: "172.27.3.10",
			before: edit(cutover(freshInstall()), "bridge0.30", func(in *pve.NetworkInterface) bool {
				in.Type, in.CIDR = "vlan", "172.27.3.10/24"
				return true
			}),
			after: edit(edit(cutover(freshInstall()), "bridge0.30", func(in *pve.NetworkInterface) bool {
				in.Type, in.CIDR = "vlan", "172.27.3.10/24"
				return true
			}), "bond0", func(in *pve.NetworkInterface) bool {
				in.BondMode = "active-backup"
				return true
			}),
			want: "changes bond0 (on the path of 172.27.3.10 on bridge0.30): bond_mode 802.3ad -> active-backup",
		},
		{
			name: "moved onto a bridge without ports", addr: mgmt, before: freshInstall(),
			after: edit(edit(freshInstall(), "vmbr0", func(in *pve.NetworkInterface) bool {
				in.CIDR, in.Address, in.Netmask = "", "", ""
				return true
			}), "vmbr9", func(in *pve.NetworkInterface) bool {
				in.Type, in.CIDR = "bridge", "172.27.2.10/24"
				return true
			}),
			want: "moves 172.27.2.10/24 from vmbr0 (port bcm5720p0) to vmbr9 (no ports)",
		},
		{
			name: "moved with a new prefix", addr: mgmt, before: freshInstall(),
			after: edit(edit(freshInstall(), "vmbr0", func(in *pve.NetworkInterface) bool {
				in.CIDR, in.Address, in.Netmask, in.Gateway = "", "", "", ""
				return true
			}), "bcm5720p1", func(in *pve.NetworkInterface) bool {
				in.CIDR, in.Gateway = "172.27.2.10/16", "172.27.2.254"
				return true
			}),
			want: "moves 172.27.2.10/24 from vmbr0 (port bcm5720p0) to bcm5720p1 as 172.27.2.10/16; default gateway 172.27.2.254 from vmbr0 to bcm5720p1",
		},
		{
			name: "an address not on the node", addr: "127.0.0.1", before: freshInstall(), after: cutover(freshInstall()),
		},
		{
			name: "not an address", addr: "pve1.example", before: freshInstall(), after: cutover(freshInstall()),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			touched, desc := touchesManagementPath(tc.addr, tc.before, tc.after)
			if touched != (tc.want != "") || desc != tc.want {
				t.Errorf("touchesManagementPath = %v, %q\nwant %v, %q", touched, desc, tc.want != "", tc.want)
			}
		})
	}
}

func TestPlannedInterface(t *testing.T) {
	ctx := context.Background()
	cur := freshInstall()[3] // vmbr0
	base := func() ifaceSettings {
		ports, _ := types.ListValueFrom(ctx, types.StringType, []string{"bcm5720p0"})
		return ifaceSettings{
			Type: types.StringValue("bridge"),
			CIDR: types.StringValue("172.27.2.10/24"), Gateway: types.StringValue("172.27.2.254"),
			BridgePorts: ports, BridgeVLANAware: types.BoolValue(false), Autostart: types.BoolValue(true),
			MTU: types.Int64Null(), CIDR6: types.StringNull(), Gateway6: types.StringNull(),
			Slaves: types.ListNull(types.StringType), BondMode: types.StringNull(), BondXmitHashPolicy: types.StringNull(),
			BondPrimary: types.StringNull(), BridgeVIDs: types.StringNull(), VLANRawDevice: types.StringNull(), VLANID: types.Int64Null(),
		}
	}
	t.Run("as configured is unchanged", func(t *testing.T) {
		m := base()
		got, d := plannedInterface(ctx, &cur, "vmbr0", &m)
		if d.HasError() {
			t.Fatal(d)
		}
		if touched, desc := touchesManagementPath("172.27.2.10", freshInstall(), edit(freshInstall(), "vmbr0", func(in *pve.NetworkInterface) bool {
			*in = got
			return true
		})); touched {
			t.Errorf("the current vmbr0 as planned touches the path: %s", desc)
		}
	})
	t.Run("unknown keeps the current value", func(t *testing.T) {
		m := base()
		m.CIDR, m.BridgePorts = types.StringUnknown(), types.ListUnknown(types.StringType)
		got, _ := plannedInterface(ctx, &cur, "vmbr0", &m)
		if got.CIDR != "172.27.2.10/24" || strings.Join(got.BridgePorts, ",") != "bcm5720p0" {
			t.Errorf("got %+v", got)
		}
	})
	t.Run("null clears", func(t *testing.T) {
		m := base()
		m.CIDR, m.Gateway, m.BridgePorts = types.StringNull(), types.StringNull(), types.ListNull(types.StringType)
		got, _ := plannedInterface(ctx, &cur, "vmbr0", &m)
		if got.CIDR != "" || got.Address != "" || got.Gateway != "" || got.BridgePorts != nil {
			t.Errorf("got %+v", got)
		}
	})
	t.Run("a dotted VLAN rides on its parent", func(t *testing.T) {
		m := base()
		m.Type, m.BridgePorts = types.StringValue("vlan"), types.ListNull(types.StringType)
		got, _ := plannedInterface(ctx, nil, "bridge0.60", &m)
		if got.VLANRawDevice != "bridge0" || got.VLANID != 60 || got.Method != "static" {
			t.Errorf("got %+v", got)
		}
	})
}
