package network_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

// Paths and unit of the dead-man rollback on the node.
const (
	rollbackBackup = "/var/lib/pve-terraform/interfaces.rollback"
	rollbackScript = "/var/lib/pve-terraform/network-rollback"
	rollbackTimer  = "pve-terraform-network-rollback.timer"
)

// freshInstallEnv is the reference lab as the PVE installer leaves it:
// vmbr0 on bcm5720p0 holds the management address (172.27.2.10/24 on
// z2g4a) and the default gateway. Changing it cuts a real node off, so
// these tests run only against the simulator.
func freshInstallEnv(t *testing.T) (*acctest.Env, string) {
	t.Helper()
	if acctest.Live() {
		t.Skip("cuts a node's management path off on purpose; run it only against the simulator")
	}
	lab, err := pvesim.ShippedLab("reference")
	if err != nil {
		t.Fatal(err)
	}
	lab.Start = pvesim.StartFreshInstall
	e := acctest.NewWithOptions(t, pvesim.Options{Lab: lab})
	return e, e.Node(t, 0)
}

// vmbr0Config is the installer's vmbr0 with the given extra attributes.
func vmbr0Config(node, extra string) string {
	return fmt.Sprintf(`
resource "pve_node_network" "vmbr0" {
  node         = %q
  iface        = "vmbr0"
  type         = "bridge"
  bridge_ports = ["bcm5720p0"]
  cidr         = "172.27.2.10/24"
  gateway      = "172.27.2.254"
%s
}
`, node, extra)
}

// importVMBR0 adopts the installer's vmbr0 into the state.
func importVMBR0(providerConfig, node string) resource.TestStep {
	return resource.TestStep{
		Config:             providerConfig + vmbr0Config(node, ""),
		ResourceName:       "pve_node_network.vmbr0",
		ImportState:        true,
		ImportStateId:      node + "/vmbr0",
		ImportStatePersist: true,
	}
}

// forgetVMBR0 drops vmbr0 from the state without destroying it: the test's
// final destroy would otherwise take the management address away.
func forgetVMBR0(providerConfig string) resource.TestStep {
	return resource.TestStep{
		Config: providerConfig + `
removed {
  from = pve_node_network.vmbr0
  lifecycle {
    destroy = false
  }
}
`,
	}
}

// checkDisarmed: no rollback timer left, backup and script removed.
func checkDisarmed(t *testing.T, e *acctest.Env, node string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if err := e.Sim.WaitTimersIdle(node, 0); err != nil {
			return err
		}
		ne := e.NodeExec(t)
		defer func() { _ = ne.Close() }()
		res, err := ne.Run(context.Background(), node, nodeexec.Cmd("systemctl", "show", "--property=ActiveState", rollbackTimer))
		if err != nil {
			return err
		}
		if got := strings.TrimSpace(string(res.Stdout)); got != "ActiveState=inactive" {
			return fmt.Errorf("%s: %s, want inactive (disarmed and collected)", rollbackTimer, got)
		}
		for _, p := range []string{rollbackBackup, rollbackScript} {
			if _, err := ne.ReadFile(context.Background(), node, p); !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("%s on node %s: %w, want it removed", p, node, err)
			}
		}
		return nil
	}
}

// checkReachableWith: the node answers again, and the API (on a new
// connection) lists vmbr0 as check wants it.
func checkReachableWith(e *acctest.Env, node string, check func(*pve.NetworkInterface) error) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		if ok, why := e.Sim.Reachable(node); !ok {
			return fmt.Errorf("node %s is not reachable: %s", node, why)
		}
		e.Client.CloseIdleConnections()
		return checkOnNode(e, node, "vmbr0", check)(s)
	}
}

func vmbr0Unchanged(in *pve.NetworkInterface) error {
	if strings.Join(in.BridgePorts, " ") != "bcm5720p0" || in.CIDR != "172.27.2.10/24" || in.Gateway != "172.27.2.254" || in.BridgeVLANAware {
		return fmt.Errorf("vmbr0 is not the installer's any more: %+v", *in)
	}
	return nil
}

// rolledBack is the error of a change the timer undid, with the node
// reachable again.
var rolledBack = phrases("cut the provider off", "restored the previous /etc/network/interfaces", "the node answers again")

// phrases matches the phrases in order, wherever the diagnostics wrap
// their lines.
func phrases(ps ...string) *regexp.Regexp {
	for i, p := range ps {
		ps[i] = strings.Join(strings.Fields(regexp.QuoteMeta(p)), `\s+`)
	}
	return regexp.MustCompile(`(?s)` + strings.Join(ps, ".*"))
}

