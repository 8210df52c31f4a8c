package pve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Ceph: init, configuration, monitors, managers, OSDs, pools, flags and
// cluster status. Methods returning a UPID start a task; wait for it with
// WaitTask.

func cephPath(node, rest string) string { return "/nodes/" + PathEscape(node) + "/ceph" + rest }

// cephNum accepts a number, a numeric string, "" or null.
type cephNum float64

func (f *cephNum) UnmarshalJSON(b []byte) error {
	var s flexString
	if err := s.UnmarshalJSON(b); err != nil {
		return err
	}
	t := strings.TrimSpace(string(s))
	if t == "" || t == "null" {
		*f = 0
		return nil
	}
	x, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return fmt.Errorf("expected a number, got %s", b)
	}
	*f = cephNum(x)
	return nil
}

func upidOf(method, path, upid string) (string, error) {
	if upid == "" {
		return "", fmt.Errorf("PVE API %s %s: no task id in the answer", method, path)
	}
	return upid, nil
}

// CephInitRequest is POST /nodes/{node}/ceph/init. Zero values are omitted.
type CephInitRequest struct {
	Network        string // public network CIDR (also the cluster network unless ClusterNetwork)
	ClusterNetwork string
	Size, MinSize  int64
	PGBits         int64
	DisableCephx   bool
}

// CephInit writes /etc/pve/ceph.conf (synchronous). An existing
// configuration is kept; only the networks are updated.
//
//pve:operation POST /nodes/{node}/ceph/init
func (c *Client) CephInit(ctx context.Context, node string, r CephInitRequest) error {
	p := Params{}
	if r.Network != "" {
		p.Set("network", r.Network)
	}
	if r.ClusterNetwork != "" {
		p.Set("cluster-network", r.ClusterNetwork)
	}
	if r.Size > 0 {
		p.SetInt("size", r.Size)
	}
	if r.MinSize > 0 {
		p.SetInt("min_size", r.MinSize)
	}
	if r.PGBits > 0 {
		p.SetInt("pg_bits", r.PGBits)
	}
	if r.DisableCephx {
		p.SetBool("disable_cephx", true)
	}
	return c.Post(ctx, cephPath(node, "/init"), p, nil)
}

// CephConfigRaw returns /etc/pve/ceph.conf.
//
//pve:operation GET /nodes/{node}/ceph/cfg/raw
func (c *Client) CephConfigRaw(ctx context.Context, node string) (string, error) {
	var s string
	err := c.Get(ctx, cephPath(node, "/cfg/raw"), nil, &s)
	return s, err
}

// CephConfigDBEntry is one entry of the monitors' configuration database.
type CephConfigDBEntry struct {
	Section, Name, Value, Level, Mask string
	CanUpdateAtRuntime                bool
}

// CephConfigDB returns the monitors' configuration database (ceph config dump).
//
//pve:operation GET /nodes/{node}/ceph/cfg/db
func (c *Client) CephConfigDB(ctx context.Context, node string) ([]CephConfigDBEntry, error) {
	var wire []struct {
		Section, Name, Value, Level, Mask flexString
		CanUpdate                         flexBool `json:"can_update_at_runtime"`
	}
	if err := c.Get(ctx, cephPath(node, "/cfg/db"), nil, &wire); err != nil {
		return nil, err
	}
	out := make([]CephConfigDBEntry, 0, len(wire))
	for _, w := range wire {
		out = append(out, CephConfigDBEntry{Section: string(w.Section), Name: string(w.Name), Value: string(w.Value),
			Level: string(w.Level), Mask: string(w.Mask), CanUpdateAtRuntime: bool(w.CanUpdate)})
	}
	return out, nil
}

// CephConfigValues reads section:key pairs (config DB, ceph.conf wins);
// the result is section -> key -> value, absent keys are missing.
//
//pve:operation GET /nodes/{node}/ceph/cfg/value
func (c *Client) CephConfigValues(ctx context.Context, node string, keys ...string) (map[string]map[string]string, error) {
	var wire map[string]map[string]flexString
	if err := c.Get(ctx, cephPath(node, "/cfg/value"), Params{"config-keys": strings.Join(keys, ";")}, &wire); err != nil {
		return nil, err
	}
	out := map[string]map[string]string{}
	for sec, kv := range wire {
		out[sec] = map[string]string{}
		for k, v := range kv {
			out[sec][k] = string(v)
		}
	}
	return out, nil
}

