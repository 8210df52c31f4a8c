package network_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

func netWritesSince(e *acctest.Env, from int) []string {
	var out []string
	for _, r := range e.Sim.Requests()[from:] {
		if r.Method == http.MethodGet || strings.HasPrefix(r.Path, "/access/ticket") {
			continue
		}
		out = append(out, r.Method+" "+r.Path)
	}
	return out
}

// Two bonds claiming one NIC, and two default gateways on a node, across
// pve_node_network resources of one plan: refused at plan, nothing written
// (before, the first was applied and the second refused).
func TestAccNodeNetworkPlan_conflictsAcrossResourcesRefused(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	if e.Sim == nil {
		t.Skip("checks the simulator's request log")
	}
	node := e.Node(t, 0)
	nics := e.NICs(t, 3)
	bond := func(name string, slaves []string, body string) string {
		return fmt.Sprintf(`
resource "pve_node_network" %q {
  node   = %q
  iface  = %q
  type   = "bond"
  slaves = ["%s"]
  bond_mode = "active-backup"
%s}
`, name, node, name, strings.Join(slaves, `", "`), body)
	}
	from := 0
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		{
			PreConfig: func() { from = len(e.Sim.Requests()) },
			Config:    e.Config(bond("bond7", nics[:2], ""), bond("bond8", nics[1:3], "")),
			ExpectError: planRE(`(?s)Unable to Apply network interface ` + node + `/bond[78].*The plan makes ` + nics[1] +
				` a slave of both bond[78] and bond[78]`),
		},
		{
			Config: e.Config(bond("bond7", nics[:1], "  cidr = \"192.0.2.2/24\"\n  gateway = \"192.0.2.1\"\n"),
				bond("bond8", nics[1:2], "  cidr = \"198.51.100.2/24\"\n  gateway = \"198.51.100.1\"\n")),
			ExpectError: planRE(`(?s)Unable to Apply network interface ` + node + `/bond[78].*two IPv4 default gateways`),
		},
		{
			PreConfig: func() {
				if w := netWritesSince(e, from); len(w) != 0 {
					t.Fatalf("the refused plans wrote to PVE: %v", w)
				}
			},
			Config: e.Config(bond("bond7", nics[:1], ""), bond("bond8", nics[1:2], "")),
		},
	}})
}

// planRE compiles pattern with every space matching Terraform's wrapping.
func planRE(pattern string) *regexp.Regexp {
	return regexp.MustCompile(strings.ReplaceAll(pattern, " ", `\s+`))
}