func TestAccNodeNetworkRollback_confirmedAndDisarmed(t *testing.T) {
	t.Parallel()
	e, node := freshInstallEnv(t)
	pc := e.ProviderConfig()
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			importVMBR0(pc, node),
			{
				// VLAN-aware vmbr0 keeps the node reachable: confirmed.
				Config: pc + vmbr0Config(node, "  bridge_vlan_aware = true\n  rollback_timeout_seconds = 20"),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("pve_node_network.vmbr0", "bridge_vlan_aware", "true"),
					resource.TestCheckResourceAttr("pve_node_network.vmbr0", "rollback_timeout_seconds", "20"),
					checkReachableWith(e, node, func(in *pve.NetworkInterface) error {
						if !in.BridgeVLANAware {
							return fmt.Errorf("vmbr0 is not VLAN-aware: %+v", *in)
						}
						return nil
					}),
					checkDisarmed(t, e, node),
				),
			},
			forgetVMBR0(pc),
		},
	})
}

func TestAccNodeNetworkRollback_bridgeWithoutPortIsRolledBack(t *testing.T) {
	t.Parallel()
	e, node := freshInstallEnv(t)
	pc := e.ProviderConfig()
	start := time.Now()
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			importVMBR0(pc, node),
			{
				// bcm5720p1 has no link: the address sits on a bridge
				// without a live port.
				PreConfig: func() {
					if err := e.Sim.SetNICLink(node, "bcm5720p1", false); err != nil {
						t.Fatal(err)
					}
				},
				Config: pc + strings.Replace(vmbr0Config(node, "  rollback_timeout_seconds = 5"),
					`["bcm5720p0"]`, `["bcm5720p1"]`, 1),
				ExpectError: rolledBack,
			},
			{
				// The node has its old vmbr0 again, as the state does.
				Config: pc + vmbr0Config(node, "  rollback_timeout_seconds = 5"),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkReachableWith(e, node, vmbr0Unchanged),
					checkDisarmed(t, e, node),
				),
			},
			forgetVMBR0(pc),
		},
	})
	// The restore came from the timer, not before it (5 s after arming).
	if d := time.Since(start); d < 5*time.Second {
		t.Errorf("rolled back after %s, before the 5 s timer could fire", d)
	}
}

// A wrong prefix that puts the gateway off the subnet (/30) cuts the node
// off. Hidden from the first plan by a value known only at apply, it is
// still refused before anything is staged: Terraform validates the
// configuration again once the value is known.
func TestAccNodeNetworkRollback_wrongPrefixRefusedBeforeAnyWrite(t *testing.T) {
	t.Parallel()
	e, node := freshInstallEnv(t)
	pc := e.ProviderConfig()
	var from int
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			importVMBR0(pc, node),
			{
				PreConfig: func() { from = len(e.Sim.Requests()) },
				Config: pc + `
resource "terraform_data" "prefix" {
  input = "30"
}
` + strings.Replace(vmbr0Config(node, "  rollback_timeout_seconds = 5"),
					`"172.27.2.10/24"`, `"172.27.2.10/${terraform_data.prefix.output}"`, 1),
				ExpectError: phrases("Gateway outside the interface's subnet", "gateway 172.27.2.254 of vmbr0 is not in vmbr0's subnet 172.27.2.8/30"),
			},
			{
				PreConfig: func() {
					for _, r := range e.Sim.Requests()[from:] {
						if r.Method != "GET" && !strings.HasPrefix(r.Path, "/access/") {
							t.Errorf("the refused change still wrote to the node: %s %s", r.Method, r.Path)
						}
					}
				},
				Config: pc + vmbr0Config(node, "  rollback_timeout_seconds = 5"),
				Check:  checkReachableWith(e, node, vmbr0Unchanged),
			},
			forgetVMBR0(pc),
		},
	})
}

