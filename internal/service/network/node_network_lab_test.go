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
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

// referenceLabNetwork is one node of the reference lab (z2g4a): an 802.3ad
// bond under a VLAN-aware bridge, the corosync VLAN on it, and the storage
// NIC at MTU 9000.
func referenceLabNetwork(node string, octet int) string {
	return fmt.Sprintf(`
resource "pve_node_network" "bond0" {
  node      = %[1]q
  iface     = "bond0"
  type      = "bond"
  slaves    = ["bcm5720p0", "bcm5720p1"]
  bond_mode = "802.3ad"
}

resource "pve_node_network" "bridge0" {
  node              = %[1]q
  iface             = "bridge0"
  type              = "bridge"
  bridge_ports      = [pve_node_network.bond0.iface]
  bridge_vlan_aware = true
  bridge_vids       = "2-4094"
  cidr              = "172.27.2.%[2]d/24"
  gateway           = "172.27.2.254"
}

resource "pve_node_network" "corosync" {
  node  = %[1]q
  iface = "${pve_node_network.bridge0.iface}.60"
  type  = "vlan"
  cidr  = "169.254.60.%[2]d/24"
}

resource "pve_node_network" "storage" {
  node  = %[1]q
  iface = "cx354ap1"
  type  = "eth"
  cidr  = "169.254.50.%[2]d/24"
  mtu   = 9000
}
`, node, octet)
}

func TestAccNodeNetwork_referenceLab(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	if e.Sim == nil {
		t.Skip("the reference lab test rewires bcm5720p0/p1 and cx354ap1; run it only against the simulator")
	}
	node := e.Node(t, 0)
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				Config: e.Config(referenceLabNetwork(node, 10)),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("pve_node_network.bond0", "bond_mode", "802.3ad"),
					resource.TestCheckResourceAttr("pve_node_network.bridge0", "bridge_vids", "2-4094"),
					resource.TestCheckResourceAttr("pve_node_network.corosync", "vlan_raw_device", "bridge0"),
					resource.TestCheckResourceAttr("pve_node_network.corosync", "vlan_id", "60"),
					resource.TestCheckResourceAttr("pve_node_network.storage", "mtu", "9000"),
					checkOnNode(e, node, "bridge0", func(in *pve.NetworkInterface) error {
						if in.Gateway != "172.27.2.254" || in.Address != "172.27.2.10" || !in.BridgeVLANAware ||
							strings.Join(in.BridgePorts, " ") != "bond0" {
							return fmt.Errorf("node reports %+v", *in)
						}
						return nil
					}),
					checkOnNode(e, node, "bond0", func(in *pve.NetworkInterface) error {
						if strings.Join(in.Slaves, " ") != "bcm5720p0 bcm5720p1" || in.BondMode != "802.3ad" {
							return fmt.Errorf("node reports %+v", *in)
						}
						return nil
					}),
				),
			},
			{
				// The second plan of the whole node is empty.
				Config:   e.Config(referenceLabNetwork(node, 10)),
				PlanOnly: true,
			},
			{
				// bridge0 now holds the node's management address: destroying
				// it is refused at plan (it would cut the node off), so the
				// test forgets it and the bond under it.
				Config: e.Config(`
removed {
  from = pve_node_network.bridge0
  lifecycle {
    destroy = false
  }
}

removed {
  from = pve_node_network.bond0
  lifecycle {
    destroy = false
  }
}
`),
			},
		},
	})
}

func TestAccNodeNetwork_driftAndDisappearance(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	node := e.Node(t, 0)
	const addr = "pve_node_network.test"
	config := e.Config(fmt.Sprintf(`
resource "pve_node_network" "test" {
  node  = %q
  iface = "vmbr43"
  type  = "bridge"
  cidr  = "10.43.0.1/24"
}
`, node))
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{Config: config},
			{
				// Someone changes the address and adds an MTU in the UI.
				PreConfig: func() {
					applyOutOfBand(t, e, node, func(ctx context.Context, c *pve.Client) error {
						return c.UpdateNetworkInterface(ctx, node, "vmbr43", pve.NetworkInterfaceRequest{
							Type: "bridge", CIDR: ptr("10.43.0.99/24"), MTU: ptr(int64(1600)),
						})
					})
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "cidr", "10.43.0.1/24"),
					resource.TestCheckNoResourceAttr(addr, "mtu"),
					checkOnNode(e, node, "vmbr43", func(in *pve.NetworkInterface) error {
						if in.Address != "10.43.0.1" || in.MTU != 0 {
							return fmt.Errorf("drift not corrected on node: %+v", *in)
						}
						return nil
					}),
				),
			},
			{
				// Someone deletes the bridge: the next plan recreates it.
				PreConfig: func() {
					applyOutOfBand(t, e, node, func(ctx context.Context, c *pve.Client) error {
						return c.DeleteNetworkInterface(ctx, node, "vmbr43")
					})
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate),
				}},
				Check: checkOnNode(e, node, "vmbr43", func(in *pve.NetworkInterface) error {
					if in.Address != "10.43.0.1" {
						return fmt.Errorf("not recreated: %+v", *in)
					}
					return nil
				}),
			},
		},
	})
}

