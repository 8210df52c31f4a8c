package qemu

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
)

// warnVMPendingAtPlan: options PVE keeps in the running VM's [PENDING]
// section are work not done (issue #13). pve_vm never restarts a guest on
// its own, so the plan cannot be the update that applies them; every plan
// warns which options wait and how to apply them instead of saying "No
// changes".
func warnVMPendingAtPlan(ctx context.Context, state *vmResourceModel, diags *diag.Diagnostics) {
	if state.Status.ValueString() != "running" || state.PendingChanges.IsNull() || state.PendingChanges.IsUnknown() {
		return
	}
	var p []string
	if d := state.PendingChanges.ElementsAs(ctx, &p, false); d.HasError() || len(p) == 0 {
		return
	}
	vmid, node := state.VMID.ValueInt64(), state.Node.ValueString()
	diags.AddAttributeWarning(path.Root("pending_changes"), fmt.Sprintf("VM %d has changes waiting for a restart", vmid),
		fmt.Sprintf("PVE cannot apply %s to the running VM; they take effect when PVE next starts it. Nothing in this plan "+
			"applies them (the provider does not restart guests on its own). Apply them with `qm reboot %d` on node %s (or "+
			"Reboot in the GUI; a reboot from inside the guest is not enough).", strings.Join(p, ", "), vmid, node))
}