// CephMon is one monitor.
type CephMon struct {
	Name, Host, Addr, State string
	Rank                    int64
	Quorum                  bool
}

// CephListMons lists the monitors.
//
//pve:operation GET /nodes/{node}/ceph/mon
func (c *Client) CephListMons(ctx context.Context, node string) ([]CephMon, error) {
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

// CephCreateMon creates a monitor (and a manager when it is the first
// monitor) on node; monID "" means the node name, addresses "" lets PVE
// pick the node's address in the public network. Returns the UPID.
//
//pve:operation POST /nodes/{node}/ceph/mon/{monid}
func (c *Client) CephCreateMon(ctx context.Context, node, monID string, addresses ...string) (string, error) {
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

// CephDestroyMon removes a monitor; PVE refuses the last one.
//
//pve:operation DELETE /nodes/{node}/ceph/mon/{monid}
func (c *Client) CephDestroyMon(ctx context.Context, node, monID string) (string, error) {
	path := cephPath(node, "/mon/"+PathEscape(monID))
	var upid string
	if err := c.Delete(ctx, path, nil, &upid); err != nil {
		return "", err
	}
	return upidOf("DELETE", path, upid)
}

// CephMgr is one manager; State is active, standby or stopped.
type CephMgr struct{ Name, Host, Addr, State string }

// CephListMgrs lists the managers.
//
//pve:operation GET /nodes/{node}/ceph/mgr
func (c *Client) CephListMgrs(ctx context.Context, node string) ([]CephMgr, error) {
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

// CephCreateMgr creates a manager (id "" = node name).
//
//pve:operation POST /nodes/{node}/ceph/mgr/{id}
func (c *Client) CephCreateMgr(ctx context.Context, node, id string) (string, error) {
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

// CephDestroyMgr removes a manager.
//
//pve:operation DELETE /nodes/{node}/ceph/mgr/{id}
func (c *Client) CephDestroyMgr(ctx context.Context, node, id string) (string, error) {
	path := cephPath(node, "/mgr/"+PathEscape(id))
	var upid string
	if err := c.Delete(ctx, path, nil, &upid); err != nil {
		return "", err
	}
	return upidOf("DELETE", path, upid)
}

// CephOSDCreateRequest is POST /nodes/{node}/ceph/osd (root@pam only).
type CephOSDCreateRequest struct {
	Dev           string // /dev/sdb
	DBDev, WALDev string
	DBDevSizeGiB  float64
	WALDevSizeGiB float64
	DeviceClass   string
	Encrypted     bool
	OSDsPerDevice int64
}

// CephCreateOSD creates an OSD on a free disk (task cephcreateosd).
//
//pve:operation POST /nodes/{node}/ceph/osd
func (c *Client) CephCreateOSD(ctx context.Context, node string, r CephOSDCreateRequest) (string, error) {
	p := Params{"dev": r.Dev}
	if r.DBDev != "" {
		p.Set("db_dev", r.DBDev)
	}
	if r.WALDev != "" {
		p.Set("wal_dev", r.WALDev)
	}
	if r.DBDevSizeGiB > 0 {
		p.Set("db_dev_size", strconv.FormatFloat(r.DBDevSizeGiB, 'f', -1, 64))
	}
	if r.WALDevSizeGiB > 0 {
		p.Set("wal_dev_size", strconv.FormatFloat(r.WALDevSizeGiB, 'f', -1, 64))
	}
	if r.DeviceClass != "" {
		p.Set("crush-device-class", r.DeviceClass)
	}
	if r.Encrypted {
		p.SetBool("encrypted", true)
	}
	if r.OSDsPerDevice > 0 {
		p.SetInt("osds-per-device", r.OSDsPerDevice)
	}
	path := cephPath(node, "/osd")
	var upid string
	if err := c.Post(ctx, path, p, &upid); err != nil {
		return "", err
	}
	return upidOf("POST", path, upid)
}

// CephOSD is one OSD of the tree.
type CephOSD struct {
	ID                      int64
	Name, Host, Status      string // Status: up | down
	In                      bool
	DeviceClass             string
	CrushWeight, Reweight   float64
	PGs                     int64
	TotalSpace, BytesUsed   int64
	PercentUsed             float64
	BlockDev, DBDev, WALDev string
	OSDType, Version        string
}

// Up reports Status == "up".
func (o CephOSD) Up() bool { return o.Status == "up" }

// CephOSDTree is GET /nodes/{node}/ceph/osd: OSDs by CRUSH host plus the
// osdmap flags.
type CephOSDTree struct {
	OSDs  []CephOSD // sorted by ID
	Hosts []string  // CRUSH hosts, in tree order
	Flags []string
}

// OSD returns the OSD with id, or nil.
func (t *CephOSDTree) OSD(id int64) *CephOSD {
	for i := range t.OSDs {
		if t.OSDs[i].ID == id {
			return &t.OSDs[i]
		}
	}
	return nil
}

type cephTreeNode struct {
	ID          flexInt         `json:"id"`
	Name        flexString      `json:"name"`
	Type        flexString      `json:"type"`
	Host        flexString      `json:"host"`
	Status      flexString      `json:"status"`
	In          flexBool        `json:"in"`
	DeviceClass flexString      `json:"device_class"`
	CrushWeight cephNum         `json:"crush_weight"`
	Reweight    cephNum         `json:"reweight"`
	PGs         flexInt         `json:"pgs"`
	TotalSpace  flexInt         `json:"total_space"`
	BytesUsed   flexInt         `json:"bytes_used"`
	PercentUsed cephNum         `json:"percent_used"`
	Blfsdev     flexString      `json:"blfsdev"`
	DBDev       flexString      `json:"dbdev"`
	WALDev      flexString      `json:"waldev"`
	OSDType     flexString      `json:"osdtype"`
	Version     flexString      `json:"ceph_version_short"`
	Children    []*cephTreeNode `json:"children"`
}

// CephOSDTree returns the OSD tree.
//
//pve:operation GET /nodes/{node}/ceph/osd
func (c *Client) CephOSDTree(ctx context.Context, node string) (*CephOSDTree, error) {
	var wire struct {
		Root  cephTreeNode `json:"root"`
		Flags flexString   `json:"flags"`
	}
	if err := c.Get(ctx, cephPath(node, "/osd"), nil, &wire); err != nil {
		return nil, err
	}
	out := &CephOSDTree{}
	for _, f := range strings.Split(string(wire.Flags), ",") {
		if f != "" {
			out.Flags = append(out.Flags, f)
		}
	}
	var walk func(n *cephTreeNode, host string)
	walk = func(n *cephTreeNode, host string) {
		switch n.Type {
		case "host":
			host = string(n.Name)
			out.Hosts = append(out.Hosts, host)
		case "osd":
			h := string(n.Host)
			if h == "" {
				h = host
			}
			out.OSDs = append(out.OSDs, CephOSD{ID: int64(n.ID), Name: string(n.Name), Host: h, Status: string(n.Status),
				In: bool(n.In), DeviceClass: string(n.DeviceClass), CrushWeight: float64(n.CrushWeight), Reweight: float64(n.Reweight),
				PGs: int64(n.PGs), TotalSpace: int64(n.TotalSpace), BytesUsed: int64(n.BytesUsed), PercentUsed: float64(n.PercentUsed),
				BlockDev: string(n.Blfsdev), DBDev: string(n.DBDev), WALDev: string(n.WALDev), OSDType: string(n.OSDType), Version: string(n.Version)})
		}
		for _, ch := range n.Children {
			walk(ch, host)
		}
	}
	walk(&wire.Root, "")
	sort.Slice(out.OSDs, func(i, j int) bool { return out.OSDs[i].ID < out.OSDs[j].ID })
	return out, nil
}

// CephOSDIn marks an OSD in.
//
//pve:operation POST /nodes/{node}/ceph/osd/{osdid}/in
func (c *Client) CephOSDIn(ctx context.Context, node string, id int64) error {
	return c.Post(ctx, cephPath(node, "/osd/"+strconv.FormatInt(id, 10)+"/in"), nil, nil)
}

// CephOSDOut marks an OSD out: Ceph starts moving its data elsewhere.
//
//pve:operation POST /nodes/{node}/ceph/osd/{osdid}/out
func (c *Client) CephOSDOut(ctx context.Context, node string, id int64) error {
	return c.Post(ctx, cephPath(node, "/osd/"+strconv.FormatInt(id, 10)+"/out"), nil, nil)
}

// CephDestroyOSD destroys a down, out OSD (root@pam only); cleanup also
// zaps its disk. PVE does not check safe-to-destroy: see CephCmdSafety.
//
//pve:operation DELETE /nodes/{node}/ceph/osd/{osdid}
func (c *Client) CephDestroyOSD(ctx context.Context, node string, id int64, cleanup bool) (string, error) {
	path := cephPath(node, "/osd/"+strconv.FormatInt(id, 10))
	p := Params{}
	if cleanup {
		p.SetBool("cleanup", true)
	}
	var upid string
	if err := c.Delete(ctx, path, p, &upid); err != nil {
		return "", err
	}
	return upidOf("DELETE", path, upid)
}

// CephServiceStop stops a Ceph service on node ("osd.3", "mon.a", "mgr",
// "" = all of ceph.target). Returns the UPID (srvstop).
//
//pve:operation POST /nodes/{node}/ceph/stop
func (c *Client) CephServiceStop(ctx context.Context, node, service string) (string, error) {
	return c.cephService(ctx, node, "stop", service)
}

// CephServiceStart starts a Ceph service on node (srvstart).
//
//pve:operation POST /nodes/{node}/ceph/start
func (c *Client) CephServiceStart(ctx context.Context, node, service string) (string, error) {
	return c.cephService(ctx, node, "start", service)
}

// CephServiceRestart restarts a Ceph service on node (srvrestart).
//
//pve:operation POST /nodes/{node}/ceph/restart
func (c *Client) CephServiceRestart(ctx context.Context, node, service string) (string, error) {
	return c.cephService(ctx, node, "restart", service)
}

func (c *Client) cephService(ctx context.Context, node, op, service string) (string, error) {
	p := Params{}
	if service != "" {
		p.Set("service", service)
	}
	path := cephPath(node, "/"+op)
	var upid string
	if err := c.Post(ctx, path, p, &upid); err != nil {
		return "", err
	}
	return upidOf("POST", path, upid)
}

// CephSafety is the answer of cmd-safety: Ceph's ok-to-stop (action
// "stop") or safe-to-destroy (action "destroy").
type CephSafety struct {
	Safe   bool
	Status string
}

// CephCmdSafety asks whether stopping or destroying a daemon is safe
// (service osd|mon|mds, action stop|destroy).
//
//pve:operation GET /nodes/{node}/ceph/cmd-safety
func (c *Client) CephCmdSafety(ctx context.Context, node, service, id, action string) (*CephSafety, error) {
	var wire struct {
		Safe   flexBool   `json:"safe"`
		Status flexString `json:"status"`
	}
	if err := c.Get(ctx, cephPath(node, "/cmd-safety"), Params{"service": service, "id": id, "action": action}, &wire); err != nil {
		return nil, err
	}
	return &CephSafety{Safe: bool(wire.Safe), Status: string(wire.Status)}, nil
}

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

// CephCreatePool creates a pool (task cephcreatepool).
//
//pve:operation POST /nodes/{node}/ceph/pool
func (c *Client) CephCreatePool(ctx context.Context, node, name string, r CephPoolRequest) (string, error) {
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

// CephUpdatePool changes pool settings (task cephsetpool).
//
//pve:operation PUT /nodes/{node}/ceph/pool/{name}
func (c *Client) CephUpdatePool(ctx context.Context, node, name string, r CephPoolRequest) (string, error) {
	path := cephPath(node, "/pool/"+PathEscape(name))
	var upid string
	if err := c.Put(ctx, path, r.params(), &upid); err != nil {
		return "", err
	}
	return upidOf("PUT", path, upid)
}

// CephDeletePool destroys a pool (task cephdestroypool). Unless force is
// set, PVE refuses while an RBD storage on the pool still lists images
// ("ceph pool '<p>' still in use by storage '<id>'"); removeStorages also
// removes the RBD storages configured for the pool.
//
//pve:operation DELETE /nodes/{node}/ceph/pool/{name}
func (c *Client) CephDeletePool(ctx context.Context, node, name string, removeStorages, force bool) (string, error) {
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

// CephListPools lists the pools.
//
//pve:operation GET /nodes/{node}/ceph/pool
func (c *Client) CephListPools(ctx context.Context, node string) ([]CephPool, error) {
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

// CephGetPool returns one pool's settings, applications, autoscaler view
// and usage (GET .../pool/{name}/status with verbose); a missing pool is
// ErrNotFound.
//
//pve:operation GET /nodes/{node}/ceph/pool/{name}/status
func (c *Client) CephGetPool(ctx context.Context, node, name string) (*CephPool, error) {
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

func isCephMissing(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "unrecognized pool") || strings.Contains(msg, "does not exist") || strings.Contains(msg, "ENOENT")
}

// CephFlags returns the cluster's OSD flags (noout, nobackfill, ...).
//
//pve:operation GET /cluster/ceph/flags
func (c *Client) CephFlags(ctx context.Context) (map[string]bool, error) {
	var wire []struct {
		Name  flexString `json:"name"`
		Value flexBool   `json:"value"`
	}
	if err := c.Get(ctx, "/cluster/ceph/flags", nil, &wire); err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, w := range wire {
		out[string(w.Name)] = bool(w.Value)
	}
	return out, nil
}

// CephSetFlags sets (true) or clears (false) several flags in one task
// (cephsetflags); flags not in the map are left alone.
//
//pve:operation PUT /cluster/ceph/flags
func (c *Client) CephSetFlags(ctx context.Context, flags map[string]bool) (string, error) {
	p := Params{}
	for k, v := range flags {
		p.SetBool(k, v)
	}
	var upid string
	if err := c.Put(ctx, "/cluster/ceph/flags", p, &upid); err != nil {
		return "", err
	}
	return upidOf("PUT", "/cluster/ceph/flags", upid)
}

// CephFlag reads one flag.
//
//pve:operation GET /cluster/ceph/flags/{flag}
func (c *Client) CephFlag(ctx context.Context, flag string) (bool, error) {
	var v flexBool
	err := c.Get(ctx, "/cluster/ceph/flags/"+PathEscape(flag), nil, &v)
	return bool(v), err
}

// CephSetFlag sets or clears one flag (synchronous).
//
//pve:operation PUT /cluster/ceph/flags/{flag}
func (c *Client) CephSetFlag(ctx context.Context, flag string, value bool) error {
	p := Params{}
	p.SetBool("value", value)
	return c.Put(ctx, "/cluster/ceph/flags/"+PathEscape(flag), p, nil)
}

// CephHealthCheck is one raised health check (OSD_DOWN, PG_DEGRADED, ...).
type CephHealthCheck struct {
	Severity string // HEALTH_WARN | HEALTH_ERR
	Message  string
	Count    int64
}

// CephStatus is the part of `ceph status` the provider decides on.
type CephStatus struct {
	FSID        string
	Health      string // HEALTH_OK | HEALTH_WARN | HEALTH_ERR
	Checks      map[string]CephHealthCheck
	QuorumNames []string
	NumMons     int64
	NumOSDs     int64
	NumUpOSDs   int64
	NumInOSDs   int64
	NumPGs      int64
	PGsByState  map[string]int64
	// DegradedObjects and MisplacedObjects are 0 when Ceph omits them.
	DegradedObjects, MisplacedObjects int64
	MgrAvailable                      bool
	// Raw is the whole answer, for fields not decoded here.
	Raw json.RawMessage
}

// AllActiveClean reports whether every PG is active+clean (remapped
// counts as clean, as in Ceph's own wait loops).
func (s *CephStatus) AllActiveClean() bool {
	var n int64
	for st, c := range s.PGsByState {
		parts := strings.Split(st, "+")
		active, clean := false, false
		for _, p := range parts {
			active = active || p == "active"
			clean = clean || p == "clean"
		}
		if active && clean {
			n += c
		}
	}
	return n == s.NumPGs
}

// CephClusterStatus is GET /cluster/ceph/status.
//
//pve:operation GET /cluster/ceph/status
func (c *Client) CephClusterStatus(ctx context.Context) (*CephStatus, error) {
	raw, _, err := c.GetRaw(ctx, "/cluster/ceph/status", nil)
	if err != nil {
		return nil, err
	}
	return decodeCephStatus(raw)
}

// CephNodeStatus is GET /nodes/{node}/ceph/status (same shape).
//
//pve:operation GET /nodes/{node}/ceph/status
func (c *Client) CephNodeStatus(ctx context.Context, node string) (*CephStatus, error) {
	raw, _, err := c.GetRaw(ctx, cephPath(node, "/status"), nil)
	if err != nil {
		return nil, err
	}
	return decodeCephStatus(raw)
}

func decodeCephStatus(raw json.RawMessage) (*CephStatus, error) {
	var w struct {
		FSID   flexString `json:"fsid"`
		Health struct {
			Status flexString `json:"status"`
			Checks map[string]struct {
				Severity flexString `json:"severity"`
				Summary  struct {
					Message flexString `json:"message"`
					Count   flexInt    `json:"count"`
				} `json:"summary"`
			} `json:"checks"`
		} `json:"health"`
		QuorumNames []flexString `json:"quorum_names"`
		Monmap      struct {
			NumMons flexInt `json:"num_mons"`
		} `json:"monmap"`
		Osdmap struct {
			NumOSDs   flexInt `json:"num_osds"`
			NumUpOSDs flexInt `json:"num_up_osds"`
			NumInOSDs flexInt `json:"num_in_osds"`
		} `json:"osdmap"`
		Pgmap struct {
			PGsByState []struct {
				StateName flexString `json:"state_name"`
				Count     flexInt    `json:"count"`
			} `json:"pgs_by_state"`
			NumPGs           flexInt `json:"num_pgs"`
			DegradedObjects  flexInt `json:"degraded_objects"`
			MisplacedObjects flexInt `json:"misplaced_objects"`
		} `json:"pgmap"`
		Mgrmap struct {
			Available flexBool `json:"available"`
		} `json:"mgrmap"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("decode ceph status: %w", err)
	}
	st := &CephStatus{FSID: string(w.FSID), Health: string(w.Health.Status), Checks: map[string]CephHealthCheck{},
		NumMons: int64(w.Monmap.NumMons), NumOSDs: int64(w.Osdmap.NumOSDs), NumUpOSDs: int64(w.Osdmap.NumUpOSDs),
		NumInOSDs: int64(w.Osdmap.NumInOSDs), NumPGs: int64(w.Pgmap.NumPGs), PGsByState: map[string]int64{},
		DegradedObjects: int64(w.Pgmap.DegradedObjects), MisplacedObjects: int64(w.Pgmap.MisplacedObjects),
		MgrAvailable: bool(w.Mgrmap.Available), Raw: bytes.Clone(raw)}
	for name, ch := range w.Health.Checks {
		st.Checks[name] = CephHealthCheck{Severity: string(ch.Severity), Message: string(ch.Summary.Message), Count: int64(ch.Summary.Count)}
	}
	for _, q := range w.QuorumNames {
		st.QuorumNames = append(st.QuorumNames, string(q))
	}
	for _, s := range w.Pgmap.PGsByState {
		st.PGsByState[string(s.StateName)] += int64(s.Count)
	}
	return st, nil
}
