package framework

import (
	"context"
	"fmt"
	"strings"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// Plan-time reference checks (issue #13): a reference to something PVE does
// not have (a node, a disk, a pool) is refused during plan, from the reads
// the provider makes anyway, instead of failing half-way through an apply.
// A check that cannot read (provider not configured yet, node down) lets the
// value through: apply then meets PVE's own answer. Nodes are checked by
// PlanCheckNode (node_plan.go); objects the same plan creates are noted
// with PlanNote (refs_plan_notes.go).

// Quoted renders names as "a", "b", "c" (or "none").
func Quoted(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// DisksCacheKey is the read-cache key of a node's disk list
// (GET /nodes/{node}/disks/list), shared by every resource that reads it.
func DisksCacheKey(node string) string { return SharedReadsPrefix + "disks/" + node }

// CachedDisks is node's disk list, a SharedRead: once per command, dropped
// by every write.
func CachedDisks(ctx context.Context, pd *ProviderData, c *pve.Client, node string) ([]pve.Disk, error) {
	return CachedRead(ctx, pd.Reads, DisksCacheKey(node), func(ctx context.Context) ([]pve.Disk, error) { return c.Disks(ctx, node, false) })
}
