package pve

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
)

// Ceph pools (pve-manager PVE/API2/Ceph/Pool.pm); pvesim: ceph_pool.go.

// CephPoolRequest is the pool create/update body. Nil pointers and empty
// strings are not sent.
type CephPoolRequest struct {
	Size, MinSize, PGNum, PGNumMin *int64
	PGAutoscaleMode                string // on | off | warn
	Application                    string // rbd | cephfs | rgw
	CrushRule                      string
	TargetSize                     string // e.g. "100G"
	TargetSizeRatio                *float64
	AddStorages                    bool // create only: add an RBD storage named after the pool
}

func (r CephPoolRequest) params() Params {
	p := Params{}
	for k, v := range map[string]*int64{"size": r.Size, "min_size": r.MinSize, "pg_num": r.PGNum, "pg_num_min": r.PGNumMin} {
		if v != nil {
			p.SetInt(k, *v)
		}
	}
	for k, v := range map[string]string{"pg_autoscale_mode": r.PGAutoscaleMode, "application": r.Application, "crush_rule": r.CrushRule, "target_size": r.TargetSize} {
		if v != "" {
			p.Set(k, v)
		}
	}
	if r.TargetSizeRatio != nil {
		p.Set("target_size_ratio", strconv.FormatFloat(*r.TargetSizeRatio, 'f', -1, 64))
	}
	return p
}

// CreateCephPool creates a pool (task cephcreatepool).
//
//pve:operation POST /nodes/{node}/ceph/pool
func (c *Client) CreateCephPool(ctx context.Context, node, name string, r CephPoolRequest) (string, error) {
	p := r.params()
	p.Set("name", name)
	if r.AddStorages {
		p.SetBool("add_storages", true)
	}
	path := cephPath(node, "/pool")
	var upid string
	if err := c.Post(ctx, path, p, &upid); err != nil {
		return "", err
	}
	return upidOf("POST", path, upid)
}

// UpdateCephPool changes pool settings (task cephsetpool).
//
//pve:operation PUT /nodes/{node}/ceph/pool/{name}
func (c *Client) UpdateCephPool(ctx context.Context, node, name string, r CephPoolRequest) (string, error) {
	path := cephPath(node, "/pool/"+PathEscape(name))
	var upid string
	if err := c.Put(ctx, path, r.params(), &upid); err != nil {
		return "", err
	}
	return upidOf("PUT", path, upid)
}

// DestroyCephPool destroys a pool (task cephdestroypool). Unless force is
// set, PVE refuses while an RBD storage on the pool still lists images
// ("ceph pool '<p>' still in use by storage '<id>'"); removeStorages also
// removes the RBD storages configured for the pool.
//
//pve:operation DELETE /nodes/{node}/ceph/pool/{name}
func (c *Client) DestroyCephPool(ctx context.Context, node, name string, removeStorages, force bool) (string, error) {
	path := cephPath(node, "/pool/"+PathEscape(name))
	p := Params{}
	if removeStorages {
		p.SetBool("remove_storages", true)
	}
	if force {
		p.SetBool("force", true)
	}
	var upid string
	if err := c.Delete(ctx, path, p, &upid); err != nil {
		return "", err
	}
	return upidOf("DELETE", path, upid)
}

// CephPool is a pool as the list and status report it.
type CephPool struct {
	ID              int64
	Name            string
	Size, MinSize   int64
	PGNum, PGNumMin int64
	// PGNumTarget is the pg_num Ceph is moving to (pg_num changes are
	// applied gradually), PGNumFinal the pg_num the autoscaler would pick;
	// both 0 when the pg_autoscaler module does not report them.
	PGNumTarget, PGNumFinal int64
	PGAutoscaleMode         string
	CrushRule               string   // name
	Application             string   // the first enabled application, sorted
	Applications            []string // every enabled application, sorted
	TargetSize              int64
	TargetSizeRatio         float64
	Stored                  int64 // logical bytes (status only)
	BytesUsed               int64
	PercentUsed             float64 // fraction of the pool's capacity, 0..1
}

