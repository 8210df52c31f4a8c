package storage

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
)

// planWhole records a planned storage destroy (framework.PlanRegistry) and
// refuses it while changes recorded in the same plan keep volumes on the
// storage (pve_vm_disk that stay or are detached with their volume kept).
// A disk planned after the storage refuses instead (internal/service/qemu),
// so the pair is refused in either order.
func (r *storageResource) planWhole(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if !req.Plan.Raw.IsNull() || req.State.Raw.IsNull() || r.PD == nil {
		return
	}
	var state storageModel
	if d := req.State.Get(ctx, &state); d.HasError() || state.Storage.IsNull() || state.Storage.IsUnknown() {
		return
	}
	id := state.Storage.ValueString()
	all := r.PD.RecordPlan(framework.PlannedChange{Kind: framework.KindStorage, ID: id, Action: framework.PlanDestroy})
	users := framework.KeptOnStorage(all, id)
	if len(users) == 0 {
		return
	}
	labels := make([]string, len(users))
	for i, u := range users {
		labels[i] = u.Label()
	}
	resp.Diagnostics.AddError("Unable to Delete storage "+id,
		fmt.Sprintf("The plan destroys storage %s while %s keep(s) a volume on it. Removing the storage from storage.cfg leaves "+
			"the volumes on the backend but unreachable: the VMs can no longer start or be deleted cleanly. Nothing is changed. "+
			"Move the disks first (pve_vm_disk storage = another storage, applied before), destroy them with delete_on_destroy = true "+
			"in the same plan, or keep the storage.", id, strings.Join(labels, ", ")))
}
