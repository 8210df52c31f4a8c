package ceph

import (
	"context"
	"time"

	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
)

func init() {
	// The simulator's Ceph clock runs fast in these tests: poll often.
	restartPollFirst = 20 * time.Millisecond
	restartPollMax = 100 * time.Millisecond
	restartWait = time.Minute
	cephConfLockWait = time.Second
}

// RollingRestart runs the rolling restart on daemons given as
// {"osd", "3", "z2g4b"} (kind, id, host), for tests of its cleanup.
func RollingRestart(ctx context.Context, ex *nodeexec.Pool, node string, daemons [][3]string, waitClean bool) error {
	var ds []cephDaemon
	for _, d := range daemons {
		ds = append(ds, cephDaemon{Kind: d[0], ID: d[1], Host: d[2]})
	}
	return rollingRestart(ctx, ex, node, ds, waitClean)
}
