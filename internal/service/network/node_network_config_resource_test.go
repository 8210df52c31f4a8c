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

// referenceLabConfig is the reference lab's first node (addresses .10) as
// one resource, with extra interfaces.
func referenceLabConfig(node string, extra string) string {
	return fmt.Sprintf(`
resource "pve_node_network_config" "lab" {
  node = %[1]q
  interfaces = {
    bond0 = { type = "bond", slaves = ["bcm5720p0", "bcm5720p1"], bond_mode = "802.3ad" }
    bridge0 = {
      type              = "bridge"
      bridge_ports      = ["bond0"]
      bridge_vlan_aware = true
      bridge_vids       = "2-4094"
      cidr              = "172.27.2.10/24"
      gateway           = "172.27.2.254"
    }
    "bridge0.60" = { type = "vlan", cidr = "169.254.60.10/24", comments = "corosync link0" }
    cx354ap1     = { type = "eth", cidr = "169.254.50.10/24", mtu = 9000, comments = "storage network" }
    %[2]s
  }
}
`, node, extra)
}

func countReloads(e *acctest.Env, node string, from int) int {
	var n int
	for _, r := range e.Sim.Requests()[from:] {
		if r.Method == "PUT" && r.Path == "/nodes/"+node+"/network" {
			n++
		}
	}
	return n
}

// The management cutover from the installer's vmbr0 to bridge0 over bond0
// in one apply: one staged pass, exactly one reload, vmbr0 gone; the second
// plan is empty, and so is the plan after importing the node.
func TestAccNodeNetworkConfig_cutover(t *testing.T) {
	t.Parallel()
	e, node := freshInstallEnv(t)
	const addr = "pve_node_network_config.lab"
	var mark int
	e.Run(t, resource.TestCase{
		// Destroying the resource leaves the node as it is.
		CheckDestroy: checkOnNode(e, node, "bridge0", func(in *pve.NetworkInterface) error {
			if in.Gateway != "172.27.2.254" {
				return fmt.Errorf("destroy changed the node's management bridge: %+v", *in)
			}
			return nil
		}),
		Steps: []resource.TestStep{
			{
				PreConfig: func() { mark = len(e.Sim.Requests()) },
				Config:    e.Config(referenceLabConfig(node, "")),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "id", node),
					resource.TestCheckResourceAttr(addr, "interfaces.%", "4"),
					resource.TestCheckResourceAttr(addr, "interfaces.bond0.bond_mode", "802.3ad"),
					resource.TestCheckResourceAttr(addr, "interfaces.bridge0.60.vlan_raw_device", "bridge0"),
					resource.TestCheckResourceAttr(addr, "interfaces.bridge0.60.vlan_id", "60"),
					resource.TestCheckResourceAttr(addr, "rollback_timeout_seconds", "120"),
					checkGoneFromNode(e, node, "vmbr0"),
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
					checkOnNode(e, node, "cx354ap1", func(in *pve.NetworkInterface) error {
						if in.MTU != 9000 || in.Address != "169.254.50.10" {
							return fmt.Errorf("node reports %+v", *in)
						}
						return nil
					}),
					func(*terraform.State) error {
						if n := countReloads(e, node, mark); n != 1 {
							return fmt.Errorf("the cutover reloaded node %s %d times, want exactly 1", node, n)
						}
						return nil
					},
				),
			},
			{
				Config:   e.Config(referenceLabConfig(node, "")),
				PlanOnly: true,
			},
			{
				// Importing the node reads back exactly this state.
				ResourceName:      addr,
				ImportState:       true,
				ImportStateId:     node,
				ImportStateVerify: true,
			},
			{
				// One changed comment is one update and one reload.
				PreConfig: func() { mark = len(e.Sim.Requests()) },
				Config:    e.Config(strings.Replace(referenceLabConfig(node, ""), "corosync link0", "corosync link0 (vlan 60)", 1)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error {
					var writes []string
					for _, r := range e.Sim.Requests()[mark:] {
						if r.Method != "GET" && strings.HasPrefix(r.Path, "/nodes/"+node+"/network") {
							writes = append(writes, r.Method+" "+r.Path)
						}
					}
					want := "PUT /nodes/" + node + "/network/bridge0.60, PUT /nodes/" + node + "/network"
					if strings.Join(writes, ", ") != want {
						return fmt.Errorf("network writes = %v, want %s", writes, want)
					}
					return nil
				},
			},
		},
	})
}

