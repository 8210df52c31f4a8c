package pve

import (
	"context"
	"strings"
)

// Ceph monitors and managers (PVE/API2/Ceph/{MON,MGR}.pm); pvesim: ceph_mon.go.

// CephMon is one monitor.
type CephMon struct {
	Name, Host, Addr, State string
	Rank                    int64
	Quorum                  bool
}

// CephMons lists the monitors.
//
//pve:operation GET /nodes/{node}/ceph/mon
func (c *Client) CephMons(ctx context.Context, node string) ([]CephMon, error) {
	var wire []struct {
		Name, Host, Addr, State flexString
		Rank                    flexInt
		Quorum                  flexBool
	}
	if err := c.Get(ctx, cephPath(node, "/mon"), nil, &wire); err != nil {
		return nil, err
	}
	out := make([]CephMon, 0, len(wire))
	for _, w := range wire {
		out = append(out, CephMon{Name: string(w.Name), Host: string(w.Host), Addr: string(w.Addr), State: string(w.State),
			Rank: int64(w.Rank), Quorum: bool(w.Quorum)})
	}
	return out, nil
}

// CreateCephMon creates a monitor (and a manager when it is the first
// monitor) on node; monID "" means the node name, addresses "" lets PVE
// pick the node's address in the public network. Returns the UPID.
//
//pve:operation POST /nodes/{node}/ceph/mon/{monid}
func (c *Client) CreateCephMon(ctx context.Context, node, monID string, addresses ...string) (string, error) {
	if monID == "" {
		monID = node
	}
	p := Params{}
	if len(addresses) > 0 {
		p.Set("mon-address", strings.Join(addresses, ","))
	}
	path := cephPath(node, "/mon/"+PathEscape(monID))
	var upid string
	if err := c.Post(ctx, path, p, &upid); err != nil {
		return "", err
	}
	return upidOf("POST", path, upid)
}

// DestroyCephMon removes a monitor; PVE refuses the last one.
//
//pve:operation DELETE /nodes/{node}/ceph/mon/{monid}
func (c *Client) DestroyCephMon(ctx context.Context, node, monID string) (string, error) {
	path := cephPath(node, "/mon/"+PathEscape(monID))
	var upid string
	if err := c.Delete(ctx, path, nil, &upid); err != nil {
		return "", err
	}
	return upidOf("DELETE", path, upid)
}

// CephMgr is one manager; State is active, standby or stopped.
type CephMgr struct{ Name, Host, Addr, State string }

// CephMgrs lists the managers.
//
//pve:operation GET /nodes/{node}/ceph/mgr
func (c *Client) CephMgrs(ctx context.Context, node string) ([]CephMgr, error) {
	var wire []struct{ Name, Host, Addr, State flexString }
	if err := c.Get(ctx, cephPath(node, "/mgr"), nil, &wire); err != nil {
		return nil, err
	}
	out := make([]CephMgr, 0, len(wire))
	for _, w := range wire {
		out = append(out, CephMgr{Name: string(w.Name), Host: string(w.Host), Addr: string(w.Addr), State: string(w.State)})
	}
	return out, nil
}

// CreateCephMgr creates a manager (id "" = node name).
//
//pve:operation POST /nodes/{node}/ceph/mgr/{id}
func (c *Client) CreateCephMgr(ctx context.Context, node, id string) (string, error) {
	if id == "" {
		id = node
	}
	path := cephPath(node, "/mgr/"+PathEscape(id))
	var upid string
	if err := c.Post(ctx, path, nil, &upid); err != nil {
		return "", err
	}
	return upidOf("POST", path, upid)
}

// DestroyCephMgr removes a manager.
//
//pve:operation DELETE /nodes/{node}/ceph/mgr/{id}
func (c *Client) DestroyCephMgr(ctx context.Context, node, id string) (string, error) {
	path := cephPath(node, "/mgr/"+PathEscape(id))
	var upid string
	if err := c.Delete(ctx, path, nil, &upid); err != nil {
		return "", err
	}
	return upidOf("DELETE", path, upid)
}
