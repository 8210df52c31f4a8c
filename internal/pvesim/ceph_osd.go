package pvesim

import (
	"fmt"
	"strconv"
	"strings"
)

// OSD details after pve-manager PVE/API2/Ceph/OSD.pm: GET
// .../osd/{osdid}/metadata (`ceph osd metadata` reshaped) and
// .../osd/{osdid}/lv-info (`ceph-volume lvm list`), plus the block.db and
// block.wal sizes the create worker picks.

// Roles of an OSD's dm devices (ceph-volume puts every LV behind
// device-mapper, so `osd metadata` names /dev/dm-N, never /dev/sdX).
const (
	dmBlock = iota
	dmDB
	dmWAL
)

const lvmExtent = 4 << 20 // LVM's default physical extent: lvcreate rounds sizes up to it

func f64(v float64) *float64 { return &v }

// dmNode is the device-mapper node of one of the OSD's LVs. Real nodes
// number them in activation order; any stable, distinct number will do.
func (o *cephOSD) dmNode(role int) string { return fmt.Sprintf("/dev/dm-%d", 4+3*o.ID+role) }

func kernelName(dev string) string { return strings.TrimPrefix(dev, "/dev/") }

// osdDBWALSizes is createosd's sizing of block.db and block.wal: the size
// given in GiB, else bluestore_block_{db,wal}_size from the config, else 10%
// (db) and 1% (wal) of the OSD device; rounded down to KiB, then up to a
// whole LVM extent as lvcreate does.
func osdDBWALSizes(cs *cephState, devSize int64, p map[string]string) (db, wal int64) {
	size := func(dev, param, key string, fallback int64) int64 {
		if p[dev] == "" {
			return 0
		}
		b := fallback
		if v, err := strconv.ParseFloat(p[param], 64); err == nil && v > 0 {
			b = int64(v * (1 << 30))
		} else if v, err := strconv.ParseInt(cs.configValue("osd", key), 10, 64); err == nil && v > 0 {
			b = v
		}
		b = b / 1024 * 1024
		return (b + lvmExtent - 1) / lvmExtent * lvmExtent
	}
	return size("db_dev", "db_dev_size", "bluestore_block_db_size", devSize/10),
		size("wal_dev", "wal_dev_size", "bluestore_block_wal_size", devSize/100)
}

func registerCephOSD(t *routeTable) {
	osdID := schema{"node": nodeParam(), "osdid": param{typ: tInteger}}
	t.add("GET", "/nodes/{node}/ceph/osd/{osdid}/metadata", &method{params: osdID, handler: cephOSDMetadata})
	t.add("GET", "/nodes/{node}/ceph/osd/{osdid}/lv-info", &method{params: schema{
		"node": nodeParam(), "osdid": param{typ: tInteger}, "type": pEnum("block", "db", "wal"),
	}, handler: cephOSDLVInfo})
}

// cephOSDMetadata is osddetails: `osd metadata` of an OSD of this node.
func cephOSDMetadata(c *call) (any, *apiError) {
	s := c.s
	cs, err := s.cephLocked(c)
	if err != nil {
		return nil, err
	}
	id, _ := strconv.Atoi(c.params["osdid"])
	o := cs.OSDs[id]
	if o == nil {
		return nil, die("mon_command failed - osd.%d does not exist", id)
	}
	node := c.params["node"]
	if o.Host != node {
		return nil, die("OSD '%d' does not exists on host '%s'", id, node)
	}
	ip := s.hostIP(node)
	osd := map[string]any{
		"hostname": node, "id": id, "mem_usage": 0, "osd_data": fmt.Sprintf("/var/lib/ceph/osd/ceph-%d", id),
		"osd_objectstore": "bluestore", "version": "19.2.3 (squid)",
		"front_addr":    fmt.Sprintf("[v2:%s:6802/%d,v1:%s:6803/%d]", ip, 1000+id, ip, 1000+id),
		"back_addr":     fmt.Sprintf("[v2:%s:6804/%d,v1:%s:6805/%d]", ip, 1000+id, ip, 1000+id),
		"hb_front_addr": fmt.Sprintf("[v2:%s:6808/%d,v1:%s:6809/%d]", ip, 1000+id, ip, 1000+id),
		"hb_back_addr":  fmt.Sprintf("[v2:%s:6806/%d,v1:%s:6807/%d]", ip, 1000+id, ip, 1000+id),
	}
	if o.isUp() {
		osd["pid"] = 2000 + id
		osd["mem_usage"] = 2 << 30
	}
	disks := s.nodeDisks(s.st.Nodes[node])
	dev := func(path string, role int, kind string, size int64) map[string]any {
		typ := "ssd"
		if d := findDisk(disks, path); d != nil && d.Type == "hdd" {
			typ = "hdd"
		}
		return map[string]any{"dev_node": o.dmNode(role), "physical_device": kernelName(path), "size": size,
			"support_discard": boolInt(typ == "ssd"), "type": typ, "device": kind}
	}
	devices := []map[string]any{dev(o.Dev, dmBlock, "block", o.Size)}
	if o.DBDev != "" {
		devices = append(devices, dev(o.DBDev, dmDB, "db", o.DBSize))
	}
	if o.WALDev != "" {
		devices = append(devices, dev(o.WALDev, dmWAL, "wal", o.WALSize))
	}
	return map[string]any{"osd": osd, "devices": devices}, nil
}

