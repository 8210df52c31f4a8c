package network_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

// lostAnswerCase is one network write whose connection drops: before PVE
// acted (drop-before) or after, the answer lost (drop-after).
type lostAnswerCase struct {
	name   string
	method string
	path   string // regexp on the API path, as pvesim.Fault.Path
	kind   pvesim.FaultKind
}

func lostAnswerCases(writes map[string][2]string) []lostAnswerCase {
	var out []lostAnswerCase
	for _, name := range sortedNames(writes) {
		w := writes[name]
		for _, k := range []struct {
			suffix string
			kind   pvesim.FaultKind
		}{{"drop-before", pvesim.FaultConnectionReset}, {"drop-after", pvesim.FaultDropAfter}} {
			out = append(out, lostAnswerCase{name: name + "/" + k.suffix, method: w[0], path: w[1], kind: k.kind})
		}
	}
	return out
}

func sortedNames(m map[string][2]string) []string {
	out := slices.Collect(maps.Keys(m))
	slices.Sort(out)
	return out
}

// effective counts the requests of method on path (with param = value
// when param is set) since from that took effect in PVE (all but those
// dropped before it acted), and reports whether one met a fault.
func effective(e *acctest.Env, from int, method, path string, param, value string) (n int, faulted bool) {
	for _, r := range e.Sim.Requests()[from:] {
		if r.Method != method || r.Path != path || param != "" && r.Params[param] != value {
			continue
		}
		if r.Fault != "" {
			faulted = true
		}
		if r.Fault != "drop-before" {
			n++
		}
	}
	return n, faulted
}

func nothingStaged(e *acctest.Env, node string) error {
	list, err := e.Client.Network(context.Background(), node)
	if err != nil {
		return err
	}
	if strings.TrimSpace(list.Changes) != "" {
		return fmt.Errorf("staged changes left behind:\n%s", list.Changes)
	}
	return nil
}

// A staging step or the reload of the management cutover loses its
// connection once, before PVE acted or after: the apply reads back the
// staged view (or follows the reload's task) and goes on, sending the write
// again only when PVE did not take it. One apply converges: the cutover is
// on the node, bond0 was staged and the reload ran exactly once, nothing is
// left staged, and the next plan is empty.
func TestAccNodeNetworkConfig_lostAnswersConverge(t *testing.T) {
	t.Parallel()
	for _, tc := range lostAnswerCases(map[string][2]string{
		"create": {"POST", "^/nodes/[^/]+/network$"},         // the first create: bond0
		"delete": {"DELETE", "^/nodes/[^/]+/network/vmbr0$"}, // the installer's bridge leaves
		"update": {"PUT", "^/nodes/[^/]+/network/cx354ap1$"}, // a NIC gets an address and MTU
		"reload": {"PUT", "^/nodes/[^/]+/network$"},          // the cutover's reload (armed)
	}) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, node := freshInstallEnv(t)
			config := e.Config(referenceLabConfig(node, ""))
			var mark int
			e.Run(t, resource.TestCase{Steps: []resource.TestStep{
				{
					PreConfig: func() {
						mark = len(e.Sim.Requests())
						e.Sim.InjectFault(pvesim.Fault{Method: tc.method, Path: tc.path, Kind: tc.kind, Count: 1})
					},
					Config: config,
					Check: resource.ComposeAggregateTestCheckFunc(
						checkGoneFromNode(e, node, "vmbr0"),
						checkOnNode(e, node, "bridge0", func(in *pve.NetworkInterface) error {
							if in.Gateway != "172.27.2.254" || strings.Join(in.BridgePorts, " ") != "bond0" {
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
							hit := false
							for _, r := range e.Sim.Requests()[mark:] {
								hit = hit || r.Fault != ""
							}
							if !hit {
								return fmt.Errorf("no request met the fault %s %s", tc.method, tc.path)
							}
							if n, _ := effective(e, mark, "POST", "/nodes/"+node+"/network", "iface", "bond0"); n != 1 {
								return fmt.Errorf("bond0 was staged %d times, want 1", n)
							}
							if n, _ := effective(e, mark, "PUT", "/nodes/"+node+"/network", "", ""); n != 1 {
								return fmt.Errorf("the node reloaded %d times, want 1", n)
							}
							return nothingStaged(e, node)
						},
						checkDisarmed(t, e, node),
					),
				},
				{Config: config, PlanOnly: true},
			}})
		})
	}
}

