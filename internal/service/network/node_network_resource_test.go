package network_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

func ptr[T any](v T) *T { return &v }

// applyOutOfBand changes a node's network behind Terraform's back, the way
// an operator would in the PVE UI: stage, then apply.
func applyOutOfBand(t *testing.T, e *acctest.Env, node string, stage func(context.Context, *pve.Client) error) {
	t.Helper()
	ctx := context.Background()
	if err := stage(ctx, e.Client); err != nil {
		t.Fatalf("out-of-band change on %s: %v", node, err)
	}
	upid, err := e.Client.ApplyNetwork(ctx, node)
	if err != nil {
		t.Fatalf("out-of-band apply on %s: %v", node, err)
	}
	if _, err := e.Client.WaitTask(ctx, upid); err != nil {
		t.Fatalf("out-of-band reload on %s: %v", node, err)
	}
}

// checkOnNode asserts what the node itself reports for an interface, not
// what Terraform stored.
func checkOnNode(e *acctest.Env, node, iface string, check func(*pve.NetworkInterface) error) resource.TestCheckFunc {
	return func(*terraform.State) error {
		list, err := e.Client.Network(context.Background(), node)
		if err != nil {
			return err
		}
		if strings.TrimSpace(list.Changes) != "" {
			return fmt.Errorf("node %s still has staged changes after apply:\n%s", node, list.Changes)
		}
		for i := range list.Interfaces {
			if list.Interfaces[i].Iface == iface {
				if check == nil {
					return nil
				}
				return check(&list.Interfaces[i])
			}
		}
		if check == nil {
			return nil
		}
		return fmt.Errorf("interface %s not found on node %s", iface, node)
	}
}

func checkGoneFromNode(e *acctest.Env, node, iface string) func(*terraform.State) error {
	return func(*terraform.State) error {
		list, err := e.Client.Network(context.Background(), node)
		if err != nil {
			return err
		}
		for _, in := range list.Interfaces {
			if in.Iface == iface {
				return fmt.Errorf("interface %s still exists on node %s after destroy", iface, node)
			}
		}
		return nil
	}
}

