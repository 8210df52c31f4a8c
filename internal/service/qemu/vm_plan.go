package qemu

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// Whole-plan checks of a VM and its disks (framework.PlanRegistry). Each
// pve_vm and pve_vm_disk records at plan whether it is destroyed or stays,
// then judges the records of its VM so far. Every rule is "unsafe once
// both records are there" (a VM destroyed and a disk of it kept; a VM kept
// and its running boot disk detached), so whichever of the two Terraform
// plans last refuses, in any order, and nothing is applied half-way: today
// HA is removed, the running VM's boot disk hot-unplugged, and only then
// the VM delete refused.

// vmPlanFacts is what a planned pve_vm records.
type vmPlanFacts struct {
	vmid         int64
	destroyDisks bool
	// unused lists the VM's unusedN volumes ("unused0 (local-lvm:...)"),
	// read for a destroy: no pve_vm_disk manages them, so the plan cannot
	// remove them before the VM delete.
	unused []string
}

// diskPlanFacts is what a planned pve_vm_disk records.
type diskPlanFacts struct {
	vmid         int64
	slot, volume string
	deleteVolume bool
	// bootOfRunning: destroyed while the VM runs from it.
	bootOfRunning bool
	// storages the volume lives on after the plan (the state's, and
	// the planned one for a move); none when the plan deletes it.
	storages []string
}

// KeptVolumeStorages implements framework.StorageVolumes.
func (f diskPlanFacts) KeptVolumeStorages() []string { return f.storages }

func vmPlanID(vmid int64) string { return strconv.FormatInt(vmid, 10) }

// planVM records a planned pve_vm (plan nil: destroyed) and refuses what
// the records of its VM show unsafe.
func planVM(ctx context.Context, pd *framework.ProviderData, state *vmResourceModel, destroy bool, diags *diag.Diagnostics) {
	if pd == nil || pd.Client == nil || state.VMID.IsNull() || state.VMID.IsUnknown() {
		return
	}
	vmid := state.VMID.ValueInt64()
	f := vmPlanFacts{vmid: vmid, destroyDisks: state.DestroyDisks.ValueBool()}
	action := framework.PlanKeep
	if destroy {
		action = framework.PlanDestroy
		if cfg := vmConfigAtPlan(ctx, pd, vmid, state.Node.ValueString()); cfg != nil {
			for k, v := range cfg.Unused() {
				f.unused = append(f.unused, fmt.Sprintf("%s (%s)", k, v))
			}
			sort.Strings(f.unused)
		}
	}
	all := pd.RecordPlan(framework.PlannedChange{Kind: vmTypeName, ID: vmPlanID(vmid), Action: action, Facts: f})
	reportVMPlanProblems(all, vmTypeName, vmPlanID(vmid), vmid, diags)
}

// planVMDisk records a planned pve_vm_disk and refuses likewise.
func planVMDisk(ctx context.Context, pd *framework.ProviderData, state *vmDiskModel, planStorage string, destroy bool, diags *diag.Diagnostics) {
	if pd == nil || pd.Client == nil || state.VMID.IsNull() || state.VMID.IsUnknown() || state.Slot.IsNull() || state.Slot.IsUnknown() {
		return
	}
	vmid, slot := state.VMID.ValueInt64(), state.Slot.ValueString()
	f := diskPlanFacts{vmid: vmid, slot: slot, volume: state.Volume.ValueString(), deleteVolume: state.DeleteOnDestroy.ValueBool()}
	action := framework.PlanKeep
	if destroy {
		action = framework.PlanDestroy
		f.bootOfRunning = bootOfRunningVM(ctx, pd, vmid, state.Node.ValueString(), slot)
	}
	if !destroy || !f.deleteVolume {
		for _, st := range []string{state.Storage.ValueString(), planStorage} {
			if st != "" && !slices.Contains(f.storages, st) {
				f.storages = append(f.storages, st)
			}
		}
	}
	id := diskID(vmid, slot)
	all := pd.RecordPlan(framework.PlannedChange{Kind: vmDiskTypeName, ID: id, Action: action, Facts: f})
	reportVMPlanProblems(all, vmDiskTypeName, id, vmid, diags)
	for _, c := range framework.Changes(all, framework.KindStorage, framework.PlanDestroy) {
		if slices.Contains(f.storages, c.ID) {
			diags.AddError("Unable to Delete storage "+c.ID, storageInUseDetail(c.ID, []string{vmDiskTypeName + " " + id}))
		}
	}
}