// A node configured by hand (the reference lab's set, the installer's
// vmbr0 already gone) is imported by its name: bridges, bonds, VLANs and the
// NICs that carry configuration; the plan of the same set is then empty.
func TestAccNodeNetworkConfig_importUnchangedNode(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	if e.Sim == nil {
		t.Skip("rewires the node's management network; run it only against the simulator")
	}
	node := e.Node(t, 0)
	const addr = "pve_node_network_config.lab"
	config := e.Config(referenceLabConfig(node, ""))
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		{
			PreConfig: func() {
				applyOutOfBand(t, e, node, func(ctx context.Context, c *pve.Client) error {
					for _, in := range []struct {
						name string
						req  pve.NetworkInterfaceRequest
					}{
						{"cx354ap1", pve.NetworkInterfaceRequest{Type: "eth", CIDR: ptr("169.254.50.10/24"), MTU: ptr(int64(9000)), Comments: ptr("storage network"), Autostart: ptr(true)}},
						{"bond0", pve.NetworkInterfaceRequest{Type: "bond", Slaves: &[]string{"bcm5720p0", "bcm5720p1"}, BondMode: ptr("802.3ad"), Autostart: ptr(true)}},
						{"bridge0", pve.NetworkInterfaceRequest{Type: "bridge", BridgePorts: &[]string{"bond0"}, BridgeVLANAware: ptr(true),
							BridgeVIDs: ptr("2-4094"), CIDR: ptr("172.27.2.10/24"), Gateway: ptr("172.27.2.254"), Autostart: ptr(true)}},
						{"bridge0.60", pve.NetworkInterfaceRequest{Type: "vlan", CIDR: ptr("169.254.60.10/24"), Comments: ptr("corosync link0"), Autostart: ptr(true)}},
					} {
						var err error
						if in.req.Type == "eth" {
							err = c.UpdateNetworkInterface(ctx, node, in.name, in.req)
						} else {
							err = c.CreateNetworkInterface(ctx, node, in.name, in.req)
						}
						if err != nil {
							return fmt.Errorf("%s: %w", in.name, err)
						}
					}
					return nil
				})
			},
			Config:             config,
			ResourceName:       addr,
			ImportState:        true,
			ImportStateId:      node,
			ImportStatePersist: true,
			ImportStateCheck: func(states []*terraform.InstanceState) error {
				if len(states) != 1 || states[0].Attributes["interfaces.%"] != "4" {
					return fmt.Errorf("imported %v", states)
				}
				return nil
			},
		},
		{
			// The imported node plans no change.
			Config:   config,
			PlanOnly: true,
		},
	}})
}

// A NIC left out of interfaces is reset to a bare manual NIC when it
// carries configuration; a bridge left out is deleted.
func TestAccNodeNetworkConfig_ownership(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	if e.Sim == nil {
		t.Skip("rewires the node's management network; run it only against the simulator")
	}
	node := e.Node(t, 0)
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		{Config: e.Config(referenceLabConfig(node, `vmbr9 = { type = "bridge", cidr = "10.9.0.1/24" }`))},
		{
			Config: e.Config(strings.Replace(referenceLabConfig(node, ""),
				`cx354ap1     = { type = "eth", cidr = "169.254.50.10/24", mtu = 9000, comments = "storage network" }`, "", 1)),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("pve_node_network_config.lab", "interfaces.%", "3"),
				checkGoneFromNode(e, node, "vmbr9"),
				checkOnNode(e, node, "cx354ap1", func(in *pve.NetworkInterface) error {
					if in.Address != "" || in.MTU != 0 || in.Comments != "" {
						return fmt.Errorf("unlisted NIC still configured: %+v", *in)
					}
					return nil
				}),
			),
		},
	}})
}