func TestAccNodeNetwork_bridge(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	node := e.Node(t, 0)
	nic := e.NICs(t, 1)[0]
	const addr = "pve_node_network.test"
	config := func(extra string) string {
		return e.Config(fmt.Sprintf(`
resource "pve_node_network" "test" {
  node         = %q
  iface        = "vmbr42"
  type         = "bridge"
  bridge_ports = [%q]
  cidr         = "10.42.0.1/24"
  %s
}
`, node, nic, extra))
	}
	e.Run(t, resource.TestCase{
		CheckDestroy: checkGoneFromNode(e, node, "vmbr42"),
		Steps: []resource.TestStep{
			{
				Config: config(""),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "id", node+"/vmbr42"),
					resource.TestCheckResourceAttr(addr, "cidr", "10.42.0.1/24"),
					resource.TestCheckResourceAttr(addr, "bridge_ports.#", "1"),
					resource.TestCheckResourceAttr(addr, "bridge_ports.0", nic),
					resource.TestCheckResourceAttr(addr, "bridge_vlan_aware", "false"),
					resource.TestCheckNoResourceAttr(addr, "bridge_vids"),
					resource.TestCheckResourceAttr(addr, "autostart", "true"),
					resource.TestCheckResourceAttr(addr, "active", "true"),
					checkOnNode(e, node, "vmbr42", func(in *pve.NetworkInterface) error {
						if in.Type != "bridge" || in.Address != "10.42.0.1" || !in.Autostart {
							return fmt.Errorf("node reports %+v", *in)
						}
						return nil
					}),
				),
			},
			{
				ResourceName:      addr,
				ImportState:       true,
				ImportStateId:     node + "/vmbr42",
				ImportStateVerify: true,
			},
			{
				Config: config(`
  mtu               = 1400
  comments          = "lab bridge"
  bridge_vlan_aware = true
  bridge_vids       = "10 20 100-200"`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "mtu", "1400"),
					resource.TestCheckResourceAttr(addr, "comments", "lab bridge"),
					resource.TestCheckResourceAttr(addr, "bridge_vlan_aware", "true"),
					resource.TestCheckResourceAttr(addr, "bridge_vids", "10 20 100-200"),
					checkOnNode(e, node, "vmbr42", func(in *pve.NetworkInterface) error {
						if in.MTU != 1400 || !in.BridgeVLANAware || in.BridgeVIDs != "10 20 100-200" {
							return fmt.Errorf("node reports mtu=%d vlan_aware=%v vids=%q", in.MTU, in.BridgeVLANAware, in.BridgeVIDs)
						}
						return nil
					}),
				),
			},
			{
				// Unsetting attributes removes them on the node (PVE's delete
				// list), including turning VLAN awareness off again.
				Config: config(""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckNoResourceAttr(addr, "mtu"),
					resource.TestCheckNoResourceAttr(addr, "comments"),
					resource.TestCheckResourceAttr(addr, "bridge_vlan_aware", "false"),
					checkOnNode(e, node, "vmbr42", func(in *pve.NetworkInterface) error {
						if in.MTU != 0 || in.BridgeVLANAware || in.Comments != "" {
							return fmt.Errorf("node still reports mtu=%d vlan_aware=%v comments=%q", in.MTU, in.BridgeVLANAware, in.Comments)
						}
						return nil
					}),
				),
			},
			{
				// Not starting at boot: after the reload the bridge is down.
				Config: config(`autostart = false`),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "autostart", "false"),
					resource.TestCheckResourceAttr(addr, "active", "false"),
					checkOnNode(e, node, "vmbr42", func(in *pve.NetworkInterface) error {
						if in.Autostart || in.Active {
							return fmt.Errorf("node reports autostart=%v active=%v", in.Autostart, in.Active)
						}
						return nil
					}),
				),
			},
		},
	})
}

func TestAccNodeNetwork_bond(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	node := e.Node(t, 0)
	nics := e.NICs(t, 2)
	const addr = "pve_node_network.test"
	config := func(body string) string {
		return e.Config(fmt.Sprintf(`
resource "pve_node_network" "test" {
  node   = %q
  iface  = "bond7"
  type   = "bond"
  slaves = [%q, %q]
  %s
}
`, node, nics[0], nics[1], body))
	}
	e.Run(t, resource.TestCase{
		CheckDestroy: checkGoneFromNode(e, node, "bond7"),
		Steps: []resource.TestStep{
			{
				Config: config(`
  bond_mode    = "active-backup"
  bond_primary = "` + nics[1] + `"`),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "bond_mode", "active-backup"),
					resource.TestCheckResourceAttr(addr, "bond_primary", nics[1]),
					resource.TestCheckResourceAttr(addr, "slaves.#", "2"),
					checkOnNode(e, node, "bond7", func(in *pve.NetworkInterface) error {
						if in.BondMode != "active-backup" || in.BondPrimary != nics[1] || len(in.Slaves) != 2 {
							return fmt.Errorf("node reports %+v", *in)
						}
						return nil
					}),
				),
			},
			{ResourceName: addr, ImportState: true, ImportStateId: node + "/bond7", ImportStateVerify: true},
			{
				Config: config(`
  bond_mode             = "802.3ad"
  bond_xmit_hash_policy = "layer3+4"
  mtu                   = 1500`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "bond_mode", "802.3ad"),
					resource.TestCheckResourceAttr(addr, "bond_xmit_hash_policy", "layer3+4"),
					resource.TestCheckNoResourceAttr(addr, "bond_primary"),
					checkOnNode(e, node, "bond7", func(in *pve.NetworkInterface) error {
						if in.BondMode != "802.3ad" || in.BondXmitHashPolicy != "layer3+4" || in.BondPrimary != "" {
							return fmt.Errorf("node reports %+v", *in)
						}
						return nil
					}),
				),
			},
		},
	})
}

