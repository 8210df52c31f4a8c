package ceph_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

// The hand-written [osd] section of the lab built by hand, imported with
// the import options that record the provider's own apply and
// wait_for_active_clean (which Ceph cannot report): the plan imports it
// and changes nothing. Without the options the same configuration plans
// an update of apply; a wrong option is refused with the valid ones.
func TestAccCephConfig_importOptions(t *testing.T) {
	t.Parallel()
	e := acctest.HandBuilt(t)
	node := e.Node(t, 0)
	cfg := func(id string) string {
		return e.Config(fmt.Sprintf(`
resource "pve_ceph_config" "osd" {
  node                  = %[1]q
  who                   = "osd"
  target                = "ceph_conf"
  apply                 = "rolling_restart"
  wait_for_active_clean = true
  settings = {
    osd_memory_target   = "8589934592"
    bdev_enable_discard = "true"
  }
}
import {
  to = pve_ceph_config.osd
  id = %[2]q
}
`, node, id))
	}
	const addr = "pve_ceph_config.osd"
	base := node + "/ceph_conf/osd"
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		{
			Config: cfg(base + "?apply=rolling_restart&wait_for_active_clean=false"), PlanOnly: true, ExpectNonEmptyPlan: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				plancheck.ExpectKnownValue(addr, tfjsonpath.New("wait_for_active_clean"), knownvalue.Bool(true)),
			}},
		},
		{Config: cfg(base), PlanOnly: true, ExpectNonEmptyPlan: true},
		{Config: cfg(base + "?apply=restart"), PlanOnly: true,
			ExpectError: regexp.MustCompile(`import option\s+apply="restart": valid\s+values\s+are\s+none,\s+rolling_restart`)},
		{Config: cfg(base + "?restart=yes"), PlanOnly: true,
			ExpectError: regexp.MustCompile(`unknown\s+import\s+option\s+"restart":\s+valid\s+options\s+are\s+apply,\s+keys,\s+wait_for_active_clean`)},
		{
			Config: cfg(base + "?apply=rolling_restart&wait_for_active_clean=true"),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(addr, plancheck.ResourceActionNoop),
				plancheck.ExpectKnownValue(addr, tfjsonpath.New("apply"), knownvalue.StringExact("rolling_restart")),
			}},
		},
		acctest.ForgetStep(e.Config(""), addr),
	}})
}

// keys= imports only the named options of a section: [global] of
// ceph.conf holds fsid and mon_host, which PVE writes and a configuration
// must not manage. An option the section lacks is not imported; without
// keys every option is, so the same configuration would remove the others.
func TestAccCephConfig_importKeys(t *testing.T) {
	t.Parallel()
	e := acctest.HandBuilt(t)
	node := e.Node(t, 0)
	cfg := func(id string) string {
		return e.Config(fmt.Sprintf(`
resource "pve_ceph_config" "global" {
  node     = %[1]q
  who      = "global"
  target   = "ceph_conf"
  settings = { osd_pool_default_size = "3" }
}
import {
  to = pve_ceph_config.global
  id = %[2]q
}
`, node, id))
	}
	const addr = "pve_ceph_config.global"
	base := node + "/ceph_conf/global"
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		{
			Config: cfg(base), PlanOnly: true, ExpectNonEmptyPlan: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
			}},
		},
		{Config: cfg(base + "?keys=osd_pool_default_size,Bad-Key"), PlanOnly: true,
			ExpectError: regexp.MustCompile(`"Bad-Key"\s+is\s+not\s+a\s+Ceph\s+option\s+name`)},
		{
			Config: cfg(base + "?keys=osd_pool_default_size,osd_pool_default_pg_num"),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(addr, plancheck.ResourceActionNoop),
				plancheck.ExpectKnownValue(addr, tfjsonpath.New("settings"), knownvalue.MapExact(map[string]knownvalue.Check{
					"osd_pool_default_size": knownvalue.StringExact("3"),
				})),
			}},
		},
		acctest.ForgetStep(e.Config(""), addr),
	}})
}
