package pvesim

import (
	"fmt"
	"math"
	"net/netip"
	"sort"
	"strconv"
	"strings"
)

// Ceph OSDs after pve-manager PVE/API2/Ceph/OSD.pm: the tree, create,
// in/out, destroy, metadata and lv-info.

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
	node := schema{"node": nodeParam()}
	osdID := schema{"node": nodeParam(), "osdid": param{typ: tInteger}}
	t.add("GET", "/nodes/{node}/ceph/osd", &method{params: node, handler: cephOSDTree})
	t.add("POST", "/nodes/{node}/ceph/osd", &method{rootOnly: true, params: schema{
		"node": nodeParam(), "dev": pStr().req(), "db_dev": pStr(), "wal_dev": pStr(),
		"db_dev_size":        param{typ: tNumber, optional: true, min: i64(1), requires: "db_dev"},
		"wal_dev_size":       param{typ: tNumber, optional: true, minF: f64(0.5), requires: "wal_dev"},
		"crush-device-class": pStr(), "encrypted": pBool(), "osds-per-device": pInt(i64(1), nil),
	}, handler: cephCreateOSD})
	t.add("GET", "/nodes/{node}/ceph/osd/{osdid}", &method{params: osdID, handler: func(c *call) (any, *apiError) {
		if _, err := c.s.cephLocked(c); err != nil {
			return nil, err
		}
		return []map[string]any{{"name": "metadata"}, {"name": "lv-info"}}, nil
	}})
	t.add("DELETE", "/nodes/{node}/ceph/osd/{osdid}", &method{rootOnly: true, params: schema{"node": nodeParam(), "osdid": param{typ: tInteger}, "cleanup": pBool()}, handler: cephDestroyOSD})
	t.add("POST", "/nodes/{node}/ceph/osd/{osdid}/in", &method{params: osdID, handler: func(c *call) (any, *apiError) { return cephInOut(c, true) }})
	t.add("POST", "/nodes/{node}/ceph/osd/{osdid}/out", &method{params: osdID, handler: func(c *call) (any, *apiError) { return cephInOut(c, false) }})

	t.add("GET", "/nodes/{node}/ceph/osd/{osdid}/metadata", &method{params: osdID, handler: cephOSDMetadata})
	t.add("GET", "/nodes/{node}/ceph/osd/{osdid}/lv-info", &method{params: schema{
		"node": nodeParam(), "osdid": param{typ: tInteger}, "type": pEnum("block", "db", "wal"),
	}, handler: cephOSDLVInfo})
}

