package clusteroptions_test

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

// The datacenter options of the lab built by hand (migration secure over
// the storage network, HA shutdown policy migrate) adopted with an import
// block: imports only, no write, empty plan after (issue #12).
func TestAccClusterOptions_adoptHandBuilt(t *testing.T) {
	t.Parallel()
	if acctest.Live() {
		t.Skip("needs pvesim's hand-built lab")
	}
	e := acctest.HandBuilt(t)
	config := e.Config(`
resource "pve_cluster_options" "this" {
  migration = {
    type    = "secure"
    network = "169.254.50.0/24"
  }
  ha_shutdown_policy = "migrate"
}

import {
  to = pve_cluster_options.this
  id = "cluster"
}
`)
	e.Run(t, resource.TestCase{Steps: e.AdoptSteps(config, "pve_cluster_options.this")})
}
