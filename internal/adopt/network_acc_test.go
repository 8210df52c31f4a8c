package adopt_test

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// The network of the reference lab built by hand (bond0, bridge0 with the
// management address, bridge0.60, the storage NIC): one
// pve_node_network_config per node, the interfaces' shared structure in
// the block and each node's addresses in the locals; imports only,
// nothing written, empty plan after.
func TestAccAdoptNetwork(t *testing.T) {
	t.Parallel()
	a := adoptLab(t, "reference", "network")
	want := map[string]string{}
	for _, n := range []string{"z2g4a", "z2g4b", "z2g4c"} {
		want[`pve_node_network_config.lab["`+n+`"]`] = n
	}
	checkImports(t, a.res, want)
	tf := string(a.files["network.tf"])
	for _, s := range []string{
		`slaves    = ["bcm5720p0", "bcm5720p1"]`,
		`cidr              = each.value.interfaces.bridge0.cidr`,
		`cidr            = each.value.interfaces["bridge0.60"].cidr`,
		`cidr = "169.254.50.12/24"`,
	} {
		if !strings.Contains(tf, s) {
			t.Errorf("network.tf lacks %q:\n%s", s, tf)
		}
	}
	if strings.Count(tf, `bond_mode = "802.3ad"`) != 1 || strings.Contains(tf, "vmbr0") {
		t.Errorf("network.tf repeats what the nodes share, or has the installer's vmbr0:\n%s", tf)
	}
	a.env.Run(t, resource.TestCase{Steps: a.steps(t)})
}

// The diskless lab's four nodes have no bond (two NICs each): bridge0
// bridges the management NIC enp1s0f0, the other NIC holds the cluster
// network 192.168.100.0/24, and there is no corosync VLAN.
func TestAccAdoptNetworkDiskless(t *testing.T) {
	t.Parallel()
	a := adoptLab(t, "diskless", "network")
	want := map[string]string{}
	for _, n := range []string{"jpl-proxmox6", "jpl-proxmox7", "jpl-proxmox8", "jpl-proxmox9"} {
		want[`pve_node_network_config.lab["`+n+`"]`] = n
	}
	checkImports(t, a.res, want)
	checkImportCount(t, a.res, 4)
	tf := string(a.files["network.tf"])
	for _, s := range []string{`bridge_ports      = ["enp1s0f0"]`, `gateway           = "10.33.80.1"`, `cidr = "192.168.100.16/24"`, "mtu  = 9000"} {
		if !strings.Contains(tf, s) {
			t.Errorf("network.tf lacks %q:\n%s", s, tf)
		}
	}
	for _, s := range []string{"bond0", "bridge0.60"} {
		if strings.Contains(tf, s) {
			t.Errorf("network.tf has %s, which the diskless lab does not:\n%s", s, tf)
		}
	}
	a.env.Run(t, resource.TestCase{Steps: a.steps(t)})
}