// storageInUseDetail says why a storage cannot go while disks stay on it.
func storageInUseDetail(storage string, users []string) string {
	return fmt.Sprintf("The plan destroys storage %s while %s keeps a volume on it. Removing the storage from storage.cfg leaves "+
		"the volumes on the backend but unreachable: the VMs can no longer start or be deleted cleanly. Nothing is changed. "+
		"Move the disks first (pve_vm_disk storage = another storage, applied before), destroy them with delete_on_destroy = true "+
		"in the same plan, or keep the storage.", storage, strings.Join(users, ", "))
}

// vmConfigAtPlan reads the VM's config (nil when it cannot: the apply
// checks again).
func vmConfigAtPlan(ctx context.Context, pd *framework.ProviderData, vmid int64, node string) *pve.VMConfig {
	if node == "" {
		n, err := pd.Client.FindVM(ctx, vmid)
		if err != nil {
			return nil
		}
		node = n
	}
	c, err := pd.NodeClient(ctx, node)
	if err != nil {
		return nil
	}
	cfg, err := c.VMConfig(ctx, node, vmid, false)
	if err != nil {
		if n, ferr := pd.Client.FindVM(ctx, vmid); ferr == nil && n != node {
			return vmConfigAtPlan(ctx, pd, vmid, n)
		}
		return nil
	}
	return cfg
}

// bootOfRunningVM reports whether the VM runs and boots from slot (its
// boot order lists the slot, now or after a restart).
func bootOfRunningVM(ctx context.Context, pd *framework.ProviderData, vmid int64, node, slot string) bool {
	n, err := pd.Client.FindVM(ctx, vmid)
	if err != nil {
		return false
	}
	if n != "" {
		node = n
	}
	c, err := pd.NodeClient(ctx, node)
	if err != nil {
		return false
	}
	st, err := c.VMStatus(ctx, node, vmid)
	if err != nil || !st.Running() {
		return false
	}
	// The running order, or the one a restart applies (a disk added to
	// the boot order while the VM runs waits in [PENDING]).
	for _, current := range []bool{true, false} {
		if cfg, err := c.VMConfig(ctx, node, vmid, current); err == nil {
			if boot, _ := cfg.Get("boot"); inBootOrder(boot, slot) {
				return true
			}
		}
	}
	return false
}

// vmPlanProblem is one unsafe combination and the records it involves.
type vmPlanProblem struct {
	members []string // Kind+" "+ID of the records involved
	summary string
	detail  string
}

