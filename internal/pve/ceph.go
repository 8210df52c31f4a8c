package pve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Ceph: init, configuration, services, flags and cluster status; monitors
// and managers in ceph_mon.go, OSDs in ceph_osd.go, pools in ceph_pool.go
// (as pvesim's files). Methods returning a UPID start a task; wait for it
// with WaitTask.

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

// InitCeph writes /etc/pve/ceph.conf (synchronous). An existing
// configuration is kept; only the networks are updated.
//
//pve:operation POST /nodes/{node}/ceph/init
func (c *Client) InitCeph(ctx context.Context, node string, r CephInitRequest) error {
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

// StopCephService stops a Ceph service on node ("osd.3", "mon.a", "mgr",
// "" = all of ceph.target). Returns the UPID (srvstop).
//
//pve:operation POST /nodes/{node}/ceph/stop
func (c *Client) StopCephService(ctx context.Context, node, service string) (string, error) {
	p := Params{}
	if service != "" {
		p.Set("service", service)
	}
	path := cephPath(node, "/stop")
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

// SetCephFlags sets (true) or clears (false) several flags in one task
// (cephsetflags); flags not in the map are left alone.
//
//pve:operation PUT /cluster/ceph/flags
func (c *Client) SetCephFlags(ctx context.Context, flags map[string]bool) (string, error) {
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

// SetCephFlag sets or clears one flag (synchronous).
//
//pve:operation PUT /cluster/ceph/flags/{flag}
func (c *Client) SetCephFlag(ctx context.Context, flag string, value bool) error {
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
		// PVE replaces Ceph's monmap summary (num_mons) with the whole
		// `mon dump` (mons); both are read.
		Monmap struct {
			NumMons flexInt           `json:"num_mons"`
			Mons    []json.RawMessage `json:"mons"`
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
		NumMons: max(int64(w.Monmap.NumMons), int64(len(w.Monmap.Mons))), NumOSDs: int64(w.Osdmap.NumOSDs), NumUpOSDs: int64(w.Osdmap.NumUpOSDs),
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
