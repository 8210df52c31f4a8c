package ceph

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// lowSyncWriteIOPS is the single-job small-block sync-write rate below
// which a disk makes a slow OSD: every BlueStore commit is a sync write,
// datacenter SSDs with power-loss protection sustain thousands, consumer
// drives a few hundred.
const lowSyncWriteIOPS = 1000

// warnDiskAtPlan warns, when an OSD is planned, about the disks under it
// that the provider knows to be poor (issue #13): what pve_node_disks says
// (a consumer drive without power-loss protection, a rotational or worn
// disk) from the disk list the plan reads anyway, and a slow sync-write
// rate that pve_node_disk_benchmark measured in this command. Unknown
// values and unreadable lists pass: the create checks again.
func (r *osdResource) warnDiskAtPlan(ctx context.Context, plan *osdModel, diags *diag.Diagnostics) {
	if r.PD == nil || plan.Node.IsUnknown() || plan.Device.IsUnknown() {
		return
	}
	node, dev := plan.Node.ValueString(), plan.Device.ValueString()
	c, err := r.PD.NodeClient(ctx, node)
	if err != nil {
		return
	}
	disks, err := cachedDisks(ctx, r.PD, c, node)
	if err != nil {
		tflog.Debug(ctx, "cannot read the disks to judge an OSD's disk at plan", map[string]any{"node": node, "error": err.Error()})
		return
	}
	var reasons []string
	model := ""
	if disk := diskByPath(disks, dev); disk != nil {
		model = disk.Model
		if len(disk.OSDIDs) == 0 && disk.OSDID < 0 && disk.Used == "" {
			// A disk in use is refused, not warned about.
			reasons = judgeDisk(*disk, 0).Reasons
		}
	}
	if m, ok := r.PD.MeasuredSyncWrite(node, dev); ok && m.IOPS < lowSyncWriteIOPS {
		reasons = append(reasons, fmt.Sprintf("pve_node_disk_benchmark measured %s, under the %d an OSD needs (every BlueStore commit is a "+
			"sync write; datacenter SSDs with power-loss protection sustain thousands)", m, lowSyncWriteIOPS))
	}
	if len(reasons) > 0 {
		if model != "" {
			model = " (" + model + ")"
		}
		diags.AddAttributeWarning(path.Root("device"), fmt.Sprintf("%s on %s is a poor OSD", dev, node),
			fmt.Sprintf("%s%s: %s. The plan creates the OSD as asked; to avoid it choose a datacenter disk (pve_node_disks lists "+
				"suitable_for_osd) and measure its sync writes first.", dev, model, strings.Join(reasons, "; ")))
	}
	for _, a := range []struct {
		name string
		v    types.String
	}{{"db_device", plan.DBDevice}, {"wal_device", plan.WALDevice}} {
		if a.v.IsNull() || a.v.IsUnknown() {
			continue
		}
		x := diskByPath(disks, a.v.ValueString())
		if x == nil {
			continue
		}
		if fam, plp, known := classifyDrive(x.Model); known && !plp {
			diags.AddAttributeWarning(path.Root(a.name), fmt.Sprintf("%s on %s has no power-loss protection", a.v.ValueString(), node),
				fmt.Sprintf("%s (%s) is a consumer drive (%s): every sync write of the OSD goes through its %s, so the OSD is as slow "+
					"as the drive's sync writes. Measure sync-write IOPS first.", a.v.ValueString(), x.Model, fam, strings.TrimSuffix(a.name, "_device")))
		}
	}
}