// vmPlanProblems judges the records of VM vmid.
func vmPlanProblems(all []framework.PlannedChange, vmid int64) []vmPlanProblem {
	var vm *framework.PlannedChange
	var vmf vmPlanFacts
	var disks []framework.PlannedChange
	for i := range all {
		c := all[i]
		switch c.Kind {
		case vmTypeName:
			if f, ok := c.Facts.(vmPlanFacts); ok && f.vmid == vmid {
				vm, vmf = &all[i], f
			}
		case vmDiskTypeName:
			if f, ok := c.Facts.(diskPlanFacts); ok && f.vmid == vmid {
				disks = append(disks, c)
			}
		}
	}
	var out []vmPlanProblem
	vmLabel := fmt.Sprintf("%s %d", vmTypeName, vmid)
	if vm != nil && vm.Action == framework.PlanDestroy {
		if !vmf.destroyDisks && len(vmf.unused) > 0 {
			out = append(out, vmPlanProblem{members: []string{vm.Label()}, summary: fmt.Sprintf("Unable to Delete VM %d", vmid),
				detail: fmt.Sprintf("The plan destroys VM %d, which still lists %s: detached volumes no pve_vm_disk manages, which PVE deletes "+
					"with the VM. With destroy_disks = false the VM delete would be refused at apply, after the rest of the plan (HA, "+
					"disks) had run, so the plan is refused and nothing is changed. Delete or re-attach those volumes in PVE "+
					"(VM → Hardware), or set destroy_disks = true and apply before destroying.", vmid, strings.Join(vmf.unused, ", "))})
		}
		for _, d := range disks {
			df, _ := d.Facts.(diskPlanFacts) // disks record diskPlanFacts
			switch {
			case d.Action == framework.PlanKeep:
				out = append(out, vmPlanProblem{members: []string{vm.Label(), d.Label()}, summary: fmt.Sprintf("Unable to Delete VM %d", vmid),
					detail: fmt.Sprintf("The plan destroys VM %d but keeps its disk %s (%s). PVE deletes every volume a VM lists with the "+
						"VM, so the kept disk's data would go with it (or, with destroy_disks = false, the VM delete is refused after "+
						"the rest of the plan ran). Nothing is changed. Remove the pve_vm_disk too (delete_on_destroy = true deletes its "+
						"volume first), or keep the VM; to keep the data, give the volume to another VM first (Disk Action → Reassign "+
						"Owner).", vmid, d.Label(), orUnknown(df.volume))})
			case d.Action == framework.PlanDestroy && !df.deleteVolume:
				out = append(out, vmPlanProblem{members: []string{vm.Label(), d.Label()}, summary: fmt.Sprintf("Unable to Delete VM %d", vmid),
					detail: fmt.Sprintf("The plan destroys VM %d and detaches its disk %s (%s) with delete_on_destroy = false, which keeps "+
						"the volume as unusedN of the VM. Applied in order, the disk is unplugged from the VM (hot-unplugged if it "+
						"runs) and then PVE either deletes the kept volume with the VM (destroy_disks = true) or the VM delete is "+
						"refused (destroy_disks = false), leaving the VM without its disk and a later apply creating a new empty one. "+
						"Nothing is changed. Set delete_on_destroy = true on the disk to delete it with the VM, or keep the VM; to keep "+
						"the data, give the volume to another VM first (Disk Action → Reassign Owner).", vmid, d.Label(), orUnknown(df.volume))})
			}
		}
	}
	if vm != nil && vm.Action == framework.PlanKeep {
		for _, d := range disks {
			df, _ := d.Facts.(diskPlanFacts) // disks record diskPlanFacts
			if d.Action == framework.PlanDestroy && df.bootOfRunning {
				out = append(out, vmPlanProblem{members: []string{vmLabel, d.Label()}, summary: "Unable to Delete VM disk " + d.ID,
					detail: fmt.Sprintf("The plan detaches %s (%s), the boot disk of VM %d, which is running and stays: PVE would "+
						"hot-unplug the disk the guest runs from. Nothing is changed. Stop the VM first (started = false), or destroy "+
						"the VM in the same plan (with delete_on_destroy = true on the disk).", d.Label(), orUnknown(df.volume), vmid)})
			}
		}
	}
	return out
}

func orUnknown(v string) string {
	if v == "" {
		return "volume not known"
	}
	return v
}

// reportVMPlanProblems adds the problems that involve the resource self.
func reportVMPlanProblems(all []framework.PlannedChange, kind, id string, vmid int64, diags *diag.Diagnostics) {
	self := kind + " " + id
	for _, p := range vmPlanProblems(all, vmid) {
		for _, m := range p.members {
			if m == self {
				diags.AddError(p.summary, p.detail)
				break
			}
		}
	}
}

