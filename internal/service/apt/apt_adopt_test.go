package apt_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

// The repositories of the lab built by hand on every node (pve-no-subscription
// added, the enterprise repository disabled, Ceph Squid no-subscription from
// pveceph install) adopted with import blocks by their handles: imports
// only, no write, empty plan after (issue #12).
func TestAccAptRepository_adoptHandBuilt(t *testing.T) {
	t.Parallel()
	if acctest.Live() {
		t.Skip("needs pvesim's hand-built lab")
	}
	e := acctest.HandBuilt(t)
	hcl := ""
	var addrs []string
	for i := range 3 {
		node := e.Node(t, i)
		hcl += fmt.Sprintf(`
resource "pve_apt_repository" "no_subscription_%[1]s" {
  node   = %[1]q
  handle = "no-subscription"
}

resource "pve_apt_repository" "enterprise_%[1]s" {
  node    = %[1]q
  handle  = "enterprise"
  enabled = false
}

resource "pve_apt_repository" "ceph_no_subscription_%[1]s" {
  node   = %[1]q
  handle = "ceph-squid-no-subscription"
}

import {
  to = pve_apt_repository.no_subscription_%[1]s
  id = "%[1]s/no-subscription"
}

import {
  to = pve_apt_repository.enterprise_%[1]s
  id = "%[1]s/enterprise"
}

import {
  to = pve_apt_repository.ceph_no_subscription_%[1]s
  id = "%[1]s/ceph-squid-no-subscription"
}
`, node)
		for _, r := range []string{"no_subscription_", "enterprise_", "ceph_no_subscription_"} {
			addrs = append(addrs, "pve_apt_repository."+r+node)
		}
	}
	e.Run(t, resource.TestCase{Steps: e.AdoptSteps(e.Config(hcl), addrs...)})
}
