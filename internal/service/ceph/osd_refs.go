package ceph

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// plannedOSDHosts is the per-command set of nodes that get an OSD in this
// plan, which pve_ceph_pool counts as hosts with OSDs.
const plannedOSDHosts = "ceph/osd-hosts"

// checkOSDRefsAtPlan refuses, at plan, an OSD create on a node the cluster
// does not have, or on a disk that node does not have or that is in use
// (an OSD already, the boot disk, partitions, LVM, ZFS): the same checks
// Create makes, from the node's disk list read once per command.
func checkOSDRefsAtPlan(ctx context.Context, pd *framework.ProviderData, plan *osdModel, diags *diag.Diagnostics) {
	if pd == nil || pd.Client == nil {
		return
	}
	node, dev := plan.Node.ValueString(), plan.Device.ValueString()
	summary := "Unable to Create Ceph OSD " + strings.TrimSpace(node+" "+dev)
	if !framework.PlanCheckNode(ctx, pd, plan.Node, path.Root("node"), osdTypeName, diags) || plan.Node.IsUnknown() {
		return
	}
	pd.PlanNote(plannedOSDHosts, node, "")
	c, err := pd.NodeClient(ctx, node)
	if err != nil {
		return
	}
	disks, err := cachedDisks(ctx, pd, c, node)
	if err != nil {
		tflog.Debug(ctx, "disk list not readable at plan; the OSD's disks are checked at apply", map[string]any{"node": node, "error": err.Error()})
		return
	}
	if _, replaced := pd.PlanNoted(osdsInState, node+" "+dev); !plan.Device.IsUnknown() && !replaced {
		if msg := osdDataDiskProblem(disks, node, dev); msg != "" {
			diags.AddAttributeError(path.Root("device"), summary, msg)
		}
	}
	for _, a := range []struct {
		name string
		v    types.String
	}{{"db_device", plan.DBDevice}, {"wal_device", plan.WALDevice}} {
		if a.v.IsNull() || a.v.IsUnknown() {
			continue
		}
		if msg := osdExtraDiskProblem(disks, node, a.name, a.v.ValueString()); msg != "" {
			diags.AddAttributeError(path.Root(a.name), summary, msg)
		}
	}
}

// freeDisks are the disks PVE reports unused (no OSD, nothing on them).
func freeDisks(disks []pve.Disk) []string {
	var out []string
	for _, d := range disks {
		if d.Used == "" && d.OSDID < 0 && len(d.OSDIDs) == 0 {
			out = append(out, d.DevPath)
		}
	}
	return out
}

func freeDisksText(disks []pve.Disk) string {
	if f := freeDisks(disks); len(f) > 0 {
		return "Free disks: " + strings.Join(f, ", ") + "."
	}
	return "The node has no free disk."
}

// osdDataDiskProblem says why dev cannot hold a new OSD, "" when it can.
func osdDataDiskProblem(disks []pve.Disk, node, dev string) string {
	disk := diskByPath(disks, dev)
	switch {
	case disk == nil:
		return fmt.Sprintf("device = %q: node %s has no such disk; PVE lists %s. %s Use the devpath that pve_node_disks or "+
			"GUI: Node > Disks shows.", dev, node, devPaths(disks), freeDisksText(disks))
	case len(disk.OSDIDs) > 0 || disk.OSDID >= 0:
		id := disk.OSDID
		if len(disk.OSDIDs) > 0 {
			id = disk.OSDIDs[0]
		}
		return fmt.Sprintf("device = %q on %s already holds %s. To manage that OSD, import it (terraform import <address> %s/%d); "+
			"otherwise choose another disk. %s", dev, node, osdName(id), node, id, freeDisksText(disks))
	case disk.Used == "BIOS boot" || disk.Mounted:
		return fmt.Sprintf("device = %q is the boot disk of %s (PVE reports: %s); an OSD needs a whole free disk. %s",
			dev, node, disk.Used, freeDisksText(disks))
	case disk.Used != "":
		return fmt.Sprintf("device = %q on %s is in use (PVE reports: %s); PVE creates OSDs only on unused disks. %s If its content "+
			"is expendable, wipe it (GUI: Node > Disks > Wipe Disk) and plan again.", dev, node, disk.Used, freeDisksText(disks))
	}
	return ""
}

// osdExtraDiskProblem says why dev cannot take block.db or block.wal:
// PVE takes a free disk, one with LVM (other OSDs' DB/WAL LVs) or with GPT
// partitions, never an OSD's data disk or the boot disk.
func osdExtraDiskProblem(disks []pve.Disk, node, attr, dev string) string {
	disk := diskByPath(disks, dev)
	switch {
	case disk == nil:
		return fmt.Sprintf("%s = %q: node %s has no such disk; PVE lists %s.", attr, dev, node, devPaths(disks))
	case len(disk.OSDIDs) > 0 || disk.OSDID >= 0:
		return fmt.Sprintf("%s = %q on %s is the data disk of an OSD; block.db and block.wal go on a disk that is free or "+
			"holds other OSDs' DB/WAL volumes.", attr, dev, node)
	case disk.Used == "BIOS boot" || disk.Mounted:
		return fmt.Sprintf("%s = %q is the boot disk of %s; PVE puts block.db and block.wal only on other disks.", attr, dev, node)
	case disk.Used != "" && disk.Used != "LVM" && (disk.Used != "partitions" || !disk.GPT):
		return fmt.Sprintf("%s = %q on %s is in use (PVE reports: %s); PVE takes a free disk, or one with LVM or GPT partitions.",
			attr, dev, node, disk.Used)
	}
	return ""
}

// osdsInState is the per-command set of "<node> <device>" of OSDs in
// state, noted when they are refreshed or planned with their prior state:
// a create on such a disk in the same plan is the second half of a replace
// (-replace, taint), whose destroy frees the disk first.
const osdsInState = "ceph/osds-in-state"

func noteOSDInState(pd *framework.ProviderData, st *osdModel) {
	if pd != nil && !st.Node.IsNull() && !st.Device.IsNull() {
		pd.PlanNote(osdsInState, st.Node.ValueString()+" "+st.Device.ValueString(), "")
	}
}