// CephPools lists the pools.
//
//pve:operation GET /nodes/{node}/ceph/pool
func (c *Client) CephPools(ctx context.Context, node string) ([]CephPool, error) {
	var wire []struct {
		Pool            flexInt                    `json:"pool"`
		PoolName        flexString                 `json:"pool_name"`
		Size            flexInt                    `json:"size"`
		MinSize         flexInt                    `json:"min_size"`
		PGNum           flexInt                    `json:"pg_num"`
		PGNumMin        flexInt                    `json:"pg_num_min"`
		Mode            flexString                 `json:"pg_autoscale_mode"`
		CrushRuleName   flexString                 `json:"crush_rule_name"`
		TargetSize      flexInt                    `json:"target_size"`
		TargetSizeRatio cephNum                    `json:"target_size_ratio"`
		BytesUsed       flexInt                    `json:"bytes_used"`
		PercentUsed     cephNum                    `json:"percent_used"`
		Apps            map[string]json.RawMessage `json:"application_metadata"`
		PGNumFinal      flexInt                    `json:"pg_num_final"`
		Autoscale       struct {
			PGNumTarget flexInt `json:"pg_num_target"`
		} `json:"autoscale_status"`
	}
	if err := c.Get(ctx, cephPath(node, "/pool"), nil, &wire); err != nil {
		return nil, err
	}
	out := make([]CephPool, 0, len(wire))
	for _, w := range wire {
		var apps []string
		for a := range w.Apps {
			apps = append(apps, a)
		}
		sort.Strings(apps)
		p := CephPool{ID: int64(w.Pool), Name: string(w.PoolName), Size: int64(w.Size), MinSize: int64(w.MinSize), Applications: apps,
			PGNum: int64(w.PGNum), PGNumMin: int64(w.PGNumMin), PGAutoscaleMode: string(w.Mode), CrushRule: string(w.CrushRuleName),
			TargetSize: int64(w.TargetSize), TargetSizeRatio: float64(w.TargetSizeRatio), BytesUsed: int64(w.BytesUsed), PercentUsed: float64(w.PercentUsed),
			PGNumTarget: int64(w.Autoscale.PGNumTarget), PGNumFinal: int64(w.PGNumFinal)}
		if len(apps) > 0 {
			p.Application = apps[0]
		}
		out = append(out, p)
	}
	return out, nil
}

// CephPool returns one pool's settings, applications, autoscaler view
// and usage (GET .../pool/{name}/status with verbose); a missing pool is
// ErrNotFound.
//
//pve:operation GET /nodes/{node}/ceph/pool/{name}/status
func (c *Client) CephPool(ctx context.Context, node, name string) (*CephPool, error) {
	var w struct {
		ID              flexInt      `json:"id"`
		Name            flexString   `json:"name"`
		Size            flexInt      `json:"size"`
		MinSize         flexInt      `json:"min_size"`
		PGNum           flexInt      `json:"pg_num"`
		PGNumMin        flexInt      `json:"pg_num_min"`
		Mode            flexString   `json:"pg_autoscale_mode"`
		CrushRule       flexString   `json:"crush_rule"`
		TargetSize      flexInt      `json:"target_size"`
		TargetSizeRatio cephNum      `json:"target_size_ratio"`
		Apps            []flexString `json:"application_list"`
		Autoscale       struct {
			PGNumTarget flexInt `json:"pg_num_target"`
			PGNumFinal  flexInt `json:"pg_num_final"`
		} `json:"autoscale_status"`
		Stats struct {
			Stored      flexInt `json:"stored"`
			BytesUsed   flexInt `json:"bytes_used"`
			PercentUsed cephNum `json:"percent_used"`
		} `json:"statistics"`
	}
	p := Params{}
	p.SetBool("verbose", true)
	err := c.Get(ctx, cephPath(node, "/pool/"+PathEscape(name)+"/status"), p, &w)
	if err != nil {
		if isCephMissing(err) {
			return nil, fmt.Errorf("ceph pool %q: %w", name, ErrNotFound)
		}
		return nil, err
	}
	apps := make([]string, 0, len(w.Apps))
	for _, a := range w.Apps {
		apps = append(apps, string(a))
	}
	sort.Strings(apps)
	out := &CephPool{ID: int64(w.ID), Name: string(w.Name), Size: int64(w.Size), MinSize: int64(w.MinSize), PGNum: int64(w.PGNum),
		PGNumMin: int64(w.PGNumMin), PGNumTarget: int64(w.Autoscale.PGNumTarget), PGNumFinal: int64(w.Autoscale.PGNumFinal),
		PGAutoscaleMode: string(w.Mode), CrushRule: string(w.CrushRule),
		TargetSize: int64(w.TargetSize), TargetSizeRatio: float64(w.TargetSizeRatio),
		Stored: int64(w.Stats.Stored), BytesUsed: int64(w.Stats.BytesUsed), PercentUsed: float64(w.Stats.PercentUsed), Applications: apps}
	if len(apps) > 0 {
		out.Application = apps[0]
	}
	return out, nil
}

// CephRules lists the names of the cluster's CRUSH rules (Ceph's `osd
// crush rule ls`), sorted.
//
//pve:operation GET /nodes/{node}/ceph/rules
func (c *Client) CephRules(ctx context.Context, node string) ([]string, error) {
	var wire []struct {
		Name flexString `json:"name"`
	}
	if err := c.Get(ctx, cephPath(node, "/rules"), nil, &wire); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(wire))
	for _, w := range wire {
		out = append(out, string(w.Name))
	}
	sort.Strings(out)
	return out, nil
}
