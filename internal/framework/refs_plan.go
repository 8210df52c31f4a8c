package framework

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// Plan-time reference checks (issue #13): a reference to something PVE does
// not have (a node, a disk, a pool) is refused during plan, from the reads
// the provider makes anyway, instead of failing half-way through an apply.
// A check that cannot read (provider not configured yet, node down) lets the
// value through: apply then meets PVE's own answer.

// KnownNodes are the nodes a resource may name: those the endpoint lists
// (GET /nodes, one read per command) and the standalone_nodes, which join
// later. ok is false when the provider cannot tell (not configured, the
// read failed).
func KnownNodes(ctx context.Context, pd *ProviderData) (nodes []string, ok bool) {
	if pd == nil || pd.Client == nil {
		return nil, false
	}
	members, err := planMembers(ctx, pd)
	if err != nil {
		tflog.Debug(ctx, "node list not readable at plan; node references are checked at apply", map[string]any{"error": err.Error()})
		return nil, false
	}
	set := map[string]bool{}
	for n := range members {
		set[n] = true
	}
	for n := range pd.standalone {
		set[n] = true
	}
	for n := range set {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	return nodes, true
}

// CheckNodeAtPlan refuses a node the cluster does not have, at attr,
// listing the nodes it has. Unknown and null values pass. It reports
// whether the node is known (or could not be checked).
func CheckNodeAtPlan(ctx context.Context, pd *ProviderData, node types.String, attr path.Path, summary string, diags *diag.Diagnostics) bool {
	if node.IsNull() || node.IsUnknown() {
		return true
	}
	nodes, ok := KnownNodes(ctx, pd)
	if !ok {
		return true
	}
	n := node.ValueString()
	for _, x := range nodes {
		if x == n {
			return true
		}
	}
	diags.AddAttributeError(attr, summary,
		fmt.Sprintf("There is no node %q: %s lists %s. Use one of them (node names are case-sensitive); a node that is not in "+
			"the cluster yet must be listed in the provider's standalone_nodes.", n, pd.Client.Endpoint(), Quoted(nodes)))
	return false
}

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
func DisksCacheKey(node string) string { return "disks/" + node }

// CachedDisks is node's disk list, read once per command.
func CachedDisks(ctx context.Context, pd *ProviderData, c *pve.Client, node string) ([]pve.Disk, error) {
	return CachedRead(ctx, pd.Reads, DisksCacheKey(node), func(ctx context.Context) ([]pve.Disk, error) { return c.ListDisks(ctx, node, false) })
}

// PlannedSet collects, within one command, names of objects that
// resources plan to create, so that a resource planned after them (it
// depends on them) does not refuse a reference to something that does not
// exist yet. Terraform plans a resource after the resources it depends on.
type PlannedSet struct {
	mu    sync.Mutex
	items map[string]bool
}

// Planned returns the command's set of planned creates of one kind.
func Planned(ctx context.Context, pd *ProviderData, kind string) *PlannedSet {
	s, err := CachedRead(ctx, pd.Reads, "planned/"+kind, func(context.Context) (*PlannedSet, error) {
		return &PlannedSet{items: map[string]bool{}}, nil
	})
	if err != nil { // a cancelled context: an empty set lets everything through to apply
		return &PlannedSet{items: map[string]bool{}}
	}
	return s
}

// Add records a planned create.
func (s *PlannedSet) Add(key string) {
	s.mu.Lock()
	s.items[key] = true
	s.mu.Unlock()
}

// Has reports whether key was planned.
func (s *PlannedSet) Has(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.items[key]
}

// Keys are the planned keys, sorted.
func (s *PlannedSet) Keys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.items))
	for k := range s.items {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// PlannedCephPools is the Planned kind of Ceph pools a plan creates
// (pve_ceph_pool), which an rbd storage may name before they exist.
const PlannedCephPools = "ceph/pools"

// MemberNodes are the nodes the endpoint lists (GET /nodes, read once per
// command), sorted; ok is false when the provider cannot tell.
func MemberNodes(ctx context.Context, pd *ProviderData) (nodes []string, ok bool) {
	if pd == nil || pd.Client == nil {
		return nil, false
	}
	members, err := planMembers(ctx, pd)
	if err != nil {
		return nil, false
	}
	for n := range members {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	return nodes, true
}

// planMembers is GET /nodes for the plan-time checks, under its own key:
// the routing cache (members, which NodeClient uses and a join
// invalidates) is left to its own timing.
func planMembers(ctx context.Context, pd *ProviderData) (map[string]bool, error) {
	return CachedRead(ctx, pd.Reads, "plan/nodes", func(ctx context.Context) (map[string]bool, error) {
		nodes, err := pd.Client.Nodes(ctx)
		if err != nil {
			return nil, err
		}
		m := map[string]bool{}
		for _, n := range nodes {
			m[n.Node] = true
		}
		return m, nil
	})
}