func TestAccNodeNetworkConfig_planChecks(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	node := e.Node(t, 0)
	nics := e.NICs(t, 2)
	cfg := func(body string) string {
		return e.Config(fmt.Sprintf(`
resource "pve_node_network_config" "test" {
  node       = %q
  interfaces = {
%s
  }
}
`, node, body))
	}
	step := func(body, want string) resource.TestStep {
		return resource.TestStep{Config: cfg(body), PlanOnly: true, ExpectError: regexp.MustCompile(want)}
	}
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		{
			// A value unknown at plan time skips the checks that need it.
			Config: e.Config(`
resource "terraform_data" "gw" {
  input = "10.2.0.254"
}
`) + strings.TrimPrefix(cfg(`
    vmbr1 = { type = "bridge", cidr = "10.1.0.1/24", gateway = "10.1.0.254" }
    vmbr2 = { type = "bridge", cidr = "10.2.0.1/24", gateway = terraform_data.gw.output }`), e.ProviderConfig()),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
		},
		step(`
    vmbr1 = { type = "bridge", cidr = "10.1.0.1/24", gateway = "10.1.0.254" }
    vmbr2 = { type = "bridge", cidr = "10.2.0.1/24", gateway = "10.2.0.254" }`,
			`(?s)More\s+than\s+one\s+default\s+gateway.*interfaces\["vmbr2"\]\.gateway.*one\s+IPv4\s+default\s+gateway.*vmbr1,\s+vmbr2`),
		step(`
    vmbr1 = { type = "bridge", cidr = "10.1.0.1/24", gateway = "10.9.0.254" }`,
			`(?s)Gateway\s+outside\s+the\s+interface's\s+subnet.*interfaces\["vmbr1"\]\.gateway.*not\s+in\s+vmbr1's\s+subnet\s+10\.1\.0\.0/24`),
		step(fmt.Sprintf(`
    bond1 = { type = "bond", slaves = [%q] }
    vmbr1 = { type = "bridge", bridge_ports = [%q] }`, nics[0], nics[0]),
			`(?s)Interface\s+used\s+twice.*interfaces\["vmbr1"\]\.bridge_ports.*already\s+in\s+slaves\s+of\s+bond1`),
		step(fmt.Sprintf(`
    bond1 = { type = "bond", slaves = [%q] }
    bond2 = { type = "bond", slaves = ["bond1", %q] }`, nics[0], nics[1]),
			`(?s)Bond\s+slave\s+is\s+not\s+a\s+NIC.*interfaces\["bond2"\]\.slaves.*bond1\s+is\s+a\s+bond`),
		step(`
    vmbr1 = { type = "bridge" }
    vmbr2 = { type = "bridge", bridge_ports = ["vmbr1"] }`,
			`(?s)Bridge\s+port\s+is\s+a\s+bridge.*interfaces\["vmbr2"\]\.bridge_ports`),
		step(`
    vmbr1 = { type = "bridge", bridge_ports = ["bond9"] }`,
			`(?s)Unknown\s+interface.*interfaces\["vmbr1"\]\.bridge_ports.*"bond9",\s+which\s+is\s+neither\s+in\s+interfaces\s+nor\s+a\s+physical\s+NIC`),
		step(`
    "vmbr7.60" = { type = "vlan" }`,
			`(?s)Unknown\s+interface.*interfaces\["vmbr7\.60"\].*"vmbr7"`),
		step(fmt.Sprintf(`
    bond1 = { type = "bond", slaves = [%q], bond_mode = "balance-slb" }`, nics[0]),
			`(?s)OVS\s+bond\s+mode.*interfaces\["bond1"\]\.bond_mode.*Open\s+vSwitch\s+bond\s+mode.*802\.3ad`),
		step(`
    enp99s0 = { type = "eth", mtu = 9000 }`,
			`(?s)No\s+such\s+physical\s+NIC.*interfaces\["enp99s0"\]\.type.*its\s+NICs\s+are`),
		step(`
    bridge0      = { type = "bridge", mtu = 1500 }
    "bridge0.50" = { type = "vlan", mtu = 9000 }`,
			`(?s)MTU\s+lower\s+than\s+the\s+interface\s+on\s+top.*interfaces\["bridge0\.50"\]\.mtu.*bridge0\s+has\s+MTU\s+1500`),
		step(fmt.Sprintf(`
    %[1]s = { type = "eth", mtu = 9000 }
    bond1 = { type = "bond", slaves = [%[1]q], mtu = 1500 }`, nics[0]),
			`(?s)MTU\s+lower.*interfaces\["`+nics[0]+`"\]\.mtu.*bond1\s+has\s+MTU\s+1500`),
		step(`
    bond1 = { type = "bond" }`,
			`(?s)Missing\s+bond\s+slaves.*interfaces\["bond1"\]\.slaves`),
		step(`
    vmbr1 = { type = "bridge", slaves = ["x1"] }`,
			`(?s)Attribute\s+not\s+valid\s+for\s+this\s+interface\s+type.*interfaces\["vmbr1"\]\.slaves`),
	}})
}

// PVE refusing one step mid-pass reverts what this apply staged (and only
// that: it starts only with nothing staged) and never reloads: the node
// keeps the installer's vmbr0.
func TestAccNodeNetworkConfig_refusedStepRevertsOwnStaging(t *testing.T) {
	t.Parallel()
	e, node := freshInstallEnv(t)
	var mark int
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
		PreConfig: func() {
			mark = len(e.Sim.Requests())
			// vmbr0's delete is staged by then; the first create is refused.
			e.Sim.InjectFault(pvesim.Fault{Method: "POST", Path: "^/nodes/" + node + "/network$", Kind: pvesim.FaultError,
				Status: 400, Message: "parameter verification failed", Count: 1})
		},
		Config:      e.Config(referenceLabConfig(node, "")),
		ExpectError: regexp.MustCompile(`(?s)Unable to Create node network configuration.*staging step "create bond0".*was refused`),
	}}, CheckDestroy: func(*terraform.State) error {
		list, err := e.Client.Network(context.Background(), node)
		if err != nil {
			return err
		}
		if strings.TrimSpace(list.Changes) != "" {
			return fmt.Errorf("the refused apply left staged changes:\n%s", list.Changes)
		}
		if err := checkOnNode(e, node, "vmbr0", func(in *pve.NetworkInterface) error {
			if in.Gateway != "172.27.2.254" {
				return fmt.Errorf("vmbr0 changed: %+v", *in)
			}
			return nil
		})(nil); err != nil {
			return err
		}
		if n := countReloads(e, node, mark); n != 0 {
			return fmt.Errorf("a refused staging step still reloaded node %s %d times", node, n)
		}
		return nil
	}})
}