func TestAccNodeNetwork_refusesForeignPendingChanges(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	node := e.Node(t, 0)
	e.Run(t, foreignPendingChangeCase(t, e, node, fmt.Sprintf(`
resource "pve_node_network" "test" {
  node  = %q
  iface = "vmbr44"
  type  = "bridge"
}
`, node), "Unable to Create network interface"))
}

// foreignPendingChangeCase: someone staged a bridge in the UI and never
// applied it; applying config is refused with unable (the diagnostic's
// summary) naming it, and the foreign change is left staged for its owner.
func foreignPendingChangeCase(t *testing.T, e *acctest.Env, node, config, unable string) resource.TestCase {
	return resource.TestCase{
		Steps: []resource.TestStep{{
			PreConfig: func() {
				if err := e.Client.CreateNetworkInterface(context.Background(), node, "vmbr77", pve.NetworkInterfaceRequest{Type: "bridge"}); err != nil {
					t.Fatal(err)
				}
			},
			Config:      e.Config(config),
			ExpectError: regexp.MustCompile(`(?s)` + regexp.QuoteMeta(unable) + `.*pending network changes that were not\s+made by Terraform.*vmbr77`),
		}},
		CheckDestroy: func(*terraform.State) error {
			list, err := e.Client.Network(context.Background(), node)
			if err != nil {
				return err
			}
			if !strings.Contains(list.Changes, "vmbr77") {
				return fmt.Errorf("the foreign staged change was touched; changes now: %q", list.Changes)
			}
			return e.Client.RevertNetwork(context.Background(), node)
		},
	}
}

// A failed reload on PVE leaves the new configuration in place (it renames
// interfaces.new before running ifreload). The provider reports the failure,
// records the interface as tainted instead of forgetting it, and the next
// apply replaces it cleanly.
func TestAccNodeNetwork_failedReloadIsRecordedTainted(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	if e.Sim == nil {
		t.Skip("needs the simulator's fault injection")
	}
	node := e.Node(t, 0)
	const addr = "pve_node_network.test"
	config := e.Config(fmt.Sprintf(`
resource "pve_node_network" "test" {
  node  = %q
  iface = "vmbr45"
  type  = "bridge"
  cidr  = "10.45.0.1/24"
}
`, node))
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					e.Sim.InjectFault(pvesim.Fault{Method: "PUT", Path: "^/nodes/" + node + "/network$", Kind: pvesim.FaultTaskFailure,
						Message: "ifreload: error: vmbr45: cmd '/sbin/ip link set dev vmbr45 up' failed", Count: 1})
				},
				Config:      config,
				ExpectError: regexp.MustCompile(`(?s)Unable to Create network interface.*reload on node .* failed.*ifreload: error.*already written the new configuration`),
			},
			{
				PreConfig: func() {
					list, err := e.Client.Network(context.Background(), node)
					if err != nil {
						t.Fatal(err)
					}
					if strings.TrimSpace(list.Changes) != "" {
						t.Fatalf("failed reload left staged changes:\n%s", list.Changes)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionReplace),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "cidr", "10.45.0.1/24"),
					resource.TestCheckResourceAttr(addr, "active", "true"),
				),
			},
		},
	})
}

// Many interfaces on two nodes, applied with Terraform's default
// parallelism: reloads never overlap on one node.
func TestAccNodeNetwork_reloadsSerialisedPerNode(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	if e.Sim == nil {
		t.Skip("reads the simulator's task statistics")
	}
	nodes := []string{e.Node(t, 0), e.Node(t, 1)}
	var b strings.Builder
	for _, node := range nodes {
		for i := 0; i < 6; i++ {
			fmt.Fprintf(&b, `
resource "pve_node_network" "%[1]s_%[2]d" {
  node  = %[1]q
  iface = "vmbr%[2]d"
  type  = "bridge"
}
`, node, 60+i)
		}
	}
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
		Config: e.Config(b.String()),
		Check: func(*terraform.State) error {
			for _, node := range nodes {
				if peak := e.Sim.PeakConcurrentTasks(node, "srvreload"); peak != 1 {
					return fmt.Errorf("node %s: %d network reloads ran at once, want 1", node, peak)
				}
			}
			return nil
		},
	}}})
}

func TestAccNodeNetwork_lockTimeoutIsRetried(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	if e.Sim == nil {
		t.Skip("needs the simulator's fault injection")
	}
	node := e.Node(t, 0)
	e.Sim.InjectFault(pvesim.Fault{Method: "POST", Path: "^/nodes/" + node + "/network$", Kind: pvesim.FaultLockTimeout, Count: 2})
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
		Config: e.Config(fmt.Sprintf(`
resource "pve_node_network" "test" {
  node  = %q
  iface = "vmbr46"
  type  = "bridge"
}
`, node)),
		Check: func(*terraform.State) error {
			var posts int
			for _, r := range e.Sim.Requests() {
				if r.Method == "POST" && r.Path == "/nodes/"+node+"/network" {
					posts++
				}
			}
			if posts != 3 {
				return fmt.Errorf("want 2 lock timeouts then 1 successful POST (3 requests), got %d", posts)
			}
			return nil
		},
	}}})
}
