package qemu_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

// Issue #13, pending work: a disk change the running VM keeps in PVE's
// [PENDING] section is not silent at the next plan. Without
// reboot_if_needed the plan has no change but warns which changes wait and
// how to apply them; with it, the plan is the update that reboots the VM.
func TestAccVMDisk_pendingWarnsAtPlan(t *testing.T) {
	t.Parallel()
	e := diskEnv(t, pvesim.Options{})
	node := e.Node(t, 0)
	const vmid = 9113
	createVM(t, e, node, vmid, true)
	cfg := func(extra ...string) string {
		return e.Config(diskHCL("this", vmid, "scsi1", append([]string{`storage = "local-lvm"`, `size = "2G"`}, extra...)...))
	}
	warn := regexp.MustCompile(fmt.Sprintf(`^Disk changes of VM %d scsi1 wait for a VM restart\n`+
		`PVE keeps these changes of scsi1 pending until VM %d on %s restarts: cache\. .*reboot_if_needed = true.*`+
		"`qm reboot %d` on node %s", vmid, vmid, node, vmid, node))
	tc := resource.TestCase{}
	rec := acctest.RecordDiagnostics(&tc)
	tc.Steps = []resource.TestStep{
		{Config: cfg(), ConfigStateChecks: []statecheck.StateCheck{pendingIs()}},
		{
			Config:            cfg(`cache = "writeback"`),
			ConfigStateChecks: []statecheck.StateCheck{pendingIs("cache")},
		},
		{
			PreConfig: rec.Reset,
			Config:    cfg(`cache = "writeback"`),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectEmptyPlan(),
				rec.ExpectWarning(warn),
			}},
		},
		{
			PreConfig: rec.Reset,
			Config:    cfg(`cache = "writeback"`, "reboot_if_needed = true"),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(diskAddr, plancheck.ResourceActionUpdate),
				rec.ExpectNoWarning(regexp.MustCompile(`wait for a VM restart`)),
			}},
			ConfigStateChecks: []statecheck.StateCheck{pendingIs()},
			Check:             checkPendingDrive(e, node, vmid, "scsi1", "", ""),
		},
	}
	e.Run(t, tc)
}

// pve_vm: options pending on the running VM warn at every plan with the
// command that applies them, and a node change (a live migration) ends
// with a summary warning terraform apply prints.
func TestAccVM_pendingAndMigrationReport(t *testing.T) {
	t.Parallel()
	e := newVMEnv(t)
	n0, n1 := e.Node(t, 0), e.Node(t, 1)
	tc := resource.TestCase{}
	rec := acctest.RecordDiagnostics(&tc)
	running := vm100Net + "  started = true\n"
	tc.Steps = []resource.TestStep{
		{Config: e.Config(vm100(n0, running))},
		{Config: e.Config(cores6x(n0, running))},
		{
			PreConfig: rec.Reset,
			Config:    e.Config(cores6x(n0, running)),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectEmptyPlan(),
				rec.ExpectWarning(regexp.MustCompile(`(?s)^VM 100 has changes waiting for a restart\n.*cores.*` +
					"Apply them with `qm reboot 100` on node " + n0)),
			}},
		},
		{
			PreConfig: rec.Reset,
			Config:    e.Config(cores6x(n1, running)),
			Check: rec.CheckApplyWarning(regexp.MustCompile(`^VM 100 migrated from ` + n0 + ` to ` + n1 + ` in [0-9.]+m?s\n` +
				`VM 100 moved from ` + n0 + ` to ` + n1 + ` live \(the VM kept running\); the migration took [0-9.]+m?s\. ` +
				`PVE's task log: migration finished successfully \(duration [0-9:]+\)\.$`)),
		},
	}
	e.Run(t, tc)
}