// cephOSDMetadata is osddetails: `osd metadata` of an OSD of this node
// (osdMetadata), reshaped as PVE/API2/Ceph/OSD.pm does: the daemon's
// facts, its PID and memory when it runs, and one entry per device
// (block, and db/wal when dedicated).
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
	md := s.osdMetadata(o)
	if md["hostname"] != node {
		return nil, die("OSD '%d' does not exists on host '%s'", id, node)
	}
	osd := map[string]any{
		"hostname": md["hostname"], "id": md["id"], "mem_usage": 0, "osd_data": md["osd_data"],
		"osd_objectstore": md["osd_objectstore"], "version": fmt.Sprintf("%s (%s)", md["ceph_version_short"], md["ceph_release"]),
		"front_addr": md["front_addr"], "back_addr": md["back_addr"],
		"hb_front_addr": md["hb_front_addr"], "hb_back_addr": md["hb_back_addr"],
	}
	if o.isUp() {
		osd["pid"] = 2000 + id
		osd["mem_usage"] = 2 << 30
	}
	dev := func(prefix, kind string) map[string]any {
		size, _ := strconv.ParseInt(fmt.Sprint(md[prefix+"size"]), 10, 64)
		return map[string]any{"dev_node": md[prefix+"dev_node"], "physical_device": md[prefix+"devices"], "size": size,
			"support_discard": boolInt(md[prefix+"support_discard"] == "1"), "type": md[prefix+"type"], "device": kind}
	}
	devices := []map[string]any{dev("bluestore_bdev_", "block")}
	if md["bluefs_dedicated_db"] == "1" {
		devices = append(devices, dev("bluefs_db_", "db"))
	}
	if md["bluefs_dedicated_wal"] == "1" {
		devices = append(devices, dev("bluefs_wal_", "wal"))
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

// cephOSDTree is GET /nodes/{node}/ceph/osd: the CRUSH tree with status.
func cephOSDTree(c *call) (any, *apiError) {
	s := c.s
	cs, err := s.cephLocked(c)
	if err != nil {
		return nil, err
	}
	if err := s.syncOSDsLocked(cs); err != nil {
		return nil, err
	}
	used := map[int]float64{}
	for _, p := range cs.Pools {
		for _, pg := range p.PGs {
			for id, f := range pg.Copies {
				used[id] += f * p.pgBytes()
			}
		}
	}
	// osd df's pgs: the PGs an OSD serves or stores (an out OSD keeps
	// counting the PGs it still holds until they are backfilled elsewhere).
	pgs := map[int]int{}
	for _, p := range cs.Pools {
		for i, pg := range p.PGs {
			on := map[int]bool{}
			for _, id := range cs.upSet(p, i) {
				on[id] = true
			}
			for id := range pg.Copies {
				on[id] = true
			}
			for id := range on {
				pgs[id]++
			}
		}
	}
	hosts := map[string][]int{}
	for _, id := range cs.osdIDs() {
		o := cs.OSDs[id]
		hosts[o.Host] = append(hosts[o.Host], id)
	}
	var hostNames []string
	for h := range hosts {
		hostNames = append(hostNames, h)
	}
	sort.Slice(hostNames, func(i, j int) bool { return s.nodeIndex(hostNames[i]) < s.nodeIndex(hostNames[j]) })
	root := map[string]any{"id": -1, "name": "default", "type": "root", "leaf": 0}
	var hostNodes []any
	for hi, h := range hostNames {
		var osds []any
		for _, id := range hosts[h] {
			o := cs.OSDs[id]
			status := "down"
			if o.isUp() {
				status = "up"
			}
			total := float64(o.Size)
			e := map[string]any{
				"id": id, "name": fmt.Sprintf("osd.%d", id), "type": "osd", "leaf": 1, "host": h,
				"status": status, "in": boolInt(o.In), "crush_weight": math.Round(float64(o.Size)/(1<<40)*1e5) / 1e5,
				"reweight": float64(boolInt(o.In)), "device_class": o.Class, "pgs": pgs[id],
				"total_space": int64(total), "bytes_used": int64(used[id]), "percent_used": used[id] * 100 / math.Max(total, 1),
				"osdtype": "bluestore", "blfsdev": o.dmNode(dmBlock), "ceph_version": "ceph version 19.2.3 (pve) squid (stable)", "ceph_version_short": "19.2.3",
				"commit_latency_ms": 0, "apply_latency_ms": 0,
			}
			// osd metadata's bluefs_{db,wal}_dev_node: the block device's dm
			// node when there is no dedicated one.
			e["dbdev"], e["waldev"] = o.dmNode(dmBlock), o.dmNode(dmBlock)
			if o.DBDev != "" {
				e["dbdev"] = o.dmNode(dmDB)
			}
			if o.WALDev != "" {
				e["waldev"] = o.dmNode(dmWAL)
			}
			osds = append(osds, e)
		}
		hostNodes = append(hostNodes, map[string]any{"id": -2 - hi, "name": h, "type": "host", "leaf": 0, "children": osds, "version": "19.2.3"})
	}
	if len(hostNodes) > 0 {
		root["children"] = hostNodes
	} else {
		root["leaf"] = 0
	}
	out := map[string]any{"root": map[string]any{"leaf": 0, "children": []any{root}}}
	var flags []string
	for _, f := range cephFlagNames {
		if cs.Flags[f] {
			flags = append(flags, f)
		}
	}
	flags = append(flags, "sortbitwise", "recovery_deletes", "purged_snapdirs", "pglog_hardlimit")
	out["flags"] = strings.Join(flags, ",")
	return out, nil
}

func (s *Sim) nodeIndex(n string) int {
	for i, x := range s.st.NodeOrder {
		if x == n {
			return i
		}
	}
	return len(s.st.NodeOrder)
}

func (cs *cephState) nextOSDID() int {
	id := 0
	for cs.OSDs[id] != nil {
		id++
	}
	return id
}

func cephCreateOSD(c *call) (any, *apiError) {
	s := c.s
	cs := s.cephDomain(c).Ceph
	if cs == nil {
		return nil, die(cephNotInited)
	}
	p := c.params
	node := p["node"]
	if p["osds-per-device"] != "" && p["osds-per-device"] != "0" {
		for _, k := range []string{"db_dev", "wal_dev"} {
			if p[k] != "" {
				return nil, paramErr1(k, fmt.Sprintf("cannot use 'osds-per-device' parameter with '%s'", k))
			}
		}
	}
	net := cs.Conf["global"]["cluster_network"]
	if net == "" {
		net = cs.Conf["global"]["public_network"]
	}
	if net != "" && len(ipsIn(s.localIPs(node), net)) == 0 {
		pfx, _ := netip.ParsePrefix(net)
		return nil, die("No address from ceph cluster network (%s) found on node '%s'. Check your network config.", pfx.String(), node)
	}
	ns := s.st.Nodes[node]
	disks := s.nodeDisks(ns)
	seen := map[string]string{}
	for _, k := range []string{"dev", "db_dev", "wal_dev"} {
		v := p[k]
		if v == "" {
			continue
		}
		dev := v
		if !strings.HasPrefix(dev, "/dev/") {
			dev = "/dev/" + dev
		}
		if findDisk(disks, dev) == nil {
			return nil, die("%s: no such block device", dev)
		}
		for _, other := range seen {
			if other == dev {
				return nil, paramErr1(k, fmt.Sprintf("cannot chose '%s' for more than one type.", dev))
			}
		}
		seen[k] = dev
	}
	d := findDisk(disks, seen["dev"])
	if used := s.diskUsed(ns, d); used != "" {
		return nil, die("device '%s' is already in use", d.DevPath)
	}
	for _, k := range []string{"db_dev", "wal_dev"} {
		if seen[k] == "" {
			continue
		}
		x := findDisk(disks, seen[k])
		switch s.diskUsed(ns, x) {
		case "", "LVM":
		case "partitions":
			if !x.GPT {
				return nil, die("device '%s' is not GPT partitioned", x.DevPath)
			}
		default:
			return nil, die("device '%s' is already in use and has no LVM on it", x.DevPath)
		}
	}
	if len(cs.Mons) == 0 || !s.monQuorum(cs, nil) {
		return nil, die("got timeout")
	}
	name := strings.TrimPrefix(d.DevPath, "/dev/")
	return s.startTaskLocked(c, "cephcreateosd", name, func(t *task) (int, error) {
		if s.diskUsed(ns, d) != "" {
			return 0, fmt.Errorf("device '%s' is already in use", d.DevPath)
		}
		s.cephTickLocked(cs)
		n := 1
		if v, _ := strconv.Atoi(p["osds-per-device"]); v > 1 {
			n = v
		}
		class := p["crush-device-class"]
		if class == "" {
			class = d.Type
			if class == "nvme" {
				class = "nvme"
			} else if class != "hdd" {
				class = "ssd"
			}
		}
		t.Log = append(t.Log, "create OSD on "+d.DevPath+" (bluestore)")
		if p["encrypted"] == "1" {
			t.Log = append(t.Log, "using encryption (dm-crypt)")
		}
		t.Log = append(t.Log, "wiping block device "+d.DevPath)
		for i := 0; i < n; i++ {
			id := cs.nextOSDID()
			o := &cephOSD{ID: id, Host: node, Dev: d.DevPath, Class: class, Encrypted: p["encrypted"] == "1",
				Size: d.Size / int64(n), Up: true, In: !cs.Flags["noin"], UUID: randUUID(), DBDev: seen["db_dev"], WALDev: seen["wal_dev"]}
			o.DBSize, o.WALSize = osdDBWALSizes(cs, d.Size, p)
			if cs.Flags["noup"] {
				o.Up = false
				o.DownSince = cs.Clock
			}
			if r := s.realCeph; r != nil {
				if err := r.createOSD(id, node); err != nil {
					return 0, err
				}
			}
			cs.OSDs[id] = o
			t.Log = append(t.Log, fmt.Sprintf("Running command: /usr/bin/ceph-osd --cluster ceph --osd-objectstore bluestore --mkfs -i %d", id),
				fmt.Sprintf("--> ceph-volume lvm activate successful for osd ID: %d", id))
		}
		d.Partitions, d.LVM = false, true
		cs.Epoch++
		cs.settle()
		return 0, nil
	}), nil
}

// cephOSDParam is the OSD the call's osdid names.
func cephOSDParam(c *call, cs *cephState) (*cephOSD, *apiError) {
	id, _ := strconv.Atoi(c.params["osdid"])
	o := cs.OSDs[id]
	if o == nil {
		return nil, die("no such OSD '%d'", id)
	}
	return o, nil
}

func cephInOut(c *call, in bool) (any, *apiError) {
	cs, err := c.s.cephLocked(c)
	if err != nil {
		return nil, err
	}
	o, err := cephOSDParam(c, cs)
	if err != nil {
		return nil, err
	}
	if r := c.s.realCeph; r != nil && r.backed(o.ID) {
		verb := map[bool]string{true: "in", false: "out"}[in]
		if _, err := r.mon(map[string]any{"prefix": "osd " + verb, "ids": []string{strconv.Itoa(o.ID)}}); err != nil {
			return nil, die("mon_command failed - %s", err.Error())
		}
	}
	if o.In != in {
		o.In = in
		cs.Epoch++
		cs.settle()
	}
	c.s.saveLocked()
	return nil, nil
}

func cephDestroyOSD(c *call) (any, *apiError) {
	s := c.s
	cs, err := s.cephLocked(c)
	if err != nil {
		return nil, err
	}
	if err := s.syncOSDsLocked(cs); err != nil {
		return nil, err
	}
	id, _ := strconv.Atoi(c.params["osdid"])
	if o := cs.OSDs[id]; o != nil && o.Host != c.params["node"] {
		return nil, die("OSD osd.%d does not belong to node %s! at /usr/share/perl5/PVE/API2/Ceph/OSD.pm line 1008.", id, c.params["node"])
	}
	o, err := cephOSDParam(c, cs)
	if err != nil {
		if cs.OSDs[id] == nil {
			return nil, die("OSD osd.%d does not belong to node %s! at /usr/share/perl5/PVE/API2/Ceph/OSD.pm line 1008.", id, c.params["node"])
		}
		return nil, err
	}
	if o.In {
		return nil, die("osd is in use (in == 1)")
	}
	if o.isUp() {
		return nil, die("osd is still running (up == 1)")
	}
	cleanup := c.params["cleanup"] == "1"
	ns := s.st.Nodes[o.Host]
	return s.startTaskLocked(c, "cephdestroyosd", fmt.Sprintf("osd.%d", id), func(t *task) (int, error) {
		if cs.OSDs[id] != o {
			return 0, fmt.Errorf("no such OSD '%d'", id)
		}
		s.cephTickLocked(cs)
		t.Log = append(t.Log, fmt.Sprintf("destroy OSD osd.%d", id), fmt.Sprintf("Remove osd.%d from the CRUSH map", id),
			fmt.Sprintf("Remove the osd.%d authentication key.", id), fmt.Sprintf("Remove OSD osd.%d", id))
		if r := s.realCeph; r != nil && !r.backed(id) {
			r.forgetOSD(id)
			cs.destroyOSD(id)
		} else if r != nil {
			// Ceph's verdict, not the model's, decides whether this
			// destroy lost copies; then the worker's steps on the lab.
			if ok, why := r.safeToDestroy(id); !ok {
				cs.UnsafeDestroys = append(cs.UnsafeDestroys, fmt.Sprintf("osd.%d destroyed while not safe-to-destroy: %s", id, why))
			}
			if err := r.control("osd", "destroy", strconv.Itoa(id)); err != nil {
				return 0, err
			}
			cs.removeOSD(id)
		} else {
			cs.destroyOSD(id)
		}
		if d := findDisk(s.nodeDisks(ns), o.Dev); d != nil {
			others := false
			for _, x := range cs.OSDs {
				if x.Host == o.Host && x.Dev == o.Dev {
					others = true
				}
			}
			if !others {
				if cleanup {
					t.Log = append(t.Log, "--> Zapping: "+d.DevPath, "wipe disk/partition: "+d.DevPath)
					d.LVM, d.Partitions, d.GPT = false, false, false
				} else {
					t.Log = append(t.Log, "--> Zapping: "+d.DevPath)
				}
			}
		}
		return 0, nil
	}), nil
}
