package framework

import (
	"context"
	"fmt"
	"strings"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// The cluster-wide reads that many resources' refreshes need, each made
// once per command and shared (in flight too), so that a no-change plan
// costs one request per kind of object (per node where the object is per
// node) whatever the number of resources. Two lifetimes:
//
//   - membership (GET /nodes, /cluster/status, /cluster/config/nodes, per
//     endpoint): changed only by a cluster create, join or removal
//     (ClusterChanged) and, for the addresses in the status, a reload of a
//     node's management path (NodeNetworkChanged), which drop them. NodeClient
//     and NodeIP read them on every apply step, so they are not dropped by
//     every write;
//   - storage.cfg: dropped by the writes that change it (writesStorageConfig),
//     not by the many guest writes of an apply, whose plans check their
//     disks' storages against it;
//   - the rest (SharedRead: the guests of /cluster/resources, HA resources,
//     the Ceph metadata, a node's VM list, a VM's config): dropped by every
//     write; a read-back after a write passes fresh.
//
// Values are shared between goroutines: callers must not modify them.

const (
	nodesKey         = "cluster/nodes"
	clusterKeyPrefix = "cluster/"
	guestsKey        = "cluster/resources?type=vm"
	haResourcesKey   = "ha/resources"
	storageKey       = "storage.cfg"
)

// Nodes is GET /nodes of the endpoint (names, online state, certificate
// fingerprints), once per command and shared with NodeClient and
// PlanCheckNode.
func (pd *ProviderData) Nodes(ctx context.Context) ([]pve.Node, error) {
	return CachedRead(ctx, pd.Reads, nodesKey, pd.Client.Nodes)
}

// ClusterStatus is GET /cluster/status as c's endpoint answers it (the
// provider's endpoint, or a standalone node's own), once per command.
func (pd *ProviderData) ClusterStatus(ctx context.Context, c *pve.Client) (*pve.ClusterStatus, error) {
	return CachedRead(ctx, pd.Reads, clusterStatusCacheKey(c), c.ClusterStatus)
}

// ClusterConfigNodes is GET /cluster/config/nodes (corosync.conf's
// nodelist) as c's endpoint answers it, once per command.
func (pd *ProviderData) ClusterConfigNodes(ctx context.Context, c *pve.Client) ([]pve.ClusterConfigNode, error) {
	return CachedRead(ctx, pd.Reads, "cluster/config/nodes@"+c.Endpoint(), c.ClusterConfigNodes)
}

func clusterStatusCacheKey(c *pve.Client) string { return "cluster/status@" + c.Endpoint() }

// ClusterChanged drops what the provider knows about cluster membership
// (Nodes, ClusterStatus, ClusterConfigNodes of every endpoint), after a
// cluster was created or a node joined or left it.
func (pd *ProviderData) ClusterChanged() { pd.Reads.InvalidatePrefix(clusterKeyPrefix) }

// ClusterGuests is the cluster's guests (GET /cluster/resources?type=vm),
// a SharedRead: one listing per command, not one per VM.
func (pd *ProviderData) ClusterGuests(ctx context.Context, fresh bool) ([]pve.ClusterResource, error) {
	return SharedRead(ctx, pd, fresh, guestsKey, func(ctx context.Context) ([]pve.ClusterResource, error) {
		return pd.Client.ClusterResources(ctx, "vm")
	})
}

// ClusterGuest is vmid's row of ClusterGuests (a refresh's lookup: the
// guest existed before this command); pve.ErrNotFound when the cluster
// has no guest vmid.
func (pd *ProviderData) ClusterGuest(ctx context.Context, vmid int64) (*pve.ClusterResource, error) {
	rows, err := pd.ClusterGuests(ctx, false)
	if err != nil {
		return nil, err
	}
	for i := range rows {
		if (rows[i].Type == "qemu" || rows[i].Type == "lxc") && rows[i].VMID == vmid {
			r := rows[i]
			return &r, nil
		}
	}
	return nil, fmt.Errorf("VM %d: %w", vmid, pve.ErrNotFound)
}

// HAResources is every HA resource (GET /cluster/ha/resources; each entry
// as GET /cluster/ha/resources/{sid} gives it), a SharedRead.
func (pd *ProviderData) HAResources(ctx context.Context) ([]pve.HAResource, error) {
	return SharedRead(ctx, pd, false, haResourcesKey, func(ctx context.Context) ([]pve.HAResource, error) {
		return pd.Client.HAResources(ctx, "")
	})
}

// SharedHAResource is sid's entry of HAResources ("vm:100"). One the list
// lacks is read on its own, so that its absence is PVE's answer
// (IsHANotFound) and a resource the list filtered is still found.
func (pd *ProviderData) SharedHAResource(ctx context.Context, sid string) (*pve.HAResource, error) {
	if list, err := pd.HAResources(ctx); err == nil {
		for i := range list {
			if list[i].SID == sid {
				r := list[i]
				return &r, nil
			}
		}
	}
	return pd.Client.HAResource(ctx, sid)
}

// Storages is storage.cfg (GET /storage; each entry as GET
// /storage/{storage} gives it), once per command until a write changes it.
func (pd *ProviderData) Storages(ctx context.Context) ([]pve.StorageConfig, error) {
	return CachedRead(ctx, pd.Reads, storageKey, func(ctx context.Context) ([]pve.StorageConfig, error) {
		return pd.Client.StorageConfigs(ctx, "")
	})
}

// writesStorageConfig reports whether a write to path may change
// storage.cfg: the storage API, and the calls that add or remove storages
// beside their own work (a Ceph pool's add_storages / remove_storages, a
// CephFS's add-storage, a local disk's add_storage / cleanup-config), and
// a cluster join, which gives the node the cluster's storage.cfg.
func writesStorageConfig(path string) bool {
	switch {
	case strings.HasPrefix(path, "/storage"), strings.HasPrefix(path, "/cluster/config"):
		return true
	case !strings.HasPrefix(path, "/nodes/"):
		return false
	}
	return strings.Contains(path, "/ceph/pool") || strings.Contains(path, "/ceph/fs") || strings.Contains(path, "/disks/")
}

// SharedStorage is storage id's entry of Storages through c (the
// provider's endpoint, or a standalone node's own). One the list lacks
// (or another endpoint's) is read on its own, so that its absence is
// PVE's answer (ErrNotFound).
func (pd *ProviderData) SharedStorage(ctx context.Context, c *pve.Client, id string) (*pve.StorageConfig, error) {
	if c == pd.Client {
		if list, err := pd.Storages(ctx); err == nil {
			for i := range list {
				if list[i].Storage == id {
					sc := list[i]
					return &sc, nil
				}
			}
		}
	}
	return c.StorageConfig(ctx, id)
}
