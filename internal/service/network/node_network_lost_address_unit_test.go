package network

import (
	"testing"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

func TestLostManagementAddress(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after []pve.NetworkInterface
		want  string
	}{
		{"unchanged", freshInstall(), ""},
		{"cutover keeps it on bridge0", cutover(freshInstall()), ""},
		{"vmbr0 deleted", edit(freshInstall(), "vmbr0", func(*pve.NetworkInterface) bool { return false }), "172.27.2.10/24 on vmbr0"},
		{"re-addressed", edit(freshInstall(), "vmbr0", func(in *pve.NetworkInterface) bool {
			in.CIDR, in.Address = "172.27.2.11/24", "172.27.2.11"
			return true
		}), "172.27.2.10/24 on vmbr0"},
		{"wrong prefix keeps the address", edit(freshInstall(), "vmbr0", func(in *pve.NetworkInterface) bool {
			in.CIDR, in.Netmask = "172.27.2.10/28", "28"
			return true
		}), ""},
		{"to DHCP may get it back", edit(freshInstall(), "vmbr0", func(in *pve.NetworkInterface) bool {
			in.CIDR, in.Address, in.Netmask, in.Gateway, in.Method = "", "", "", "", "dhcp"
			return true
		}), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := lostManagementAddress("172.27.2.10", freshInstall(), tc.after); got != tc.want {
				t.Errorf("lostManagementAddress = %q, want %q", got, tc.want)
			}
		})
	}
	if got := lostManagementAddress("10.0.0.1", freshInstall(), nil); got != "" {
		t.Errorf("an address no interface held: %q, want none", got)
	}
}