// The default gateway moved onto the storage network: inside its own
// interface's subnet, so every plan-time check passes, but off the
// management subnet the provider reaches the node through. The node is cut
// off and its timer brings the installer's network back.
func TestAccNodeNetworkRollback_gatewayOffManagementSubnet(t *testing.T) {
	t.Parallel()
	e, node := freshInstallEnv(t)
	config := e.Config(fmt.Sprintf(`
resource "pve_node_network_config" "lab" {
  node                     = %q
  rollback_timeout_seconds = 5
  interfaces = {
    vmbr0    = { type = "bridge", bridge_ports = ["bcm5720p0"], cidr = "172.27.2.10/24" }
    cx354ap1 = { type = "eth", cidr = "169.254.50.10/24", gateway = "169.254.50.1" }
  }
}
`, node))
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				Config:      config,
				ExpectError: phrases("default gateway", "169.254.50.1", "restored the previous /etc/network/interfaces", "the node answers again"),
			},
			{
				PreConfig: func() {
					if ok, why := e.Sim.Reachable(node); !ok {
						t.Fatalf("node %s still cut off after the rollback: %s", node, why)
					}
				},
				Config: e.Config(strings.Replace(referenceLabConfig(node, ""), `resource "pve_node_network_config" "lab" {`,
					"resource \"pve_node_network_config\" \"lab\" {\n  rollback_timeout_seconds = 5", 1)),
				Check: checkOnNode(e, node, "bridge0", func(in *pve.NetworkInterface) error {
					if in.Gateway != "172.27.2.254" {
						return fmt.Errorf("node reports %+v", *in)
					}
					return nil
				}),
			},
		},
	})
}

func TestAccNodeNetworkRollback_bondWithoutLinkIsRolledBack(t *testing.T) {
	t.Parallel()
	e, node := freshInstallEnv(t)
	pc := e.ProviderConfig()
	bond := fmt.Sprintf(`
resource "pve_node_network" "bond0" {
  node      = %q
  iface     = "bond0"
  type      = "bond"
  slaves    = ["bcm5720p1", "i219"]
  bond_mode = "active-backup"
}
`, node)
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			importVMBR0(pc, node),
			{
				// bond0 itself is off the management path (a plain
				// reload); moving vmbr0 onto it is not, and neither slave
				// has a link.
				PreConfig: func() {
					for _, nic := range []string{"bcm5720p1", "i219"} {
						if err := e.Sim.SetNICLink(node, nic, false); err != nil {
							t.Fatal(err)
						}
					}
				},
				Config: pc + bond + strings.Replace(vmbr0Config(node, "  rollback_timeout_seconds = 5"),
					`["bcm5720p0"]`, `[pve_node_network.bond0.iface]`, 1),
				ExpectError: phrases("bridge_ports bcm5720p0 -> bond0", "restored the previous"),
			},
			{
				Config: pc + bond + vmbr0Config(node, "  rollback_timeout_seconds = 5"),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkReachableWith(e, node, vmbr0Unchanged),
					checkOnNode(e, node, "bond0", nil),
					checkDisarmed(t, e, node),
				),
			},
			forgetVMBR0(pc + bond),
		},
	})
}

func TestAccNodeNetworkRollback_refusedWithoutSSH(t *testing.T) {
	t.Parallel()
	e, node := freshInstallEnv(t)
	pc := e.ProviderConfigWithoutSSH(t)
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			importVMBR0(pc, node),
			{
				Config:      pc + vmbr0Config(node, "  bridge_vlan_aware = true"),
				PlanOnly:    true,
				ExpectError: phrases("needs SSH for its rollback", "changes vmbr0, which holds the management address 172.27.2.10: bridge_vlan_aware false -> true", "allow_management_change_without_rollback = true"),
			},
			{
				// A value unknown at plan hides the change from the first
				// plan's check; Terraform plans the resource again once the
				// value is known, and the check refuses it then, before
				// anything is staged.
				Config: pc + `
resource "terraform_data" "prefix" {
  input = "16"
}
` + strings.Replace(vmbr0Config(node, ""), `"172.27.2.10/24"`, `"172.27.2.10/${terraform_data.prefix.output}"`, 1),
				ExpectError: phrases("needs SSH for its rollback", "cidr 172.27.2.10/24 -> 172.27.2.10/16",
					"allow_management_change_without_rollback = true"),
			},
			{
				Config: pc + vmbr0Config(node, ""),
				Check:  checkReachableWith(e, node, vmbr0Unchanged),
			},
			{
				// Refused at plan also when vmbr0 goes: the destroy would
				// take the address away.
				Config:      pc,
				PlanOnly:    true,
				ExpectError: phrases("Refusing to destroy network interface vmbr0", "removes vmbr0 (port bcm5720p0), which holds the management address 172.27.2.10/24"),
			},
			forgetVMBR0(pc),
		},
	})
}

