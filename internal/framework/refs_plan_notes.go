package framework

import (
	"context"
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
//     the referring resource sees the note (PlanNoted).
//   - During an apply, Terraform plans each resource again just before
//     applying it, after the objects it refers to were created: a cached
//     list may predate them, so a miss is read once more (CachedLookup).

var planNotes sync.Map // *ProviderData -> *noteSet

type noteSet struct {
	mu   sync.Mutex
	keys map[string]string
}

// PlanNote records that this command's plan creates or keeps the object
// kind/key (such as "vm", "100" or "iface", "z2g4a/bond0"), with a value
// a referring check may need (the VM's planned node; "" when unknown).
func (pd *ProviderData) PlanNote(kind, key, value string) {
	if pd == nil {
		return
	}
	v, _ := planNotes.LoadOrStore(pd, &noteSet{keys: map[string]string{}})
	s, _ := v.(*noteSet) // only noteSets are stored
	s.mu.Lock()
	s.keys[kind+"\x00"+key] = value
	s.mu.Unlock()
}

// PlanNoted returns what PlanNote recorded for kind/key in this command.
func (pd *ProviderData) PlanNoted(kind, key string) (string, bool) {
	if pd == nil {
		return "", false
	}
	v, ok := planNotes.Load(pd)
	if !ok {
		return "", false
	}
	s, _ := v.(*noteSet) // only noteSets are stored
	s.mu.Lock()
	defer s.mu.Unlock()
	val, ok := s.keys[kind+"\x00"+key]
	return val, ok
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

// GuestsCacheKey is the cache key of PlanGuests' read; a write that
// creates or removes guests may invalidate it.
const GuestsCacheKey = "plan/cluster/resources?type=vm"

// PlanFindGuest looks vmid up among the cluster's guests (GET
// /cluster/resources?type=vm, once per command): the row, whether it is
// there, and the guests read. A miss is read again once (CachedLookup).
func (pd *ProviderData) PlanFindGuest(ctx context.Context, vmid int64) (pve.ClusterResource, bool, []pve.ClusterResource, error) {
	var row pve.ClusterResource
	rows, ok, err := CachedLookup(ctx, pd.Reads, GuestsCacheKey,
		func(ctx context.Context) ([]pve.ClusterResource, error) { return pd.Client.ClusterResources(ctx, "vm") },
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
		return c.ListNetwork(ctx, node)
	})
}

// StorageCacheKey is the cache key of PlanStorages' read.
const StorageCacheKey = "plan/storage"

// PlanStorages is storage.cfg (GET /storage), once per command; a miss of
// storage id is read again once (CachedLookup).
func (pd *ProviderData) PlanStorages(ctx context.Context, id string) ([]pve.StorageConfig, *pve.StorageConfig, error) {
	var hit *pve.StorageConfig
	list, _, err := CachedLookup(ctx, pd.Reads, StorageCacheKey,
		func(ctx context.Context) ([]pve.StorageConfig, error) { return pd.Client.ListStorage(ctx, "") },
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
		return c.CephListPools(ctx, node)
	})
}
