package pve

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// CephOSDDevice is one device of an OSD: its data (block), block.db or
// block.wal.
type CephOSDDevice struct {
	Device string // block | db | wal
	// DevNode is the device-mapper node (/dev/dm-N); PhysicalDevice the
	// disk(s) under it as kernel names ("sdb", comma-joined when several).
	DevNode, PhysicalDevice string
	Size                    int64 // bytes
	Type                    string
	SupportDiscard          bool
}

// CephOSDMetadata is GET .../osd/{osdid}/metadata: `ceph osd metadata`.
type CephOSDMetadata struct {
	ID              int64
	Hostname        string
	ObjectStore     string
	Version         string
	PID             int64 // 0 when the daemon is not running
	MemUsage        int64
	FrontAddr       string
	BackAddr        string
	Devices         []CephOSDDevice
	BluestoreDevice *CephOSDDevice // the block device, nil if PVE reports none
}

// Device returns the OSD's device of kind ("block", "db", "wal") or nil.
func (m *CephOSDMetadata) Device(kind string) *CephOSDDevice {
	for i := range m.Devices {
		if m.Devices[i].Device == kind {
			return &m.Devices[i]
		}
	}
	return nil
}

// CephOSDMetadata reads an OSD's metadata on the node that hosts it (PVE
// refuses other nodes: "OSD 'N' does not exists on host 'X'").
//
//pve:operation GET /nodes/{node}/ceph/osd/{osdid}/metadata
func (c *Client) CephOSDMetadata(ctx context.Context, node string, id int64) (*CephOSDMetadata, error) {
	type dev struct {
		Device   flexString `json:"device"`
		DevNode  flexString `json:"dev_node"`
		Physical flexString `json:"physical_device"`
		// PVE's schema named the field "devices" until pve-manager 9.2;
		// the wire has always said physical_device. Accept both.
		Devices flexString `json:"devices"`
		Size    flexInt    `json:"size"`
		Type    flexString `json:"type"`
		Discard flexBool   `json:"support_discard"`
	}
	var w struct {
		OSD struct {
			ID        flexInt    `json:"id"`
			Hostname  flexString `json:"hostname"`
			Store     flexString `json:"osd_objectstore"`
			Version   flexString `json:"version"`
			PID       flexInt    `json:"pid"`
			Mem       flexInt    `json:"mem_usage"`
			FrontAddr flexString `json:"front_addr"`
			BackAddr  flexString `json:"back_addr"`
		} `json:"osd"`
		Devices []dev `json:"devices"`
	}
	if err := c.Get(ctx, cephPath(node, "/osd/"+strconv.FormatInt(id, 10)+"/metadata"), nil, &w); err != nil {
		return nil, err
	}
	m := &CephOSDMetadata{ID: int64(w.OSD.ID), Hostname: string(w.OSD.Hostname), ObjectStore: string(w.OSD.Store),
		Version: string(w.OSD.Version), PID: int64(w.OSD.PID), MemUsage: int64(w.OSD.Mem),
		FrontAddr: string(w.OSD.FrontAddr), BackAddr: string(w.OSD.BackAddr)}
	for _, d := range w.Devices {
		phys := string(d.Physical)
		if phys == "" {
			phys = string(d.Devices)
		}
		m.Devices = append(m.Devices, CephOSDDevice{Device: string(d.Device), DevNode: string(d.DevNode), PhysicalDevice: phys,
			Size: int64(d.Size), Type: string(d.Type), SupportDiscard: bool(d.Discard)})
	}
	m.BluestoreDevice = m.Device("block")
	return m, nil
}

