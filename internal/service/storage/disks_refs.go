package storage

import (
	"context"
	"fmt"
	"slices"
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

func noteDisksInState(pd *framework.ProviderData, node types.String, devs ...string) {
	if pd == nil || node.IsNull() || node.IsUnknown() {
		return
	}
	for _, d := range devs {
		if d != "" {
			pd.PlanNote(disksInState, node.ValueString()+" "+d, "")
		}
	}
}

// namesInState is the per-command set of "<kind> <node> <name>" of ZFS
// pools and LVM thin pools in state (noted by Read and ModifyPlan): a
// create of the same name is the second half of a replace, or of a move
// to another address, whose destroy frees the name.
const namesInState = "storage/names-in-state"

func noteNameInState(pd *framework.ProviderData, kind string, node, name types.String) {
	if pd == nil || node.IsNull() || node.IsUnknown() || name.IsNull() || name.IsUnknown() {
		return
	}
	pd.PlanNote(namesInState, kind+" "+node.ValueString()+" "+name.ValueString(), "")
}

// nameUse is how one kind of pool names what it creates on a node: the
// names PVE would refuse, read once per command and node.
type nameUse struct {
	kind   string // "zfs", "lvm"
	what   string // "a ZFS pool", "an LVM volume group"
	refuse string // PVE's refusal, with %s for the name and the node
	list   func(ctx context.Context, c *pve.Client, node string) ([]string, error)
}

var zfsNames = nameUse{kind: "zfs", what: "a ZFS pool", refuse: "pool '%s' already exists on node '%s'",
	list: func(ctx context.Context, c *pve.Client, node string) ([]string, error) {
		pools, err := c.ZFSPools(ctx, node)
		names := make([]string, 0, len(pools))
		for _, p := range pools {
			names = append(names, p.Name)
		}
		return names, err
	}}

// An LVM thin pool create makes a volume group of its name (LVMThin.pm),
// so every volume group counts, with or without thin pools: the
// installer's pve, ceph-volume's ceph-<uuid>, one left by a thin pool
// removed without cleanup-disks.
var vgNames = nameUse{kind: "lvm", what: "an LVM volume group", refuse: "volume group with name '%s' already exists on node '%s'",
	list: func(ctx context.Context, c *pve.Client, node string) ([]string, error) {
		vgs, err := c.VolumeGroups(ctx, node)
		names := make([]string, 0, len(vgs))
		for _, v := range vgs {
			names = append(names, v.Name)
		}
		return names, err
	}}

func (u nameUse) cacheKey(node string) string { return "storage/names/" + u.kind + "/" + node }

// freedOnNode drops the cached reads a pool destroy on node changes (its
// name and its disks are free again), for creates planned later in the
// same apply.
func freedOnNode(pd *framework.ProviderData, use nameUse, node string) {
	pd.Reads.Invalidate(use.cacheKey(node))
	pd.Reads.Invalidate(framework.DisksCacheKey(node))
}

// checkNameAtPlan refuses, at plan, a create whose name the node already
// uses for a pool of its kind: PVE refuses it only in the create task. An
// unknown name or node passes, and so does a name a pool in state holds
// (namesInState) or a list that cannot be read.
func checkNameAtPlan(ctx context.Context, pd *framework.ProviderData, use nameUse, resourceType string, node, name types.String, summary string, diags *diag.Diagnostics) {
	if pd == nil || pd.Client == nil || node.IsNull() || node.IsUnknown() || name.IsNull() || name.IsUnknown() {
		return
	}
	n, want := node.ValueString(), name.ValueString()
	if _, ok := pd.PlanNoted(namesInState, use.kind+" "+n+" "+want); ok {
		return
	}
	c, err := pd.NodeClient(ctx, n)
	if err != nil {
		return
	}
	names, err := framework.CachedRead(ctx, pd.Reads, use.cacheKey(n), func(ctx context.Context) ([]string, error) {
		return use.list(ctx, c, n)
	})
	if err != nil {
		tflog.Debug(ctx, "pool names not readable at plan; the name is checked at apply", map[string]any{"node": n, "kind": use.kind, "error": err.Error()})
		return
	}
	if !slices.Contains(names, want) {
		return
	}
	diags.AddAttributeError(path.Root("name"), summary,
		fmt.Sprintf("name = %q: node %s already has %s of that name (PVE would refuse: \"%s\"). The names in use on %s are %s. "+
			"Choose another name; to manage an existing pool instead, import it (terraform import %s.<name> %s/%s).",
			want, n, use.what, fmt.Sprintf(use.refuse, want, n), n, framework.Quoted(names), resourceType, n, want))
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
// It reports whether the node is one the cluster has (or could not be
// checked), so that further checks on the node make sense.
func checkDisksAtPlan(ctx context.Context, pd *framework.ProviderData, what, resourceType string, node, name types.String, refs []diskRef, diags *diag.Diagnostics) bool {
	if pd == nil || pd.Client == nil {
		return false
	}
	if !framework.PlanCheckNode(ctx, pd, node, path.Root("node"), resourceType, diags) {
		return false
	}
	summary := createSummary(what, node, name)
	if node.IsUnknown() {
		return true
	}
	n := node.ValueString()
	c, err := pd.NodeClient(ctx, n)
	if err != nil {
		return true
	}
	disks, err := framework.CachedDisks(ctx, pd, c, n)
	if err != nil {
		tflog.Debug(ctx, "disk list not readable at plan; disks are checked at apply", map[string]any{"node": n, "error": err.Error()})
		return true
	}
	for _, r := range refs {
		if r.dev.IsNull() || r.dev.IsUnknown() {
			continue
		}
		if _, replaced := pd.PlanNoted(disksInState, n+" "+r.dev.ValueString()); replaced {
			continue
		}
		if msg := diskInUse(disks, n, r.dev.ValueString()); msg != "" {
			diags.AddAttributeError(r.at, summary, msg)
		}
	}
	return true
}

func createSummary(what string, node, name types.String) string {
	return fmt.Sprintf("Unable to Create %s %s/%s", what, node.ValueString(), name.ValueString())
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
			noteDisksInState(r.PD, st.Node, listStrings(ctx, st.Devices)...)
			noteNameInState(r.PD, zfsNames.kind, st.Node, st.Name)
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
	if checkDisksAtPlan(ctx, r.PD, "ZFS pool", zfsTypeName, plan.Node, plan.Name, refs, &resp.Diagnostics) {
		checkNameAtPlan(ctx, r.PD, zfsNames, zfsTypeName, plan.Node, plan.Name, createSummary("ZFS pool", plan.Node, plan.Name), &resp.Diagnostics)
	}
}

// checkRefs checks an LVM thin pool create's node and disk at plan, and
// notes the disk of a pool in state.
func (r *lvmThinResource) checkRefs(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if !req.State.Raw.IsNull() {
		var st lvmThinModel
		if !req.State.Get(ctx, &st).HasError() {
			noteDisksInState(r.PD, st.Node, st.Device.ValueString())
			noteNameInState(r.PD, vgNames.kind, st.Node, st.Name)
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
	if checkDisksAtPlan(ctx, r.PD, "LVM thin pool", lvmThinTypeName, plan.Node, plan.Name, []diskRef{{at: path.Root("device"), dev: plan.Device}}, &resp.Diagnostics) {
		checkNameAtPlan(ctx, r.PD, vgNames, lvmThinTypeName, plan.Node, plan.Name, createSummary("LVM thin pool", plan.Node, plan.Name), &resp.Diagnostics)
	}
}
