package node_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

const ringAddr = "pve_node_nic_ring.this"

func ringConfig(node, iface, sizes string) string {
	return fmt.Sprintf(`
resource "pve_node_nic_ring" "this" {
  node  = %q
  iface = %q
  %s
}
`, node, iface, sizes)
}

// checkRings asserts what ethtool -g reports on the node.
func checkRings(t *testing.T, e *acctest.Env, node, iface string, rx, tx int) resource.TestCheckFunc {
	ex := e.NodeExec(t)
	return func(*terraform.State) error {
		res, err := ex.Run(context.Background(), node, nodeexec.Cmd("ethtool", "-g", iface))
		if err != nil {
			return err
		}
		_, cur, _ := strings.Cut(string(res.Stdout), "Current hardware settings:")
		re := regexp.MustCompile(`(?m)^RX:\s+(\d+)\n(?:.*\n)*?TX:\s+(\d+)`)
		m := re.FindStringSubmatch(cur)
		if m == nil || m[1] != fmt.Sprint(rx) || m[2] != fmt.Sprint(tx) {
			return fmt.Errorf("node %s: ethtool -g %s current settings %q, want rx %d tx %d", node, iface, cur, rx, tx)
		}
		return nil
	}
}

const cxUnit = "/etc/systemd/system/pve-nic-ring-cx354ap1.service"

// The reference lab's storage NIC: rings set, imported, changed, drift
// on the NIC and on the unit repaired, kept across a reboot; destroy
// removes the unit and leaves the sizes until the next reboot.
func TestAccNodeNICRing_lifecycle(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	requireSim(t, e, "needs the reference lab's ConnectX-3 port cx354ap1")
	node := e.Node(t, 0)
	lab := e.Config(ringConfig(node, "cx354ap1", "rx = 2048\n  tx = 2048"))
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				Config: lab,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					// Known at plan time from ethtool on the node.
					plancheck.ExpectKnownValue(ringAddr, tfjsonpath.New("driver"), knownvalue.StringExact("mlx4_en")),
					plancheck.ExpectKnownValue(ringAddr, tfjsonpath.New("rx_max"), knownvalue.Int64Exact(8192)),
					plancheck.ExpectKnownValue(ringAddr, tfjsonpath.New("boot_command"), knownvalue.StringExact("ethtool -G cx354ap1 rx 2048 tx 2048")),
				}},
				Check: resource.ComposeTestCheckFunc(
					checkRings(t, e, node, "cx354ap1", 2048, 2048),
					checkUnit(t, e, node, "pve-nic-ring-cx354ap1.service", map[string]string{"UnitFileState": "enabled", "NeedDaemonReload": "no"}),
				),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(ringAddr, tfjsonpath.New("id"), knownvalue.StringExact(node+"/cx354ap1")),
					statecheck.ExpectKnownValue(ringAddr, tfjsonpath.New("tx_max"), knownvalue.Int64Exact(8192)),
					statecheck.ExpectKnownValue(ringAddr, tfjsonpath.New("unit"), knownvalue.StringExact("pve-nic-ring-cx354ap1.service")),
				},
			},
			{ResourceName: ringAddr, ImportState: true, ImportStateId: node + "/cx354ap1", ImportStateVerify: true},
			{
				Config: e.Config(ringConfig(node, "cx354ap1", "rx = 4096\n  tx = 1024")),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(ringAddr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeTestCheckFunc(
					checkRings(t, e, node, "cx354ap1", 4096, 1024),
					func(*terraform.State) error {
						got, _ := e.Sim.NodeFile(node, cxUnit)
						if !strings.Contains(string(got), "\nExecStart=/usr/sbin/ethtool -G cx354ap1 rx 4096 tx 1024\n") {
							return fmt.Errorf("unit file:\n%s", got)
						}
						return nil
					},
				),
			},
			// Drift on the NIC: an admin changes the rings.
			{
				PreConfig:          outside(t, e, node, "ethtool", "-G", "cx354ap1", "rx", "512"),
				Config:             e.Config(ringConfig(node, "cx354ap1", "rx = 4096\n  tx = 1024")),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{Config: lab, Check: checkRings(t, e, node, "cx354ap1", 2048, 2048)},
			// Drift on the unit: removed, then disabled.
			{
				PreConfig: outside(t, e, node, "rm", "-f", "--", cxUnit),
				Config:    lab,
				PlanOnly:  true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(ringAddr, plancheck.ResourceActionUpdate),
				}},
				ExpectNonEmptyPlan: true,
			},
			{Config: lab, Check: checkFile(t, e, node, cxUnit, cxUnitText)},
			{
				PreConfig:          outside(t, e, node, "systemctl", "disable", "pve-nic-ring-cx354ap1.service"),
				Config:             lab,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{Config: lab, Check: checkUnit(t, e, node, "pve-nic-ring-cx354ap1.service", map[string]string{"UnitFileState": "enabled"})},
			// A reboot resets the rings; the unit sets them again, so the
			// plan stays empty.
			{
				PreConfig: func() { e.Sim.RebootNode(node) },
				Config:    lab,
				PlanOnly:  true,
				Check:     checkRings(t, e, node, "cx354ap1", 2048, 2048),
			},
		},
		CheckDestroy: func(*terraform.State) error {
			if _, ok := e.Sim.NodeFile(node, cxUnit); ok {
				return fmt.Errorf("%s survived destroy", cxUnit)
			}
			if _, _, ok := e.Sim.UnitState(node, "pve-nic-ring-cx354ap1.service"); ok {
				return fmt.Errorf("unit still loaded after destroy")
			}
			if rx, tx, _ := e.Sim.NICRing(node, "cx354ap1"); rx != 2048 || tx != 2048 {
				return fmt.Errorf("destroy changed the rings to %d/%d; they should stay until a reboot", rx, tx)
			}
			return nil
		},
	})
	e.Sim.RebootNode(node)
	if rx, tx, _ := e.Sim.NICRing(node, "cx354ap1"); rx != 1024 || tx != 1024 {
		t.Errorf("after destroy and a reboot the rings are %d/%d, want the driver defaults", rx, tx)
	}
}

