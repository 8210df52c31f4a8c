package node_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
)

// refusedAtPlan runs config, expecting want at plan, and asserts from the
// simulator's request log that nothing but reads reached the API.
func refusedAtPlan(t *testing.T, e *acctest.Env, config, want string) {
	t.Helper()
	requireSim(t, e, "asserts the simulator's request log")
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
		PreConfig:   func() { e.Sim.ResetRequests() },
		Config:      e.Config(config),
		ExpectError: errRE(want),
	}}})
	for _, r := range e.Sim.Requests() {
		if r.Method != "GET" {
			t.Errorf("refused at plan, yet %s %s was sent", r.Method, r.Path)
		}
	}
}

// A profile the node does not have: tuned-adm profile fails in the apply
// ("Cannot find profile"); the plan lists the node's profiles (tuned-adm
// list) and the node keeps its profile.
func TestAccNodeTunedProfile_planRefusesUnknownProfile(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	node := e.Node(t, 0)
	ex := e.NodeExec(t)
	before, err := ex.Run(context.Background(), node, nodeexec.Cmd("tuned-adm", "active").AcceptExit(1))
	if err != nil {
		t.Fatal(err)
	}
	refusedAtPlan(t, e, tunedConfig(node, "latency-performance no-such-profile"),
		`Unable to plan pve_node_tuned_profile `+node+`: tuned profile no-such-profile does not exist on the node.*`+
			`profile = "latency-performance no-such-profile".*Profiles on the node: [^.]*latency-performance, [^.]*virtual-host`)
	after, err := ex.Run(context.Background(), node, nodeexec.Cmd("tuned-adm", "active").AcceptExit(1))
	if err != nil {
		t.Fatal(err)
	}
	if string(after.Stdout) != string(before.Stdout) {
		t.Errorf("tuned changed: %q, then %q", before.Stdout, after.Stdout)
	}
}

// A NIC the node does not have is refused with the node's NICs listed.
func TestAccNodeNICRing_planListsNICs(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	node := e.Node(t, 0)
	refusedAtPlan(t, e, ringConfig(node, "nosuch0", "rx = 1024"),
		`Unknown network interface.*Node `+node+` has no network device nosuch0.*Its NICs: [^.]*`+e.NICs(t, 1)[0])
}

// An unknown node, refused by framework.PlanCheckNodeAttr on every node
// resource, before any SSH connection is tried.
func TestAccNodeResources_planRefuseUnknownNode(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	for _, tc := range []struct{ typ, body string }{
		{"pve_node_tuned_profile", `profile = "balanced"`},
		{"pve_node_nic_ring", `iface = "cx354ap1"
  rx = 1024`},
		{"pve_node_service", `unit = "tuned.service"
  enabled = true`},
		{"pve_node_file", `path = "/etc/x.conf"
  content = "x"`},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			refusedAtPlan(t, e, fmt.Sprintf("resource %q \"this\" {\n  node = \"nosuch\"\n  %s\n}\n", tc.typ, tc.body),
				`Unable to plan `+tc.typ+`: unknown node nosuch.*node = "nosuch" is not a node of .*GET /nodes lists [^)]*`+e.Node(t, 0))
		})
	}
}
