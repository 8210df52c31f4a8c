package cluster_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

// A node to join that is neither a cluster member nor in standalone_nodes
// is refused at plan (framework.PlanCheckNodeAttr), listing the nodes the
// provider can reach; nothing but reads reaches PVE.
func TestAccClusterNode_planRefusesUnknownNode(t *testing.T) {
	e := acctest.NewStandalone(t)
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
		PreConfig: func() { e.Sim.ResetRequests() },
		Config: e.Config(`
resource "pve_cluster_node" "x" {
  node  = "nosuch"
  links = [{ address = "169.254.60.99" }]
}
`),
		ExpectError: regexp.MustCompile(strings.ReplaceAll(`(?s)Error running pre-apply plan.*Unable to plan pve_cluster_node: unknown node nosuch.*GET /nodes lists [^)]*`+e.Nodes[1]+` \(standalone_nodes\)`, " ", `\s+`)),
	}}})
	for _, r := range e.Sim.Requests() {
		if r.Method != "GET" && r.Path != "/access/ticket" { // the root@pam login
			t.Errorf("refused at plan, yet %s %s was sent", r.Method, r.Path)
		}
	}
}
