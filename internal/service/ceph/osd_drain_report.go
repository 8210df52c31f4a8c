package ceph

import (
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// A drain can take hours; Terraform shows an apply's warnings at the
// default log level, so a destroy ends with a summary warning: how long
// the drain took and how much Ceph moved off the OSDs (issue #13). tflog
// keeps the progress while it waits.

// drainLoad is what the OSDs hold before the drain: placement groups and
// bytes, as the OSD tree reports them.
func drainLoad(tree *pve.CephOSDTree, ids []int64) (pgs, used int64) {
	for _, id := range ids {
		if o := tree.OSD(id); o != nil {
			pgs += o.PGs
			used += o.BytesUsed
		}
	}
	return pgs, used
}

// addDrainReport adds the summary warning of a drained and destroyed OSD.
func addDrainReport(diags *diag.Diagnostics, node string, ids []int64, pgs, used int64, drained, total time.Duration) {
	names := osdNames(ids)
	if pgs == 0 && used == 0 {
		diags.AddWarning(fmt.Sprintf("%s on %s destroyed: it held no data", names, node),
			fmt.Sprintf("Ceph reported %s safe to destroy after %s; stopping and destroying it took %s in all.", names,
				roundDuration(drained), roundDuration(total)))
		return
	}
	diags.AddWarning(fmt.Sprintf("%s on %s drained in %s and destroyed", names, node, roundDuration(drained)),
		fmt.Sprintf("Ceph moved %d placement group(s) and %s off %s to the other OSDs in %s before it reported the OSD safe to "+
			"destroy; with the stop and destroy, %s in all.", pgs, fmtBytes(used), names, roundDuration(drained), roundDuration(total)))
}