// pve_node_network's writes lose their connection once, before PVE acted
// or after: the create (POST), its reload (not the management path: no
// rollback), an update and the delete each converge in one apply, each
// staged once and reloaded once, nothing left staged; the next plan is
// empty.
func TestAccNodeNetwork_lostAnswersConverge(t *testing.T) {
	t.Parallel()
	for _, tc := range lostAnswerCases(map[string][2]string{
		"create": {"POST", "^/nodes/[^/]+/network$"},
		"reload": {"PUT", "^/nodes/[^/]+/network$"}, // the create's reload
		"update": {"PUT", "^/nodes/[^/]+/network/vmbr45$"},
		"delete": {"DELETE", "^/nodes/[^/]+/network/vmbr45$"},
	}) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := acctest.New(t)
			if e.Sim == nil {
				t.Skip("needs the simulator's fault injection")
			}
			node := e.Node(t, 0)
			bridge := func(comment string) string {
				return e.Config(fmt.Sprintf(`
resource "pve_node_network" "test" {
  node     = %q
  iface    = "vmbr45"
  type     = "bridge"
  cidr     = "10.45.0.1/24"
  comments = %q
}
`, node, comment))
			}
			var mark int
			injected := false
			faultIn := func(steps ...string) func() {
				return func() {
					mark, injected = len(e.Sim.Requests()), false
					for _, st := range steps {
						if strings.HasPrefix(tc.name, st+"/") {
							e.Sim.InjectFault(pvesim.Fault{Method: tc.method, Path: tc.path, Kind: tc.kind, Count: 1})
							injected = true
						}
					}
				}
			}
			times := func(want int, method, path, param, value string) resource.TestCheckFunc {
				return func(*terraform.State) error {
					n, faulted := effective(e, mark, method, path, param, value)
					if n != want {
						return fmt.Errorf("%d %s %s took effect, want %d", n, method, path, want)
					}
					r, rf := effective(e, mark, "PUT", "/nodes/"+node+"/network", "", "")
					if r != 1 {
						return fmt.Errorf("the node reloaded %d times, want 1", r)
					}
					if injected && !faulted && !rf {
						return fmt.Errorf("no request met the fault %s %s", tc.method, tc.path)
					}
					return nothingStaged(e, node)
				}
			}
			ifaces := "/nodes/" + node + "/network"
			updates := 1
			if tc.name == "update/drop-after" {
				updates = 2 // an update sets absolute values: its lost answer is sent again as is
			}
			e.Run(t, resource.TestCase{Steps: []resource.TestStep{
				{
					PreConfig: faultIn("create", "reload"),
					Config:    bridge("first"),
					Check: resource.ComposeAggregateTestCheckFunc(
						checkOnNode(e, node, "vmbr45", func(in *pve.NetworkInterface) error {
							if !in.Active || in.Address != "10.45.0.1" {
								return fmt.Errorf("node reports %+v", *in)
							}
							return nil
						}),
						times(1, "POST", ifaces, "iface", "vmbr45"),
					),
				},
				{
					PreConfig: faultIn("update"),
					Config:    bridge("second"),
					Check: resource.ComposeAggregateTestCheckFunc(
						checkOnNode(e, node, "vmbr45", func(in *pve.NetworkInterface) error {
							if strings.TrimSpace(in.Comments) != "second" {
								return fmt.Errorf("node reports %+v", *in)
							}
							return nil
						}),
						times(updates, "PUT", ifaces+"/vmbr45", "", ""),
					),
				},
				{Config: bridge("second"), PlanOnly: true},
				{
					PreConfig: faultIn("delete"),
					Config:    e.Config(),
					Check: resource.ComposeAggregateTestCheckFunc(
						checkGoneFromNode(e, node, "vmbr45"),
						times(1, "DELETE", ifaces+"/vmbr45", "", ""),
					),
				},
				{Config: e.Config(), PlanOnly: true},
			}})
		})
	}
}