func TestAccNodeNetworkRollback_optOutWithoutSSH(t *testing.T) {
	t.Parallel()
	e, node := freshInstallEnv(t)
	pc := e.ProviderConfigWithoutSSH(t)
	optOut := "  allow_management_change_without_rollback = true\n  rollback_timeout_seconds = 5\n"
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			importVMBR0(pc, node),
			{
				// Applied without a timer, and confirmed.
				Config: pc + vmbr0Config(node, optOut+"  bridge_vlan_aware = true"),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkReachableWith(e, node, func(in *pve.NetworkInterface) error {
						if !in.BridgeVLANAware {
							return fmt.Errorf("vmbr0 is not VLAN-aware: %+v", *in)
						}
						return nil
					}),
					func(*terraform.State) error { return e.Sim.WaitTimersIdle(node, 0) },
				),
			},
			{
				// Without a rollback a change that cuts the node off is
				// reported as such; the cable plugged back in brings the
				// node back.
				PreConfig: func() {
					if err := e.Sim.SetNICLink(node, "bcm5720p1", false); err != nil {
						t.Fatal(err)
					}
				},
				Config: pc + strings.Replace(vmbr0Config(node, optOut+"  bridge_vlan_aware = true"),
					`["bcm5720p0"]`, `["bcm5720p1"]`, 1),
				ExpectError: phrases("cut the provider off", "There was no rollback"),
			},
			{
				PreConfig: func() {
					if err := e.Sim.SetNICLink(node, "bcm5720p1", true); err != nil {
						t.Fatal(err)
					}
				},
				Config: pc + strings.Replace(vmbr0Config(node, optOut+"  bridge_vlan_aware = true"),
					`["bcm5720p0"]`, `["bcm5720p1"]`, 1),
				Check: checkReachableWith(e, node, func(in *pve.NetworkInterface) error {
					if strings.Join(in.BridgePorts, " ") != "bcm5720p1" {
						return fmt.Errorf("vmbr0's port: %v", in.BridgePorts)
					}
					return nil
				}),
			},
			forgetVMBR0(pc),
		},
	})
}

func TestAccNodeNetworkRollback_refusesWhileAnEarlierTimerIsArmed(t *testing.T) {
	t.Parallel()
	e, node := freshInstallEnv(t)
	pc := e.ProviderConfig()
	run := func(cmd *nodeexec.Command) {
		ne := e.NodeExec(t)
		defer func() { _ = ne.Close() }()
		if _, err := ne.Run(context.Background(), node, cmd); err != nil {
			t.Fatal(err)
		}
	}
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			importVMBR0(pc, node),
			{
				// An earlier apply armed its timer and never came back.
				PreConfig: func() {
					run(nodeexec.Cmd("systemd-run", "--unit=pve-terraform-network-rollback", "--on-active=600",
						"systemctl", "is-active", "pveproxy.service"))
				},
				Config: pc + vmbr0Config(node, "  bridge_vlan_aware = true"),
				ExpectError: phrases("a network rollback timer of an earlier run is armed on node "+node,
					"systemctl stop pve-terraform-network-rollback.timer", "The staged change was reverted"),
			},
			{
				// Stopped as the error says, the change goes through.
				PreConfig: func() { run(nodeexec.Cmd("systemctl", "stop", rollbackTimer)) },
				Config:    pc + vmbr0Config(node, "  bridge_vlan_aware = true"),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("pve_node_network.vmbr0", "bridge_vlan_aware", "true"),
					checkDisarmed(t, e, node),
				),
			},
			forgetVMBR0(pc),
		},
	})
}

// When the node's management address cannot be found (GET /cluster/status
// fails), the provider cannot tell whether a change touches the path it
// reaches the node on, so it guards the change as if it did: the timer is
// armed, the node confirmed, the timer disarmed.
func TestAccNodeNetworkRollback_undeterminedAddressIsGuarded(t *testing.T) {
	t.Parallel()
	e, node := freshInstallEnv(t)
	pc := e.ProviderConfig()
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					e.Sim.InjectFault(pvesim.Fault{Method: "GET", Path: `^/cluster/status$`, Kind: pvesim.FaultError, Status: 500, Message: "cfs-lock timeout"})
					e.Sim.ResetSSHCommands()
				},
				Config: pc + fmt.Sprintf(`
resource "pve_node_network" "storage" {
  node     = %q
  iface    = "cx354ap1"
  type     = "eth"
  cidr     = "169.254.50.10/24"
  comments = "storage network"
  rollback_timeout_seconds = 5
}
`, node),
				Check: resource.ComposeAggregateTestCheckFunc(
					func(*terraform.State) error {
						for _, c := range e.Sim.SSHCommands() {
							if c.Node == node && len(c.Argv) > 0 && c.Argv[0] == "systemd-run" {
								return nil
							}
						}
						return fmt.Errorf("no rollback timer was armed on %s for a change it could not place", node)
					},
					checkDisarmed(t, e, node),
				),
			},
		},
	})
}