// A step that never gets an answer (every connection drops: read back,
// it is not staged, and sending it again drops too) is not called refused,
// and the revert drops what was staged: nothing staged is left, nothing
// reloaded. (A single lost answer converges: node_network_lost_test.go.)
func TestAccNodeNetworkConfig_lostStepAnswerReverts(t *testing.T) {
	t.Parallel()
	e, node := freshInstallEnv(t)
	var mark int
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
		PreConfig: func() {
			mark = len(e.Sim.Requests())
			e.Sim.InjectFault(pvesim.Fault{Method: "POST", Path: "^/nodes/" + node + "/network$", Kind: pvesim.FaultConnectionReset})
		},
		Config:      e.Config(referenceLabConfig(node, "")),
		ExpectError: regexp.MustCompile(`(?s)Unable to Create node network configuration.*staging step "create bond0".*got no answer`),
	}}, CheckDestroy: func(*terraform.State) error {
		list, err := e.Client.Network(context.Background(), node)
		if err != nil {
			return err
		}
		if strings.TrimSpace(list.Changes) != "" {
			return fmt.Errorf("the failed apply left staged changes:\n%s", list.Changes)
		}
		if n := countReloads(e, node, mark); n != 0 {
			return fmt.Errorf("a failed staging step still reloaded node %s %d times", node, n)
		}
		return nil
	}})
}

// Someone staged a change in the UI: the apply refuses and leaves it staged.
func TestAccNodeNetworkConfig_refusesForeignPendingChanges(t *testing.T) {
	t.Parallel()
	e, node := freshInstallEnv(t)
	e.Run(t, foreignPendingChangeCase(t, e, node, referenceLabConfig(node, ""), "Unable to Create node network configuration"))
}

// Jumbo frames on the bond, its slaves, the bridge and the VLAN, then back:
// PVE's writer wants a bond's MTU at least its slaves' and a bridge port's
// at least the bridge's in every file written, so lowering goes top down and
// raising bottom up, each in one reload.
func TestAccNodeNetworkConfig_mtuUpAndDown(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	if e.Sim == nil {
		t.Skip("rewires the node's management network; run it only against the simulator")
	}
	node := e.Node(t, 0)
	config := func(mtu int) string {
		return e.Config(fmt.Sprintf(`
resource "pve_node_network_config" "lab" {
  node = %[1]q
  interfaces = {
    bcm5720p0    = { type = "eth", mtu = %[2]d }
    bcm5720p1    = { type = "eth", mtu = %[2]d }
    bond0        = { type = "bond", slaves = ["bcm5720p0", "bcm5720p1"], bond_mode = "802.3ad", mtu = %[2]d }
    bridge0      = { type = "bridge", bridge_ports = ["bond0"], cidr = "172.27.2.10/24", gateway = "172.27.2.254", mtu = %[2]d }
    "bridge0.60" = { type = "vlan", cidr = "169.254.60.10/24", mtu = %[2]d }
  }
}
`, node, mtu))
	}
	var mark int
	oneReload := func(*terraform.State) error {
		if n := countReloads(e, node, mark); n != 1 {
			return fmt.Errorf("%d reloads, want 1", n)
		}
		return nil
	}
	mtuOnNode := func(want int64) resource.TestCheckFunc {
		var checks []resource.TestCheckFunc
		for _, n := range []string{"bcm5720p0", "bond0", "bridge0", "bridge0.60"} {
			checks = append(checks, checkOnNode(e, node, n, func(in *pve.NetworkInterface) error {
				if in.MTU != want {
					return fmt.Errorf("%s has MTU %d, want %d", in.Iface, in.MTU, want)
				}
				return nil
			}))
		}
		return resource.ComposeAggregateTestCheckFunc(checks...)
	}
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		{Config: config(9000), Check: mtuOnNode(9000)},
		{
			PreConfig: func() { mark = len(e.Sim.Requests()) },
			Config:    config(1500),
			Check:     resource.ComposeAggregateTestCheckFunc(mtuOnNode(1500), oneReload),
		},
		{
			PreConfig: func() { mark = len(e.Sim.Requests()) },
			Config:    config(9000),
			Check:     resource.ComposeAggregateTestCheckFunc(mtuOnNode(9000), oneReload),
		},
		{Config: config(9000), PlanOnly: true},
	}})
}
