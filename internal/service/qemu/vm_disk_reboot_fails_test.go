package qemu_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

// A boot disk attached to the running VM whose reboot (to apply the boot
// order) fails: the disk is there and attached, so the create warns, not
// fails (a failed create taints the disk, and the next apply would
// replace it). The pending boot order is a planned update, which the next
// apply's reboot applies; then nothing is left to plan. Before, the
// tainted disk was replaced and the plan after it was not empty.
func TestAccVMDisk_createRebootFails(t *testing.T) {
	t.Parallel()
	e := diskEnv(t, pvesim.Options{})
	node := e.Node(t, 0)
	const vmid = 9121
	createVM(t, e, node, vmid, true)
	cfg := e.Config(diskHCL("this", vmid, "scsi0", `storage = "local-lvm"`, `size = "4G"`, "boot = true", "reboot_if_needed = true"))
	tc := resource.TestCase{}
	rec := acctest.RecordDiagnostics(&tc)
	tc.Steps = []resource.TestStep{{
		PreConfig: func() {
			if err := e.Sim.SetFaultSpec(fmt.Sprintf("task qmreboot/%d=fail:1x", vmid)); err != nil {
				t.Fatal(err)
			}
		},
		Config: cfg,
		Check: resource.ComposeAggregateTestCheckFunc(
			checkVolumes(e, node, vmid, map[string][]string{"local-lvm": {"local-lvm:vm-9121-disk-0=4G"}}),
			rec.CheckApplyWarning(regexp.MustCompile(`(?s)reboot VM 9121 to apply boot.*injected task failure`)),
		),
		ConfigStateChecks:  []statecheck.StateCheck{pendingIs("boot")},
		ExpectNonEmptyPlan: true,
	}, {
		Config:            cfg,
		ConfigPlanChecks:  expectUpdate(diskAddr),
		ConfigStateChecks: []statecheck.StateCheck{pendingIs()},
		Check:             checkVolumes(e, node, vmid, map[string][]string{"local-lvm": {"local-lvm:vm-9121-disk-0=4G"}}),
	}}
	e.Run(t, tc)
}
