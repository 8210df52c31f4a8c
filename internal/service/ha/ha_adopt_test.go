package ha_test

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

// VM 100 of the lab built by hand is an HA resource (ha-manager add
// vm:100 --state started, PVE's defaults otherwise); adopted with an
// import block: imports only, no write, empty plan after (issue #12).
func TestAccHAResource_adoptHandBuilt(t *testing.T) {
	t.Parallel()
	if acctest.Live() {
		t.Skip("needs pvesim's hand-built lab")
	}
	e := acctest.HandBuilt(t)
	config := e.Config(`
resource "pve_ha_resource" "vm100" {
  sid   = "vm:100"
  state = "started"
}

import {
  to = pve_ha_resource.vm100
  id = "vm:100"
}
`)
	e.Run(t, resource.TestCase{Steps: e.AdoptSteps(config, "pve_ha_resource.vm100")})
}
