package framework

import (
	"context"
	"sort"
	"sync"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// Plan-time reference checks (issue #13) look up what a resource names (a
// VM, a storage, a bridge) in reads the provider makes anyway, cached per
// command. Two things keep them from refusing what the apply would create
// or find:
//
//   - A value Terraform knows at plan may still name an object created in
//     the same plan (vm_id = pve_vm.web.vmid is known when vmid is set).
//     Resources that create such objects note them in ModifyPlan
//     (PlanNote); Terraform plans a resource after those it refers to, so
//     the referring resource sees the note (PlanNoted). The notes live in
//     the command's ProviderData, like the read cache.
//   - During an apply, Terraform plans each resource again just before
//     applying it, after the objects it refers to were created: a cached
//     list may predate them, so a miss is read once more (CachedLookup).

// The kinds of PlanNote that resources of more than one package share; a
// kind only one package uses is a constant there.
const (
	// PlannedVMs are VM ids (pve_vm), with the VM's planned node.
	PlannedVMs = "vm"
	// PlannedIfaces are "<node>/<iface>" (pve_node_network,
	// pve_node_network_config), with the interface's type.
	PlannedIfaces = "iface"
	// PlannedFiles are "<node>:<path>" (pve_node_file).
	PlannedFiles = "file"
	// PlannedStorages are storage ids: pve_storage's, and the storage
	// pve_ceph_pool's add_storages creates under the pool's name.
	PlannedStorages = "storage"
	// PlannedCephPools are Ceph pool names (pve_ceph_pool), which an rbd
	// storage may name before they exist.
	PlannedCephPools = "ceph/pools"
)

// planNotes is the per-command set behind PlanNote: kind -> key -> value.
type planNotes struct {
	mu    sync.Mutex
	kinds map[string]map[string]string
}

// PlanNote records that this command's plan creates or keeps the object
// kind/key (such as PlannedVMs, "100" or PlannedIfaces, "z2g4a/bond0"), with a value
// a referring check may need (the VM's planned node; "" when there is none).
func (pd *ProviderData) PlanNote(kind, key, value string) {
	if pd == nil {
		return
	}
	n := &pd.notes
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.kinds == nil {
		n.kinds = map[string]map[string]string{}
	}
	if n.kinds[kind] == nil {
		n.kinds[kind] = map[string]string{}
	}
	n.kinds[kind][key] = value
}

// PlanNoted returns what PlanNote recorded for kind/key in this command.
func (pd *ProviderData) PlanNoted(kind, key string) (string, bool) {
	if pd == nil {
		return "", false
	}
	pd.notes.mu.Lock()
	defer pd.notes.mu.Unlock()
	v, ok := pd.notes.kinds[kind][key]
	return v, ok
}

// PlanNotedKeys are the keys noted for kind in this command, sorted.
func (pd *ProviderData) PlanNotedKeys(kind string) []string {
	if pd == nil {
		return nil
	}
	pd.notes.mu.Lock()
	defer pd.notes.mu.Unlock()
	keys := make([]string, 0, len(pd.notes.kinds[kind]))
	for k := range pd.notes.kinds[kind] {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// CachedLookup reads key through the cache and tests it with found; on a
// miss it drops the cached value and reads once more, so that an object
// created since the first read is found. It returns the last value read.
func CachedLookup[T any](ctx context.Context, c *ReadCache, key string, load func(context.Context) (T, error), found func(T) bool) (T, bool, error) {
	v, err := CachedRead(ctx, c, key, load)
	if err != nil {
		return v, false, err
	}
	if found(v) {
		return v, true, nil
	}
	c.Invalidate(key)
	v, err = CachedRead(ctx, c, key, load)
	if err != nil {
		return v, false, err
	}
	return v, found(v), nil
}

// GuestsCacheKey is the cache key of PlanFindGuest's read, ClusterGuests'
// (a shared read: every write drops it).
const GuestsCacheKey = SharedReadsPrefix + guestsKey

// PlanFindGuest looks vmid up among the cluster's guests (GET
// /cluster/resources?type=vm, once per command): the row, whether it is
// there, and the guests read. A miss is read again once (CachedLookup).
func (pd *ProviderData) PlanFindGuest(ctx context.Context, vmid int64) (pve.ClusterResource, bool, []pve.ClusterResource, error) {
	var row pve.ClusterResource
	rows, ok, err := CachedLookup(ctx, pd.Reads, GuestsCacheKey,
		func(ctx context.Context) ([]pve.ClusterResource, error) { return pd.Client.ClusterResources(ctx, "vm") }, // ClusterGuests' load
		func(rows []pve.ClusterResource) bool {
			for _, r := range rows {
				if (r.Type == "qemu" || r.Type == "lxc") && r.VMID == vmid {
					row = r
					return true
				}
			}
			return false
		})
	return row, ok, rows, err
}

// PlanNodeNetwork is the node's interface list (GET
// /nodes/{node}/network), under the key and type the network resources
// cache it with, so that every resource of a command shares one read.
func (pd *ProviderData) PlanNodeNetwork(ctx context.Context, node string) (*pve.NetworkList, error) {
	return CachedRead(ctx, pd.Reads, "network/"+node, func(ctx context.Context) (*pve.NetworkList, error) {
		c, err := pd.NodeClient(ctx, node)
		if err != nil {
			return nil, err
		}
		return c.Network(ctx, node)
	})
}

// PlanStorages is storage.cfg (GET /storage), the read Storages shares
// (dropped by the writes that change storage.cfg); a miss of
// storage id is read again once (CachedLookup).
func (pd *ProviderData) PlanStorages(ctx context.Context, id string) ([]pve.StorageConfig, *pve.StorageConfig, error) {
	var hit *pve.StorageConfig
	list, _, err := CachedLookup(ctx, pd.Reads, storageKey,
		func(ctx context.Context) ([]pve.StorageConfig, error) { return pd.Client.StorageConfigs(ctx, "") },
		func(list []pve.StorageConfig) bool {
			for i := range list {
				if list[i].Storage == id {
					hit = &list[i]
					return true
				}
			}
			return false
		})
	return list, hit, err
}

// CephPoolsCacheKey is the cache key of PlanCephPools' read; a pool create
// or destroy invalidates it.
const CephPoolsCacheKey = "plan/ceph/pools"

// PlanCephPools is the cluster's Ceph pools (GET /nodes/{node}/ceph/pool
// through node, which any node answers for the whole cluster), once per
// command, for every plan-time check that needs them.
func (pd *ProviderData) PlanCephPools(ctx context.Context, node string) ([]pve.CephPool, error) {
	return CachedRead(ctx, pd.Reads, CephPoolsCacheKey, func(ctx context.Context) ([]pve.CephPool, error) {
		c, err := pd.NodeClient(ctx, node)
		if err != nil {
			return nil, err
		}
		return c.CephPools(ctx, node)
	})
}