// CephClusterMetadata reads the metadata of every OSD at once (GET
// /cluster/ceph/metadata: Ceph's `osd metadata` as it is, which osddetails
// reshapes per OSD), keyed by OSD id. Each is reshaped as osddetails does
// (Devices: block, and db/wal when dedicated), without what only the OSD's
// node knows: PID and memory are 0. An OSD that never started has no
// metadata and is absent.
//
//pve:operation GET /cluster/ceph/metadata
func (c *Client) CephClusterMetadata(ctx context.Context) (map[int64]*CephOSDMetadata, error) {
	var w struct {
		OSD []map[string]json.RawMessage `json:"osd"`
	}
	if err := c.Get(ctx, "/cluster/ceph/metadata", nil, &w); err != nil {
		return nil, err
	}
	out := map[int64]*CephOSDMetadata{}
	for _, raw := range w.OSD {
		// Values are strings but the id; an odd one reads as "".
		get := func(k string) string {
			var f flexString
			if json.Unmarshal(raw[k], &f) != nil {
				return ""
			}
			return string(f)
		}
		id, err := strconv.ParseInt(get("id"), 10, 64)
		if err != nil {
			continue
		}
		m := &CephOSDMetadata{ID: id, Hostname: get("hostname"), ObjectStore: get("osd_objectstore"),
			Version:   fmt.Sprintf("%s (%s)", get("ceph_version_short"), get("ceph_release")),
			FrontAddr: get("front_addr"), BackAddr: get("back_addr")}
		dev := func(prefix, kind string) {
			size, _ := strconv.ParseInt(get(prefix+"size"), 10, 64)
			var discard flexBool
			_ = discard.UnmarshalJSON([]byte(strconv.Quote(get(prefix + "support_discard"))))
			m.Devices = append(m.Devices, CephOSDDevice{Device: kind, DevNode: get(prefix + "dev_node"),
				PhysicalDevice: get(prefix + "devices"), Size: size, Type: get(prefix + "type"), SupportDiscard: bool(discard)})
		}
		dev("bluestore_bdev_", "block")
		if get("bluefs_dedicated_db") == "1" {
			dev("bluefs_db_", "db")
		}
		if get("bluefs_dedicated_wal") == "1" {
			dev("bluefs_wal_", "wal")
		}
		m.BluestoreDevice = m.Device("block")
		out[id] = m
	}
	return out, nil
}

// CephOSDVolume is GET .../osd/{osdid}/lv-info: the LV ceph-volume made.
type CephOSDVolume struct {
	LVName, LVPath, LVUUID, VGName, CreationTime string
	LVSize                                       int64
}

// OSDFSID is the OSD's own fsid (uuid), which ceph-volume puts in the name
// of the data LV (osd-block-<fsid>); "" for other LVs.
func (v *CephOSDVolume) OSDFSID() string {
	if s, ok := strings.CutPrefix(v.LVName, "osd-block-"); ok {
		return s
	}
	return ""
}

// CephOSDLVInfo reads the LV of an OSD's device (kind block, db or wal; ""
// is block) on the node that hosts it. It runs ceph-volume on the node, so
// it is slow on a real cluster: call it when needed, not on every refresh.
//
//pve:operation GET /nodes/{node}/ceph/osd/{osdid}/lv-info
func (c *Client) CephOSDLVInfo(ctx context.Context, node string, id int64, kind string) (*CephOSDVolume, error) {
	p := Params{}
	if kind != "" {
		p.Set("type", kind)
	}
	var w struct {
		LVName  flexString `json:"lv_name"`
		LVPath  flexString `json:"lv_path"`
		LVUUID  flexString `json:"lv_uuid"`
		VGName  flexString `json:"vg_name"`
		Created flexString `json:"creation_time"`
		LVSize  flexInt    `json:"lv_size"`
	}
	if err := c.Get(ctx, cephPath(node, "/osd/"+strconv.FormatInt(id, 10)+"/lv-info"), p, &w); err != nil {
		return nil, err
	}
	return &CephOSDVolume{LVName: string(w.LVName), LVPath: string(w.LVPath), LVUUID: string(w.LVUUID), VGName: string(w.VGName),
		CreationTime: string(w.Created), LVSize: int64(w.LVSize)}, nil
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

// CreateCephOSD creates an OSD on a free disk (task cephcreateosd).
//
//pve:operation POST /nodes/{node}/ceph/osd
func (c *Client) CreateCephOSD(ctx context.Context, node string, r CephOSDCreateRequest) (string, error) {
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

// MarkCephOSDOut marks an OSD out: Ceph starts moving its data elsewhere.
//
//pve:operation POST /nodes/{node}/ceph/osd/{osdid}/out
func (c *Client) MarkCephOSDOut(ctx context.Context, node string, id int64) error {
	return c.Post(ctx, cephPath(node, "/osd/"+strconv.FormatInt(id, 10)+"/out"), nil, nil)
}

// DestroyCephOSD destroys a down, out OSD (root@pam only); cleanup also
// zaps its disk. PVE does not check safe-to-destroy: see CephCmdSafety.
//
//pve:operation DELETE /nodes/{node}/ceph/osd/{osdid}
func (c *Client) DestroyCephOSD(ctx context.Context, node string, id int64, cleanup bool) (string, error) {
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