func TestAccNodeNetwork_vlan(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	node := e.Node(t, 0)
	nic := e.NICs(t, 1)[0]
	config := func(comment string) string {
		return e.Config(fmt.Sprintf(`
resource "pve_node_network" "dotted" {
  node     = %[1]q
  iface    = "%[2]s.70"
  type     = "vlan"
  cidr     = "10.70.0.5/24"
  comments = %[3]q
}

resource "pve_node_network" "named" {
  node            = %[1]q
  iface           = "storage71"
  type            = "vlan"
  vlan_raw_device = %[2]q
  vlan_id         = 71
}
`, node, nic, comment))
	}
	e.Run(t, resource.TestCase{
		CheckDestroy: resource.ComposeTestCheckFunc(
			checkGoneFromNode(e, node, nic+".70"), checkGoneFromNode(e, node, "storage71")),
		Steps: []resource.TestStep{
			{
				Config: config("first"),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("pve_node_network.dotted", "vlan_id", "70"),
					resource.TestCheckResourceAttr("pve_node_network.dotted", "vlan_raw_device", nic),
					resource.TestCheckResourceAttr("pve_node_network.named", "vlan_id", "71"),
					resource.TestCheckResourceAttr("pve_node_network.named", "vlan_raw_device", nic),
					checkOnNode(e, node, "storage71", func(in *pve.NetworkInterface) error {
						if in.VLANID != 71 || in.VLANRawDevice != nic {
							return fmt.Errorf("node reports %+v", *in)
						}
						return nil
					}),
				),
			},
			{ResourceName: "pve_node_network.dotted", ImportState: true, ImportStateId: node + "/" + nic + ".70", ImportStateVerify: true},
			{ResourceName: "pve_node_network.named", ImportState: true, ImportStateId: node + "/storage71", ImportStateVerify: true},
			{
				Config: config("second"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("pve_node_network.dotted", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("pve_node_network.named", plancheck.ResourceActionNoop),
				}},
				Check: resource.TestCheckResourceAttr("pve_node_network.dotted", "comments", "second"),
			},
		},
	})
}

func TestAccNodeNetwork_eth(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	node := e.Node(t, 0)
	nic := e.NICs(t, 1)[0]
	const addr = "pve_node_network.nic"
	config := func(mtu int) string {
		return e.Config(fmt.Sprintf(`
resource "pve_node_network" "nic" {
  node  = %q
  iface = %q
  type  = "eth"
  cidr  = "169.254.50.10/24"
  mtu   = %d
}
`, node, nic, mtu))
	}
	e.Run(t, resource.TestCase{
		// Destroying an eth removes its configuration, never the NIC.
		CheckDestroy: checkOnNode(e, node, nic, func(in *pve.NetworkInterface) error {
			if in.Address != "" || in.MTU != 0 {
				return fmt.Errorf("NIC %s still configured after destroy: %+v", nic, *in)
			}
			return nil
		}),
		Steps: []resource.TestStep{
			{
				Config: config(9000),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "mtu", "9000"),
					resource.TestCheckResourceAttr(addr, "cidr", "169.254.50.10/24"),
					checkOnNode(e, node, nic, func(in *pve.NetworkInterface) error {
						if in.MTU != 9000 || in.Address != "169.254.50.10" {
							return fmt.Errorf("node reports %+v", *in)
						}
						return nil
					}),
				),
			},
			{ResourceName: addr, ImportState: true, ImportStateId: node + "/" + nic, ImportStateVerify: true},
			{
				Config: config(4000),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.TestCheckResourceAttr(addr, "mtu", "4000"),
			},
		},
	})
}

func TestAccNodeNetwork_ethMissing(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	node := e.Node(t, 0)
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
		Config: e.Config(fmt.Sprintf(`
resource "pve_node_network" "nic" {
  node  = %q
  iface = "enp99s0"
  type  = "eth"
}
`, node)),
		ExpectError: regexp.MustCompile(`(?s)Unable to Create network interface.*no physical interface "enp99s0"`),
	}}})
}
