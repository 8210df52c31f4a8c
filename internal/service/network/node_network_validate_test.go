package network_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

// Each bad configuration is refused at plan time, before any API write,
// with a message that names the attribute.
func TestAccNodeNetwork_invalidConfigRefusedAtPlan(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	node := e.Node(t, 0)
	cases := []struct {
		name, body string
		want       string
	}{
		{"bridge_ports on a bond", `type = "bond"
  slaves = ["bcm5720p0"]
  bridge_ports = ["bcm5720p1"]`, `(?s)bridge_ports.*bridge_ports applies only to type = "bridge"`},
		{"slaves on a bridge", `type = "bridge"
  slaves = ["bcm5720p0"]`, `(?s)slaves applies only to type = "bond"`},
		{"vlan_id on an eth", `type = "eth"
  vlan_id = 5`, `(?s)vlan_id applies only to type = "vlan"`},
		{"vlan id out of range", `type = "vlan"
  vlan_raw_device = "bcm5720p0"
  vlan_id = 5000`, `(?s)vlan_id.*between 1 and 4094`},
		{"mtu too small", `type = "bridge"
  mtu = 1000`, `(?s)mtu.*between 1280 and 65520`},
		{"mtu too large", `type = "bridge"
  mtu = 70000`, `(?s)mtu.*between 1280 and 65520`},
		{"bad cidr", `type = "bridge"
  cidr = "10.0.0.300/24"`, `(?s)Invalid CIDR.*cidr must be an IPv4 address.*"10.0.0.300/24"`},
		{"address without prefix", `type = "bridge"
  cidr = "10.0.0.1"`, `(?s)Invalid CIDR.*IPv4.*prefix`},
		{"ipv6 in cidr", `type = "bridge"
  cidr = "fd00::1/64"`, `(?s)Invalid CIDR.*IPv4`},
		{"unknown bond mode", `type = "bond"
  slaves = ["bcm5720p0"]
  bond_mode = "lacp"`, `(?s)bond_mode.*value must be one of`},
		{"OVS bond mode on a Linux bond", `type = "bond"
  slaves = ["bcm5720p0"]
  bond_mode = "balance-slb"`, `(?s)OVS bond mode on a Linux bond.*"balance-slb" is an Open vSwitch bond mode.*802\.3ad for LACP`},
		{"xmit hash policy with active-backup", `type = "bond"
  slaves = ["bcm5720p0"]
  bond_mode = "active-backup"
  bond_xmit_hash_policy = "layer2+3"`, `(?s)bond_xmit_hash_policy needs bond_mode balance-xor or 802.3ad`},
		{"bond without slaves", `type = "bond"`, `(?s)Missing bond slaves`},
		{"primary not a slave", `type = "bond"
  slaves = ["bcm5720p0"]
  bond_mode = "active-backup"
  bond_primary = "bcm5720p1"`, `(?s)bond_primary is not a slave`},
		{"gateway without cidr", `type = "bridge"
  gateway = "10.0.0.254"`, `(?s)gateway.*"cidr" must be specified`},
		{"gateway off the subnet", `type = "bridge"
  cidr = "172.27.2.10/24"
  gateway = "172.27.3.254"`, `(?s)Gateway outside the interface's subnet.*gateway 172\.27\.3\.254 of vmbr9 is not in vmbr9's subnet 172\.27\.2\.0/24`},
		{"gateway6 off the subnet", `type = "bridge"
  cidr6 = "fd00:2::10/64"
  gateway6 = "fd00:3::1"`, `(?s)Gateway outside the interface's subnet.*gateway6 fd00:3::1 of vmbr9`},
		{"vids without vlan awareness", `type = "bridge"
  bridge_vids = "2-4094"`, `(?s)bridge_vids needs a VLAN-aware bridge`},
		{"bad vids", `type = "bridge"
  bridge_vlan_aware = true
  bridge_vids = "2-5000"`, `(?s)Invalid bridge_vids`},
		{"unknown type", `type = "ovs"`, `(?s)type.*value must be one of`},
		{"custom vlan without raw device", `type = "vlan"
  vlan_id = 5`, `(?s)Missing vlan_raw_device`},
	}
	var steps []resource.TestStep
	for i, tc := range cases {
		iface := "vmbr9"
		if tc.name == "custom vlan without raw device" || tc.name == "vlan id out of range" {
			iface = "storage9"
		}
		steps = append(steps, resource.TestStep{
			Config: e.Config(fmt.Sprintf(`
# case %d: %s
resource "pve_node_network" "bad" {
  node  = %q
  iface = %q
  %s
}
`, i, tc.name, node, iface, tc.body)),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(tc.want),
		})
	}
	steps = append(steps, resource.TestStep{
		Config: e.Config(fmt.Sprintf(`
resource "pve_node_network" "bad" {
  node  = %q
  iface = "bridge0.60"
  type  = "vlan"
  vlan_id = 61
}
`, node)),
		PlanOnly:    true,
		ExpectError: regexp.MustCompile(`(?s)vlan_id contradicts the interface name`),
	})
	e.Run(t, resource.TestCase{Steps: steps})
	if e.Sim != nil {
		for _, r := range e.Sim.Requests() {
			if r.Method != "GET" {
				t.Errorf("a refused plan still wrote to PVE: %s %s", r.Method, r.Path)
			}
		}
	}
}

func TestAccNodeNetwork_importBadID(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
		Config: e.Config(`resource "pve_node_network" "x" {
  node  = "z2g4a"
  iface = "vmbr0"
  type  = "bridge"
}`),
		ResourceName:  "pve_node_network.x",
		ImportState:   true,
		ImportStateId: "vmbr0",
		ExpectError:   regexp.MustCompile(`Expected NODE/IFACE`),
	}}})
}
