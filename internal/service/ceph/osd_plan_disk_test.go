package ceph_test

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

// consumerEnv is the consumer lab (examples/labs/consumer: WD Green SATA
// SSDs, a Seagate SAS HDD on cons3) as a cluster.
func consumerEnv(t *testing.T) *acctest.Env {
	t.Helper()
	if acctest.Live() {
		t.Skip("needs pvesim's consumer lab")
	}
	lab, err := pvesim.ShippedLab("consumer")
	if err != nil {
		t.Fatal(err)
	}
	lab.Start = pvesim.StartCluster
	return acctest.NewWithOptions(t, pvesim.Options{Lab: lab})
}

// Issue #13: a plan that creates an OSD on a drive known to lack
// power-loss protection, or measured (pve_node_disk_benchmark, in the same
// plan) to sustain few sync writes, warns at plan, not only once the OSD
// exists. A datacenter drive plans without a warning.
func TestAccCephOSD_poorDiskWarnsAtPlan(t *testing.T) {
	t.Parallel()
	e := consumerEnv(t)
	tc := resource.TestCase{}
	rec := acctest.RecordDiagnostics(&tc)
	tc.Steps = []resource.TestStep{
		{
			Config:             osdConfig(e, osdSpec{node: "cons1", dev: "/dev/sdb"}),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPreRefresh: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(osdAddr("cons1", "/dev/sdb"), plancheck.ResourceActionCreate),
				rec.ExpectWarning(regexp.MustCompile(`^/dev/sdb on cons1 is a poor OSD\n/dev/sdb \(WDC_WDS480G2G0A-00JH30\): ` +
					`consumer drive without power-loss protection \(WD Blue/Green`)),
			}},
		},
		{
			// fio on the bare disk in this plan, then the OSD on it.
			PreConfig: rec.Reset,
			Config: osdConfig(e, osdSpec{node: "cons3", dev: "/dev/sdb",
				extra: "  depends_on = [data.pve_node_disk_benchmark.sdb]\n"}) + `
data "pve_node_disk_benchmark" "sdb" {
  node             = "cons3"
  device           = "/dev/sdb"
  overwrite_device = true
  runtime          = 5
}
`,
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPreRefresh: []plancheck.PlanCheck{
				rec.ExpectWarning(regexp.MustCompile(`^/dev/sdb on cons3 is a poor OSD\n.*pve_node_disk_benchmark measured 1[0-9]{2} ` +
					`sync-write IOPS at 4k, under the 1000 an OSD needs`)),
			}},
		},
	}
	e.Run(t, tc)
}
