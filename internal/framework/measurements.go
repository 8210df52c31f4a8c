package framework

import (
	"context"
	"fmt"
)

// SyncWrite is a measured sync-write rate of a whole disk: what
// pve_node_disk_benchmark found in this command, for resources planned
// after it (a pve_ceph_osd on that disk warns at plan).
type SyncWrite struct {
	IOPS      float64
	BlockSize string
}

func syncWriteKey(node, device string) string { return "measured/sync-write/" + node + "/" + device }

// RecordSyncWrite keeps a measurement of node's device for the rest of the
// command, replacing an earlier one.
func (pd *ProviderData) RecordSyncWrite(ctx context.Context, node, device string, m SyncWrite) {
	key := syncWriteKey(node, device)
	pd.Reads.Invalidate(key)
	_, _ = pd.Reads.Get(ctx, key, func(context.Context) (any, error) { return m, nil })
}

// MeasuredSyncWrite returns the measurement of node's device made in this
// command, if any.
func (pd *ProviderData) MeasuredSyncWrite(node, device string) (SyncWrite, bool) {
	c := pd.Reads
	c.mu.Lock()
	e, ok := c.entries[syncWriteKey(node, device)]
	c.mu.Unlock()
	if !ok {
		return SyncWrite{}, false
	}
	select {
	case <-e.done:
	default:
		return SyncWrite{}, false
	}
	m, ok := e.value.(SyncWrite)
	return m, ok && e.err == nil
}

func (m SyncWrite) String() string {
	return fmt.Sprintf("%.0f sync-write IOPS at %s", m.IOPS, m.BlockSize)
}
