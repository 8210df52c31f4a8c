package pve

import (
	"context"
	"errors"
	"strings"
)

// ClusterResource is one row of the cluster-wide resource index.
type ClusterResource struct {
	ID     string // such as node/z2g4a, qemu/100, storage/z2g4a/local
	Type   string // node, qemu, lxc, storage, sdn, ...
	Node   string
	Name   string
	Status string
	VMID   int64
	// Lock is a guest's config lock (migrate, backup, ...), HAState the
	// HA manager's state of an HA-managed guest (started, migrate, ...).
	Lock, HAState string
}

// ClusterResources lists the cluster's resources; typ filters by vm,
// storage, node or sdn ("" = all).
//
//pve:operation GET /cluster/resources
func (c *Client) ClusterResources(ctx context.Context, typ string) ([]ClusterResource, error) {
	p := Params{}
	if typ != "" {
		p.Set("type", typ)
	}
	var wire []struct {
		ID      flexString `json:"id"`
		Type    flexString `json:"type"`
		Node    flexString `json:"node"`
		Name    flexString `json:"name"`
		Status  flexString `json:"status"`
		VMID    flexInt    `json:"vmid"`
		Lock    flexString `json:"lock"`
		HAState flexString `json:"hastate"`
	}
	if err := c.Get(ctx, "/cluster/resources", p, &wire); err != nil {
		return nil, err
	}
	out := make([]ClusterResource, 0, len(wire))
	for _, w := range wire {
		out = append(out, ClusterResource{ID: string(w.ID), Type: string(w.Type), Node: string(w.Node), Name: string(w.Name),
			Status: string(w.Status), VMID: int64(w.VMID), Lock: string(w.Lock), HAState: string(w.HAState)})
	}
	return out, nil
}

// IsCephNotSetUp reports an error PVE gives for a Ceph call on a node
// where Ceph is not installed or not initialised yet.
func IsCephNotSetUp(err error) bool {
	var ae *APIError
	return IsCephNotInitialized(err) || (errors.As(err, &ae) && strings.Contains(ae.Message, "binary not installed"))
}
