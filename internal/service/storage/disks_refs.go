package storage

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// disksInState is the per-command set of "<node> <device>" that ZFS and
// LVM-thin pools in state hold: a create on them in the same plan is the
// second half of a replace, whose destroy wipes the disks first.
const disksInState = "storage/disks-in-state"

func noteDisksInState(ctx context.Context, pd *framework.ProviderData, node types.String, devs ...string) {
	if pd == nil || node.IsNull() || node.IsUnknown() {
		return
	}
	set := framework.Planned(ctx, pd, disksInState)
	for _, d := range devs {
		if d != "" {
			set.Add(node.ValueString() + " " + d)
		}
	}
}

// diskRef is one device attribute of a create: its path in the schema.
type diskRef struct {
	at  path.Path
	dev types.String
}

// checkDisksAtPlan refuses, at plan, a create on a node the cluster does
// not have or on disks it does not have or that are in use: PVE's
// assert_disk_unused (API2/Disks/ZFS.pm, LVMThin.pm) refuses them with
// "device '/dev/sdX' is already in use" only once the create task runs.
// The node's disk list is read once per command.
func checkDisksAtPlan(ctx context.Context, pd *framework.ProviderData, what string, node, name types.String, refs []diskRef, diags *diag.Diagnostics) {
	if pd == nil || pd.Client == nil {
		return
	}
	summary := fmt.Sprintf("Unable to Create %s %s/%s", what, node.ValueString(), name.ValueString())
	if !framework.CheckNodeAtPlan(ctx, pd, node, path.Root("node"), summary, diags) || node.IsUnknown() {
		return
	}
	n := node.ValueString()
	c, err := pd.NodeClient(ctx, n)
	if err != nil {
		return
	}
	disks, err := framework.CachedDisks(ctx, pd, c, n)
	if err != nil {
		tflog.Debug(ctx, "disk list not readable at plan; disks are checked at apply", map[string]any{"node": n, "error": err.Error()})
		return
	}
	inState := framework.Planned(ctx, pd, disksInState)
	for _, r := range refs {
		if r.dev.IsNull() || r.dev.IsUnknown() || inState.Has(n+" "+r.dev.ValueString()) {
			continue
		}
		if msg := diskInUse(disks, n, r.dev.ValueString()); msg != "" {
			diags.AddAttributeError(r.at, summary, msg)
		}
	}
}

// diskInUse says why dev cannot take a new pool, "" when it is free.
func diskInUse(disks []pve.Disk, node, dev string) string {
	var free, all []string
	var disk *pve.Disk
	for i := range disks {
		d := &disks[i]
		all = append(all, d.DevPath)
		if d.Used == "" && d.OSDID < 0 && len(d.OSDIDs) == 0 {
			free = append(free, d.DevPath)
		}
		if d.DevPath == dev {
			disk = d
		}
	}
	freeText := "The node has no free disk."
	if len(free) > 0 {
		freeText = "Free disks: " + strings.Join(free, ", ") + "."
	}
	switch {
	case disk == nil:
		return fmt.Sprintf("%q: node %s has no such disk; PVE lists %s. %s", dev, node, strings.Join(all, ", "), freeText)
	case len(disk.OSDIDs) > 0 || disk.OSDID >= 0:
		return fmt.Sprintf("%q on %s holds a Ceph OSD (PVE would refuse: \"device '%s' is already in use\"). %s", dev, node, dev, freeText)
	case disk.Used == "BIOS boot" || disk.Mounted:
		return fmt.Sprintf("%q is the boot disk of %s (PVE reports: %s; PVE would refuse: \"device '%s' is already in use\"). %s",
			dev, node, disk.Used, dev, freeText)
	case disk.Used != "":
		return fmt.Sprintf("%q on %s is in use (PVE reports: %s; PVE would refuse: \"device '%s' is already in use\"). %s If its "+
			"content is expendable, wipe it (GUI: Node > Disks > Wipe Disk) and plan again.", dev, node, disk.Used, dev, freeText)
	}
	return ""
}

// checkRefs checks a ZFS pool create's node and disks at plan, and notes
// the disks of a pool in state (see disksInState).
func (r *zfsResource) checkRefs(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if !req.State.Raw.IsNull() {
		var st zfsModel
		if !req.State.Get(ctx, &st).HasError() {
			noteDisksInState(ctx, r.PD, st.Node, listStrings(ctx, st.Devices)...)
		}
		return
	}
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan zfsModel
	if resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...); resp.Diagnostics.HasError() || plan.Devices.IsUnknown() {
		return
	}
	var refs []diskRef
	for i, v := range plan.Devices.Elements() {
		if s, ok := v.(types.String); ok {
			refs = append(refs, diskRef{at: path.Root("devices").AtListIndex(i), dev: s})
		}
	}
	checkDisksAtPlan(ctx, r.PD, "ZFS pool", plan.Node, plan.Name, refs, &resp.Diagnostics)
}

// checkRefs checks an LVM thin pool create's node and disk at plan, and
// notes the disk of a pool in state.
func (r *lvmThinResource) checkRefs(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if !req.State.Raw.IsNull() {
		var st lvmThinModel
		if !req.State.Get(ctx, &st).HasError() {
			noteDisksInState(ctx, r.PD, st.Node, st.Device.ValueString())
		}
		return
	}
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan lvmThinModel
	if resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...); resp.Diagnostics.HasError() {
		return
	}
	checkDisksAtPlan(ctx, r.PD, "LVM thin pool", plan.Node, plan.Name, []diskRef{{at: path.Root("device"), dev: plan.Device}}, &resp.Diagnostics)
}