const cxUnitText = `# Managed by Terraform (pve_node_nic_ring cx354ap1); changes here are overwritten.
# NIC ring sizes are lost when the device resets (reboot, driver reload); this unit
# sets them again whenever the device appears.
[Unit]
Description=Ring sizes of network interface cx354ap1
DefaultDependencies=no
BindsTo=sys-subsystem-net-devices-cx354ap1.device
After=sys-subsystem-net-devices-cx354ap1.device
Wants=network-pre.target
Before=network-pre.target shutdown.target
Conflicts=shutdown.target

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/sbin/ethtool -G cx354ap1 rx 2048 tx 2048

[Install]
WantedBy=sys-subsystem-net-devices-cx354ap1.device
`

// Only rx on the BCM5720 (its TX ring cannot exceed 511): tx is shown
// but neither set nor written into the unit.
func TestAccNodeNICRing_rxOnly(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	requireSim(t, e, "needs the reference lab's BCM5720 port bcm5720p1")
	node := e.Node(t, 1)
	cfg := e.Config(ringConfig(node, "bcm5720p1", "rx = 2047"))
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				Config: cfg,
				Check: resource.ComposeTestCheckFunc(
					checkRings(t, e, node, "bcm5720p1", 2047, 511),
					resource.TestCheckResourceAttr(ringAddr, "tx", "511"),
					resource.TestCheckResourceAttr(ringAddr, "boot_command", "ethtool -G bcm5720p1 rx 2047"),
				),
			},
			{ResourceName: ringAddr, ImportState: true, ImportStateId: node + "/bcm5720p1", ImportStateVerify: true},
			// An unmanaged tx changed on the node is no drift.
			{PreConfig: outside(t, e, node, "ethtool", "-G", "bcm5720p1", "tx", "256"), Config: cfg, PlanOnly: true},
			{
				PreConfig: func() { e.Sim.RebootNode(node) },
				Config:    cfg,
				PlanOnly:  true,
				Check:     checkRings(t, e, node, "bcm5720p1", 2047, 511),
			},
		},
	})
}

