package node

import (
	"context"
	"strconv"
	"strings"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
)

// recordForOSDPlans keeps a whole disk's small-block, single-job sync-write
// rate for the rest of the command, so that a pve_ceph_osd planned on that
// disk after this data source (depends_on) warns at plan when it is slow
// (issue #13). Other runs (many jobs, big blocks, a directory) do not
// measure what an OSD's sync writes need.
func (d *diskBenchmarkDataSource) recordForOSDPlans(ctx context.Context, m *diskBenchmarkModel, node, target string, scratch bool) {
	if scratch || m.Device.IsNull() || m.Jobs.ValueInt64() != 1 || !strings.Contains(m.Pattern.ValueString(), "write") {
		return
	}
	bs := strings.ToLower(m.BlockSize.ValueString())
	n, err := strconv.ParseInt(strings.TrimRight(bs, "km"), 10, 64)
	if err != nil {
		return
	}
	switch {
	case strings.HasSuffix(bs, "m"):
		n <<= 20
	case strings.HasSuffix(bs, "k"):
		n <<= 10
	}
	if n > 16<<10 {
		return
	}
	d.PD.RecordSyncWrite(ctx, node, target, framework.SyncWrite{IOPS: m.WriteIOPS.ValueFloat64(), BlockSize: m.BlockSize.ValueString()})
}
