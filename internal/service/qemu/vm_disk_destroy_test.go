package qemu_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

// Issue #13 item 7: after a refused shrink the configuration still asks
// for the smaller size; the destroy that follows (terraform-plugin-testing's
// post-test destroy, a destroy plan with req.Plan null) must not fail with
// the same refusal, and must detach the disk.
func TestAccVMDisk_destroyAfterRefusedShrink(t *testing.T) {
	e := diskEnv(t, pvesim.Options{})
	node := e.Node(t, 0)
	const vmid = 9106
	createVM(t, e, node, vmid, false)
	cfg := func(size string) string {
		return e.Config(diskHCL("this", vmid, "scsi0", `storage = "local-lvm"`, fmt.Sprintf("size = %q", size)))
	}
	e.Run(t, resource.TestCase{
		CheckDestroy: func(*terraform.State) error {
			if e.Sim == nil {
				return nil
			}
			if cfg, _ := e.Sim.VMConfig(vmid); cfg["scsi0"] != "" {
				return fmt.Errorf("scsi0 still attached after the destroy: %q", cfg["scsi0"])
			}
			return nil
		},
		Steps: []resource.TestStep{
			{Config: cfg("32G")},
			{Config: cfg("16G"), ExpectError: errorRE(`(?s)Cannot change size of a VM disk`)},
		},
	})
}
