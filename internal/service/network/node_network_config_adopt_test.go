package network_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

// The network of the lab built by hand (bond0, bridge0 with the management
// address, bridge0.60, the storage NIC, vmbr0 gone) adopted with import
// blocks: the plan imports and changes nothing, the apply writes nothing,
// the next plan is empty (issue #12).
func TestAccNodeNetworkConfig_adoptHandBuilt(t *testing.T) {
	t.Parallel()
	e := acctest.HandBuilt(t)
	node := e.Node(t, 0)
	// As the build log's user wrote it: no comments.
	hcl := strings.NewReplacer(`, comments = "corosync link0"`, "", `, comments = "storage network"`, "").Replace(referenceLabConfig(node, ""))
	config := e.Config(hcl + fmt.Sprintf(`
import {
  to = pve_node_network_config.lab
  id = %q
}
`, node))
	var from int
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		{
			PreConfig: func() { from = len(e.Sim.Requests()) },
			Config:    config,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("pve_node_network_config.lab", plancheck.ResourceActionNoop)},
			},
			Check: func(*terraform.State) error {
				for _, r := range e.Sim.Requests()[from:] {
					if r.Method != "GET" && !strings.HasPrefix(r.Path, "/access/") {
						return fmt.Errorf("adoption wrote to the cluster: %s %s", r.Method, r.Path)
					}
				}
				return nil
			},
		},
		{Config: config, PlanOnly: true},
	}})
}
