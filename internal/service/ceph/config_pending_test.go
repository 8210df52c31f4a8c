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

// Issue #13, pending work: with apply = "none" a setting read only at
// start leaves six OSDs waiting. The apply and every later plan warn how
// many wait and how to restart them (the plan itself has no change: the
// provider will not restart them); switching to rolling_restart plans the
// update that does.
func TestAccCephConfig_pendingRestartWarns(t *testing.T) {
	t.Parallel()
	e := cephConfigEnv(t, 10, true)
	node := e.Node(t, 0)
	osd := func(apply string) string {
		return e.Config(cephConfigHCL("osd", node, "osd", "", map[string]string{"bdev_enable_discard": "true"},
			fmt.Sprintf("  apply = %q\n", apply)))
	}
	warn := regexp.MustCompile(`(?s)^6 Ceph daemon\(s\) wait for a restart: pve_ceph_config config_db/osd\n` +
		`osd\.0, osd\.1, osd\.2, osd\.3, osd\.4, osd\.5 still run without settings.*apply = "rolling_restart".*` +
		`on z2g4a: ceph osd ok-to-stop 0 1 && ceph osd set-group noout z2g4a && systemctl restart ceph-osd@0 ceph-osd@1;.*` +
		`on z2g4c: ceph osd ok-to-stop 4 5 `)
	anyWait := regexp.MustCompile(`wait for a restart`)
	tc := resource.TestCase{}
	rec := acctest.RecordDiagnostics(&tc)
	tc.Steps = []resource.TestStep{
		{
			Config: osd("none"),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr(osdAddrCfg, "pending_restart.#", "6"),
				rec.CheckApplyWarning(warn),
			),
		},
		{
			// The next plan: nothing to change, but not silent.
			PreConfig: rec.Reset,
			Config:    osd("none"),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectEmptyPlan(),
				rec.ExpectWarning(warn),
			}},
		},
		{
			// rolling_restart: the restart is the planned update.
			PreConfig: rec.Reset,
			Config:    osd("rolling_restart"),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(osdAddrCfg, plancheck.ResourceActionUpdate),
				plancheck.ExpectKnownValue(osdAddrCfg, tfjsonpath.New("pending_restart"), knownvalue.ListSizeExact(0)),
				rec.ExpectNoWarning(anyWait),
			}},
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr(osdAddrCfg, "pending_restart.#", "0"),
				safeRestart(e),
				// What was restarted, in which order, how long each host
				// took: in terraform apply's output, not only under TF_LOG.
				rec.CheckApplyWarning(regexp.MustCompile(`^Ceph rolling restart for pve_ceph_config config_db/osd: 6 daemon\(s\) `+
					`on 3 host\(s\) restarted in [0-9.]+m?s\n`+
					`In order, one host at a time, each after Ceph's ok-to-stop and with noout on that host only:\n`+
					`  1\. z2g4a: osd\.0, osd\.1 restarted in [0-9.]+m?s\n`+
					`  2\. z2g4b: osd\.2, osd\.3 restarted in [0-9.]+m?s\n`+
					`  3\. z2g4c: osd\.4, osd\.5 restarted in [0-9.]+m?s$`)),
			),
		},
	}
	e.Run(t, tc)
}

// With apply = "none" the plan that makes daemons wait says so, not only
// the apply: how many will wait and how to restart them, for a change of
// a setting read only at start; a setting Ceph applies at runtime plans
// without the warning.
func TestAccCephConfig_planWarnsRestartItWillNeed(t *testing.T) {
	t.Parallel()
	e := cephConfigEnv(t, 10, true)
	node := e.Node(t, 0)
	osd := func(settings map[string]string) string {
		return e.Config(cephConfigHCL("osd", node, "osd", "", settings, "  apply = \"none\"\n"))
	}
	will := regexp.MustCompile(`(?s)^6 Ceph daemon\(s\) will wait for a restart after this apply: pve_ceph_config config_db/osd\n` +
		`This plan changes "bdev_enable_discard", which Ceph reads only when a daemon starts.*` +
		`osd\.0, osd\.1, osd\.2, osd\.3, osd\.4, osd\.5 still run without settings.*apply = "rolling_restart".*` +
		`on z2g4a: ceph osd ok-to-stop 0 1 && ceph osd set-group noout z2g4a && systemctl restart ceph-osd@0 ceph-osd@1;`)
	anyWait := regexp.MustCompile(`wait for a restart`)
	tc := resource.TestCase{}
	rec := acctest.RecordDiagnostics(&tc)
	tc.Steps = []resource.TestStep{
		{
			// A runtime setting: no restart, no warning.
			Config: osd(map[string]string{"osd_max_backfills": "2"}),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				rec.ExpectNoWarning(anyWait),
			}},
		},
		{
			// Adding a setting read at start: the plan warns.
			PreConfig: rec.Reset,
			Config:    osd(map[string]string{"osd_max_backfills": "2", "bdev_enable_discard": "true"}),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(osdAddrCfg, plancheck.ResourceActionUpdate),
				rec.ExpectWarning(will),
			}},
			Check: resource.TestCheckResourceAttr(osdAddrCfg, "pending_restart.#", "6"),
		},
	}
	e.Run(t, tc)
}
