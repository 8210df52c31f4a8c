package network_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

func refsRE(p string) *regexp.Regexp { return regexp.MustCompile(strings.ReplaceAll(p, " ", `\s+`)) }

// refusedAtPlan runs config, expecting want at plan, and asserts from the
// simulator's request log that nothing but reads reached PVE.
func refusedAtPlan(t *testing.T, e *acctest.Env, config, want string) {
	t.Helper()
	if e.Sim == nil {
		t.Skip("asserts the simulator's request log")
	}
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
		PreConfig:   func() { e.Sim.ResetRequests() },
		Config:      e.Config(config),
		ExpectError: refsRE(want),
	}}})
	for _, r := range e.Sim.Requests() {
		if r.Method != "GET" {
			t.Errorf("refused at plan, yet %s %s was sent", r.Method, r.Path)
		}
	}
}

// A bond slave, a bridge port and a VLAN raw device the node does not
// have: PVE's writer refuses the staged file in the apply; the plan names
// the attribute and lists the node's NICs.
func TestAccNodeNetwork_planRefusesMissingReferences(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"slave", `iface = "bond7"
  type  = "bond"
  slaves = [%q, "nosuchnic"]`, `(?s)Unable to plan pve_node_network %s/bond7: bond slave nosuchnic does not exist on node %[1]s.*slaves\[1\] = "nosuchnic".*Its NICs: [^;]*%[2]s`},
		{"port", `iface = "vmbr42"
  type  = "bridge"
  bridge_ports = ["bond9"]`, `(?s)Unable to plan pve_node_network %s/vmbr42: bridge port bond9 does not exist.*bridge_ports\[0\] = "bond9".*Its NICs: [^;]*%[2]s`},
		{"raw", `iface = "storage71"
  type  = "vlan"
  vlan_raw_device = "bond9"
  vlan_id = 71`, `(?s)Unable to plan pve_node_network %s/storage71: VLAN raw device bond9 does not exist.*vlan_raw_device = "bond9".*Its NICs: [^;]*%[2]s`},
		{"dotted", `iface = "nosuchnic.60"
  type  = "vlan"`, `(?s)Unable to plan pve_node_network %s/nosuchnic.60: VLAN parent nosuchnic does not exist.*iface = "nosuchnic.60", but node %[1]s has no interface nosuchnic.*Its NICs: [^;]*%[2]s`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := acctest.New(t)
			node, nic := e.Node(t, 0), e.NICs(t, 1)[0]
			body := tc.body
			if strings.Contains(body, "%q") {
				body = fmt.Sprintf(body, nic)
			}
			refusedAtPlan(t, e, fmt.Sprintf("resource \"pve_node_network\" \"test\" {\n  node = %q\n  %s\n}\n", node, body),
				fmt.Sprintf(tc.want, node, nic))
		})
	}
}

// A port created by another pve_node_network of the same plan is let
// through (the referring interface is planned after it).
func TestAccNodeNetwork_planAcceptsPortOfSamePlan(t *testing.T) {
	e := acctest.New(t)
	node, nics := e.Node(t, 0), e.NICs(t, 2)
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
		Config: e.Config(fmt.Sprintf(`
resource "pve_node_network" "bond" {
  node   = %[1]q
  iface  = "bond7"
  type   = "bond"
  slaves = [%[2]q, %[3]q]
}
resource "pve_node_network" "br" {
  node         = %[1]q
  iface        = "vmbr42"
  type         = "bridge"
  bridge_ports = [pve_node_network.bond.iface]
}
`, node, nics[0], nics[1])),
		Check: resource.TestCheckResourceAttr("pve_node_network.br", "bridge_ports.0", "bond7"),
	}}})
}

// An unknown node (framework.PlanCheckNode) on both network resources.
func TestAccNodeNetwork_planRefusesUnknownNode(t *testing.T) {
	e := acctest.New(t)
	refusedAtPlan(t, e, `resource "pve_node_network" "test" {
  node  = "nosuch"
  iface = "vmbr42"
  type  = "bridge"
}
resource "pve_node_network_config" "all" {
  node       = "nosuch2"
  interfaces = {}
}
`, `(?s)Unable to plan pve_node_network: unknown node nosuch.*Unable to plan pve_node_network_config: unknown node nosuch2|(?s)Unable to plan pve_node_network_config: unknown node nosuch2.*Unable to plan pve_node_network: unknown node nosuch`)
}