// planWhole is the disk's part of the whole-plan checks, for ModifyPlan.
func (r *vmDiskResource) planWhole(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.State.Raw.IsNull() {
		return
	}
	var st vmDiskModel
	if d := req.State.Get(ctx, &st); d.HasError() {
		return
	}
	planStorage := ""
	if !req.Plan.Raw.IsNull() {
		var ps types.String
		if d := req.Plan.GetAttribute(ctx, path.Root("storage"), &ps); !d.HasError() && !ps.IsUnknown() {
			planStorage = ps.ValueString()
		}
	}
	planVMDisk(ctx, r.PD, &st, planStorage, req.Plan.Raw.IsNull(), &resp.Diagnostics)
}

// Whole-plan check of slots: a pve_vm's CD drive and a pve_vm_disk of the
// same VM in one slot. Each records its slots; whichever records second
// sees the other (framework.PlanRegistry).

const (
	vmCdromsKind  = vmTypeName + " cdrom"
	diskSlotsKind = vmDiskTypeName + " slot"
)

// slotFacts is one VM's planned slots of one kind.
type slotFacts struct {
	vmid  int64
	slots []string
}

// planCdromSlots records the VM's planned CD drives and refuses a slot a
// planned pve_vm_disk of the VM has too.
func planCdromSlots(pd *framework.ProviderData, plan *vmModel, diags *diag.Diagnostics) {
	if pd == nil || plan.VMID.IsNull() || plan.VMID.IsUnknown() {
		return
	}
	cds, managed := plan.cdroms()
	if !managed {
		return
	}
	vmid := plan.VMID.ValueInt64()
	slots := slices.Sorted(maps.Keys(cds))
	all := pd.RecordPlan(framework.PlannedChange{Kind: vmCdromsKind, ID: vmPlanID(vmid), Action: framework.PlanKeep, Facts: slotFacts{vmid, slots}})
	for _, slot := range slotsTaken(all, diskSlotsKind, vmid, slots) {
		diags.AddAttributeError(path.Root("cdrom").AtMapKey(slot), fmt.Sprintf("Slot %s of VM %d is both a CD drive and a disk", slot, vmid),
			slotTwiceDetail(vmid, slot))
	}
}

// planDiskSlot records a planned pve_vm_disk's slot and refuses one the
// VM's planned CD drives have.
func planDiskSlot(pd *framework.ProviderData, plan *vmDiskModel, diags *diag.Diagnostics) {
	if pd == nil || plan.VMID.IsNull() || plan.VMID.IsUnknown() || plan.Slot.IsNull() || plan.Slot.IsUnknown() {
		return
	}
	vmid, slot := plan.VMID.ValueInt64(), plan.Slot.ValueString()
	all := pd.RecordPlan(framework.PlannedChange{Kind: diskSlotsKind, ID: diskID(vmid, slot), Action: framework.PlanKeep,
		Facts: slotFacts{vmid, []string{slot}}})
	for range slotsTaken(all, vmCdromsKind, vmid, []string{slot}) {
		diags.AddAttributeError(path.Root("slot"), fmt.Sprintf("Slot %s of VM %d is both a CD drive and a disk", slot, vmid),
			slotTwiceDetail(vmid, slot))
	}
}

// slotsTaken are those of slots that a record of kind other holds for
// the same VM.
func slotsTaken(all []framework.PlannedChange, other string, vmid int64, slots []string) []string {
	var out []string
	for _, c := range all {
		if f, ok := c.Facts.(slotFacts); ok && c.Kind == other && f.vmid == vmid {
			for _, s := range f.slots {
				if slices.Contains(slots, s) {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

func slotTwiceDetail(vmid int64, slot string) string {
	return fmt.Sprintf("The plan has %[1]s of VM %[2]d as a CD drive (pve_vm's cdrom) and as a disk (pve_vm_disk %[2]d/%[1]s); a "+
		"slot holds one drive, and writing one over the other would detach it. Nothing is changed. Put the disk or the CD "+
		"drive into another slot (CD drives: ide0-ide3, sata0-sata5, scsi0-scsi30), or remove %[1]s from cdrom (with cdrom "+
		"unset, pve_vm keeps the CD drives the VM has: set cdrom = {} to remove them).", slot, vmid)
}
