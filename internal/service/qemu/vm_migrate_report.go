package qemu

import (
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// A migration can take long (a live one copies the guest's memory, local
// disks are mirrored); Terraform shows an apply's warnings at the default
// log level, so a node change ends with a summary warning: where the VM
// went, live or offline, how long it took, and PVE's closing task line
// (issue #13).
func addMigrationReport(diags *diag.Diagnostics, vmid int64, from, to string, online bool, took time.Duration, res *pve.TaskResult) {
	how := "offline (the VM was stopped)"
	if online {
		how = "live (the VM kept running)"
	}
	detail := fmt.Sprintf("VM %d moved from %s to %s %s; the migration took %s.", vmid, from, to, how, took.Round(100*time.Millisecond))
	if res != nil {
		for i := len(res.Log) - 1; i >= 0; i-- {
			if l := strings.TrimSpace(res.Log[i]); strings.Contains(l, "migration finished") {
				detail += " PVE's task log: " + l + "."
				break
			}
		}
	}
	diags.AddWarning(fmt.Sprintf("VM %d migrated from %s to %s in %s", vmid, from, to, took.Round(100*time.Millisecond)), detail)
}