// Sizes the NIC would not keep are refused at plan time with the valid
// values; other mistakes too.
func TestAccNodeNICRing_planErrors(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	requireSim(t, e, "expects the reference lab's NIC models")
	node := e.Node(t, 2)
	step := func(iface, sizes, want string) resource.TestStep {
		return resource.TestStep{Config: e.Config(ringConfig(node, iface, sizes)), PlanOnly: true, ExpectError: errRE(want)}
	}
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			step("bcm5720p0", "rx = 2048\n  tx = 2048",
				`Invalid rx.*rx = 2048 exceeds the maximum of bcm5720p0 on this node: ethtool -g reports 2047 \(driver tg3\). Use rx = 2047 or less.*Invalid tx.*tx = 2048 exceeds.*511`),
			step("cx354ap1", "rx = 3000", `Invalid rx.*rx = 3000 is not a ring size the mlx4_en driver of cx354ap1 keeps.*power of two.*would run 4096.*Use rx = 2048 or rx = 4096`),
			step("cx354ap1", "tx = 16", `Invalid tx.*tx = 16 is below the minimum 64 of the mlx4_en driver.*Use tx = 64 or more`),
			step("i219", "rx = 1001", `Invalid rx.*multiple of 8.*Use rx = 1000 or rx = 1008`),
			step("bcm5720p0", "tx = 17", `Invalid tx.*tx = 17 is refused by the tg3 driver.*Use tx = 18 or more`),
			step("nosuch0", "rx = 1024", `Unknown network interface.*Node `+node+` has no network device nosuch0`),
			step("lo", "rx = 1024", `Network interface without rings.*has no ring parameters to set`),
			step("cx354ap1", "", `Missing Attribute Configuration.*At least one of these attributes must be configured: \[rx,tx\]`),
			step("cx3;reboot", "rx = 1024", `Invalid iface.*network interface name`),
			step("cx354ap1", "rx = 0", `Invalid Attribute Value.*rx`),
			{Config: e.ProviderConfigWithoutSSH(t) + ringConfig(node, "cx354ap1", "rx = 2048"), PlanOnly: true,
				ExpectError: errRE(`pve_node_nic_ring needs SSH access to the nodes.*ssh \{`)},
		},
	})
	for _, c := range e.Sim.SSHCommands() {
		if strings.Contains(c.Line, "-G") || strings.HasPrefix(c.Line, "install") {
			t.Errorf("a plan changed the node: %q", c.Line)
		}
	}
}

// A driver the provider has no rules for is checked after applying: a
// value it changed is reported with the value it applied, and the NIC
// gets its previous sizes back.
func TestAccNodeNICRing_unknownDriverReadback(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	requireSim(t, e, "fakes a driver in the simulator")
	node := e.Node(t, 0)
	e.Sim.InjectSSHFault(pvesim.SSHFault{Node: node, Program: "ethtool", Args: "-i cx354ap1", Answer: &pvesim.SSHAnswer{
		Stdout: "driver: mlx4_en_oot\nversion: 4.0-0\nfirmware-version: 2.42.5000\nexpansion-rom-version: \nbus-info: 0000:01:00.0\n" +
			"supports-statistics: yes\nsupports-test: yes\nsupports-eeprom-access: no\nsupports-register-dump: no\nsupports-priv-flags: yes\n",
	}})
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{{
			Config:      e.Config(ringConfig(node, "cx354ap1", "rx = 3000\n  tx = 1024")),
			ExpectError: errRE(`Unable to Create NIC ring sizes ` + node + `/cx354ap1.*the mlx4_en_oot driver of cx354ap1 applied rx 4096 instead of 3000; the provider restored the previous sizes. Set values the driver keeps \(such as rx = 4096\)`),
		}},
	})
	if rx, tx, _ := e.Sim.NICRing(node, "cx354ap1"); rx != 1024 || tx != 1024 {
		t.Errorf("rings %d/%d after the refused value; want the previous 1024/1024", rx, tx)
	}
	if _, ok := e.Sim.NodeFile(node, cxUnit); ok {
		t.Error("the unit was written for a refused value")
	}
}
