package node_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

// The storage NIC's rings of the lab built by hand: rx/tx 2048 set with
// ethtool -G and not persisted (no unit, so a reboot loses them). Adoption
// imports the sizes as they are and plans one legitimate change: the unit
// that makes them survive a reboot. The apply installs that unit, the
// next plan is empty (issue #12).
func TestAccNodeNICRing_adoptHandBuilt(t *testing.T) {
	t.Parallel()
	if acctest.Live() {
		t.Skip("needs pvesim's hand-built lab")
	}
	e := acctest.HandBuilt(t)
	node := e.Node(t, 0)
	config := e.Config(fmt.Sprintf(`
resource "pve_node_nic_ring" "storage" {
  node  = %[1]q
  iface = "cx354ap1"
  rx    = 2048
  tx    = 2048
}

import {
  to = pve_node_nic_ring.storage
  id = "%[1]s/cx354ap1"
}
`, node))
	var sshFrom int
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		{
			PreConfig: func() { sshFrom = len(e.Sim.SSHCommands()) },
			Check: func(*terraform.State) error {
				// The rings are already right: no ethtool -G (it would
				// reset the link); the unit is written and enabled.
				enabled := false
				for _, c := range e.Sim.SSHCommands()[sshFrom:] {
					if strings.HasPrefix(c.Line, "ethtool -G") {
						return fmt.Errorf("adoption resized the rings again: %s", c.Line)
					}
					enabled = enabled || c.Line == "systemctl enable pve-nic-ring-cx354ap1.service"
				}
				if !enabled {
					return fmt.Errorf("adoption did not persist the rings: the unit was not enabled")
				}
				return nil
			},
			Config: config,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("pve_node_nic_ring.storage", plancheck.ResourceActionUpdate)},
			},
		},
		{Config: config, PlanOnly: true},
	}})
}
