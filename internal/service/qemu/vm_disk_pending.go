package qemu

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
)

// Pending disk changes are planned work (issue #13): with
// reboot_if_needed = true the plan empties pending, an update whose apply
// reboots the VM; otherwise nothing applies them, and every plan warns
// which changes wait and how to apply them rather than saying nothing.

// warnPendingAtPlan warns about state's pending changes of a running VM
// when the plan will not reboot it.
func (r *vmDiskResource) warnPendingAtPlan(ctx context.Context, state, plan *vmDiskModel, diags *diag.Diagnostics) {
	if r.PD == nil || plan.RebootIfNeeded.IsUnknown() || plan.RebootIfNeeded.ValueBool() || len(state.Pending.Elements()) == 0 {
		return
	}
	var p []string
	if d := state.Pending.ElementsAs(ctx, &p, false); d.HasError() || len(p) == 0 {
		return
	}
	vmid, slot := state.VMID.ValueInt64(), state.Slot.ValueString()
	c, node, err := r.vmClient(ctx, vmid, false)
	if err != nil {
		return
	}
	if st, err := c.VMStatus(ctx, node, vmid); err != nil || !st.Running() {
		return // a stopped VM applies them when it starts
	}
	diags.AddAttributeWarning(path.Root("pending"), fmt.Sprintf("Disk changes of VM %d %s wait for a VM restart", vmid, slot),
		fmt.Sprintf("PVE keeps these changes of %s pending until VM %d on %s restarts: %s. Nothing in this plan applies them. "+
			"Set reboot_if_needed = true on this pve_vm_disk (the next apply reboots the VM through PVE), or restart the VM "+
			"through PVE yourself: `qm reboot %d` on node %s, or Reboot in the GUI (a reboot from inside the guest is not "+
			"enough: PVE applies pending changes only when it starts the VM).",
			slot, vmid, node, strings.Join(p, ", "), vmid, node))
}
