package pve

import (
	"context"
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