// lvmUUID renders a stable LVM-style uuid (6-4-4-4-4-4-6) for a seed.
func lvmUUID(seed string) string {
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	h := hash64(seed)
	var b strings.Builder
	for i, n := range []int{6, 4, 4, 4, 4, 4, 6} {
		if i > 0 {
			b.WriteByte('-')
		}
		for j := 0; j < n; j++ {
			b.WriteByte(alphabet[h%62])
			h = h/62 + hash64(seed, i, j)
		}
	}
	return b.String()
}

// seededUUID renders a stable RFC 4122-shaped uuid for a seed.
func seededUUID(parts ...any) string {
	a, b := hash64(parts...), hash64(append(parts, "2")...)
	return fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", a>>32, a>>16&0xffff, a&0xfff, b>>52&0xfff, b&0xffffffffffff)
}

// cephOSDLVInfo is osdvolume: the LV of one of the OSD's devices, as
// `ceph-volume lvm list` on this node reports it. ceph-volume names the data
// LV osd-block-<OSD fsid>.
func cephOSDLVInfo(c *call) (any, *apiError) {
	s := c.s
	cs := s.cephDomain(c).Ceph
	if cs == nil {
		return nil, die(cephNotInited)
	}
	s.cephTickLocked(cs)
	id, _ := strconv.Atoi(c.params["osdid"])
	node := c.params["node"]
	o := cs.OSDs[id]
	if o == nil || o.Host != node {
		return nil, die("OSD '%d' not found in 'ceph-volume lvm list' on node '%s'.\nMaybe it was created before LVM became the default?", id, node)
	}
	typ := c.params["type"]
	if typ == "" {
		typ = "block"
	}
	var name string
	var size int64
	var dev string
	switch typ {
	case "block":
		name, size, dev = "osd-block-"+o.UUID, o.Size, o.Dev
	case "db":
		name, size, dev = "osd-db-"+seededUUID(o.UUID, "db"), o.DBSize, o.DBDev
	case "wal":
		name, size, dev = "osd-wal-"+seededUUID(o.UUID, "wal"), o.WALSize, o.WALDev
	}
	if dev == "" {
		return nil, die("volume type '%s' not found for OSD %d", typ, id)
	}
	vg := "ceph-" + seededUUID(node, dev, "vg")
	return map[string]any{
		"lv_name": name, "lv_path": "/dev/" + vg + "/" + name, "lv_uuid": lvmUUID(o.UUID + typ), "vg_name": vg,
		"lv_size": size, "creation_time": "2025-06-01 12:00:00 +0200",
	}, nil
}

// SwapDisks swaps the kernel names of two disks of a node, as a reboot that
// enumerates them the other way round does (/dev/sdb becomes /dev/sdc).
// OSDs follow their disks: ceph-volume finds them by their LVM tags.
func (s *Sim) SwapDisks(node, a, b string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ns := s.st.Nodes[node]
	if ns == nil {
		return
	}
	disks := s.nodeDisks(ns)
	da, db := findDisk(disks, a), findDisk(disks, b)
	if da == nil || db == nil {
		return
	}
	da.DevPath, db.DevPath = db.DevPath, da.DevPath
	swap := func(p *string) {
		switch *p {
		case da.DevPath:
			*p = db.DevPath
		case db.DevPath:
			*p = da.DevPath
		}
	}
	if cs := s.st.Domains[ns.Domain].Ceph; cs != nil {
		for _, o := range cs.OSDs {
			if o.Host == node {
				swap(&o.Dev)
				swap(&o.DBDev)
				swap(&o.WALDev)
			}
		}
	}
	s.saveLocked()
}
