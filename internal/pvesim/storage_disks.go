package pvesim

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// LVM thin pools and ZFS pools on a node's disks after pve-storage
// PVE/API2/Disks/LVMThin.pm and ZFS.pm: a free disk (Diskmanage's
// assert_disk_unused) becomes a volume group with one thin pool, or a
// zpool; add_storage adds the storage.cfg entry for this node.

// thinPool is one thin pool LV (lvs lv_type 't').
type thinPool struct {
	VG       string   `json:"vg"`
	LV       string   `json:"lv"`
	Size     int64    `json:"size"`
	MetaSize int64    `json:"metadata_size"`
	Devs     []string `json:"devs,omitempty"`
}

// zPool is one zpool.
type zPool struct {
	Name        string   `json:"name"`
	Devs        []string `json:"devs"`
	RaidLevel   string   `json:"raidlevel"`
	Ashift      int      `json:"ashift"`
	Compression string   `json:"compression"`
	Size        int64    `json:"size"`   // raw, as zpool list reports it
	Usable      int64    `json:"usable"` // what zfs get available+used adds up to
}

const (
	// The installer's pve/data on the lab's 120 GB boot SSD.
	pveDataSize = 15452 * lvmExtent
	pveDataMeta = 259 * lvmExtent
)

// thinPools are the node's thin pools by "vg/lv", with the installer's
// pve/data.
func (s *Sim) thinPools(ns *nodeState) map[string]*thinPool {
	if ns.ThinPools == nil {
		ns.ThinPools = map[string]*thinPool{"pve/data": {VG: "pve", LV: "data", Size: pveDataSize, MetaSize: pveDataMeta}}
	}
	return ns.ThinPools
}

func (s *Sim) hasVG(ns *nodeState, vg string) bool {
	if vg == "pve" {
		return true
	}
	for _, d := range s.nodeDisks(ns) {
		if d.VG == vg {
			return true
		}
	}
	return false
}

// diskHeld is whether a disk carries an active VG or an imported zpool.
func (s *Sim) diskHeld(ns *nodeState, d *simDisk) bool {
	return d.ZPool != "" || (d.VG != "" && s.vgLVCount(ns, d.VG) > 0)
}

func (s *Sim) vgLVCount(ns *nodeState, vg string) int {
	n := 0
	for _, p := range s.thinPools(ns) {
		if p.VG == vg {
			n++
		}
	}
	return n
}

// thinPoolUsed is what the volumes of the node's lvmthin storages on the
// pool take (the simulator writes every block it allocates).
func (s *Sim) thinPoolUsed(ns *nodeState, vg, lv string) int64 {
	var used int64
	cfg := s.storageCfgLocked(ns.Name)
	for _, v := range ns.Volumes {
		e := cfg.Entries[v.Storage]
		if e != nil && e.Type == "lvmthin" && e.Opts["vgname"] == vg && e.Opts["thinpool"] == lv {
			used += v.Size
		}
	}
	return used
}

func (s *Sim) zpoolUsed(ns *nodeState, pool string) int64 {
	var used int64
	cfg := s.storageCfgLocked(ns.Name)
	for _, v := range ns.Volumes {
		e := cfg.Entries[v.Storage]
		if e != nil && e.Type == "zfspool" && strings.SplitN(e.Opts["pool"], "/", 2)[0] == pool {
			used += v.Size
		}
	}
	return used
}

func registerStorageDisks(t *routeTable) {
	node := schema{"node": nodeParam()}
	name := storageIDParam
	t.add("GET", "/nodes/{node}/disks/lvmthin", &method{params: node, handler: listThinPools})
	t.add("POST", "/nodes/{node}/disks/lvmthin", &method{params: schema{
		"node": nodeParam(), "name": name(), "device": pStr().req(), "add_storage": pBool(),
	}, handler: createThinPool})
	t.add("DELETE", "/nodes/{node}/disks/lvmthin/{name}", &method{params: schema{
		"node": nodeParam(), "name": name(), "volume-group": name(), "cleanup-config": pBool(), "cleanup-disks": pBool(),
	}, handler: deleteThinPool})
	t.add("GET", "/nodes/{node}/disks/lvm", &method{params: node, handler: listVGs})
	t.add("GET", "/nodes/{node}/disks/zfs", &method{params: node, handler: listZPools})
	t.add("POST", "/nodes/{node}/disks/zfs", &method{params: schema{
		"node": nodeParam(), "name": name(), "devices": pFmt("string-list").req(),
		"raidlevel":   pEnum("single", "mirror", "raid10", "raidz", "raidz2", "raidz3", "draid", "draid2", "draid3").req(),
		"ashift":      pInt(i64(9), i64(16)),
		"compression": pEnum("on", "off", "gzip", "lz4", "lzjb", "zle", "zstd"), "add_storage": pBool(), "draid-config": draidConfigParam(),
	}, handler: createZPool})
	t.add("GET", "/nodes/{node}/disks/zfs/{name}", &method{params: schema{"node": nodeParam(), "name": name()}, handler: readZPool})
	t.add("DELETE", "/nodes/{node}/disks/zfs/{name}", &method{params: schema{
		"node": nodeParam(), "name": name(), "cleanup-config": pBool(), "cleanup-disks": pBool(),
	}, handler: deleteZPool})
}

// freeDisk is verify_blockdev_path + assert_disk_unused.
func (s *Sim) freeDisk(ns *nodeState, dev string) (*simDisk, *apiError) {
	if !strings.HasPrefix(dev, "/dev/") {
		return nil, die("got unusual device path '%s'\n", dev)
	}
	d := findDisk(s.nodeDisks(ns), dev)
	if d == nil {
		return nil, die("not a valid block device\n")
	}
	if s.diskUsed(ns, d) != "" {
		return nil, die("device '%s' is already in use\n", dev)
	}
	return d, nil
}

func listThinPools(c *call) (any, *apiError) {
	ns := c.node()
	pools := s2slice(c.s.thinPools(ns))
	out := []map[string]any{}
	for _, p := range pools {
		used := c.s.thinPoolUsed(ns, p.VG, p.LV)
		if p.VG == "pve" && p.LV == "data" {
			used += 1 << 30 // what the installer's guests-free system still wrote
		}
		out = append(out, map[string]any{
			"lv": p.LV, "vg": p.VG, "lv_size": p.Size, "used": used, "metadata_size": p.MetaSize,
			"metadata_used": p.MetaSize / 100 * 2, "lv_type": "t", "lv_state": "a",
		})
	}
	return out, nil
}

// listVGs is Disks/LVM.pm's index, LVMPlugin::lvm_vgs(1): every volume
// group of the node with its physical volumes, sorted by name: the
// installer's pve on the boot disk's third partition, those of thin pools
// created on whole disks, and ceph-volume's ceph-<uuid> on OSD disks.
func listVGs(c *call) (any, *apiError) {
	s, ns := c.s, c.node()
	var cs *cephState
	if d := s.st.Domains[ns.Domain]; d != nil {
		cs = d.Ceph
	}
	type vg struct {
		name, pv   string
		size, free int64
		lvs        int
	}
	var vgs []vg
	for _, d := range s.nodeDisks(ns) {
		pvSize := (d.Size - 1<<20) / lvmExtent * lvmExtent
		switch {
		case d.Boot:
			// cli_lsblk.go's installer layout: everything but 4 GiB is
			// allocated (swap, root, data with its metadata and spare).
			const biosBoot, esp = 1031168, 1 << 30
			size := (d.Size - biosBoot - esp - (1 << 20)) / lvmExtent * lvmExtent
			vgs = append(vgs, vg{name: "pve", pv: partName(d.DevPath, 3), size: size, free: 4 << 30, lvs: 3})
		case d.VG != "":
			used, n := int64(0), 0
			for _, p := range s.thinPools(ns) {
				if p.VG == d.VG {
					used += p.Size + 2*p.MetaSize
					n++
				}
			}
			vgs = append(vgs, vg{name: d.VG, pv: d.DevPath, size: pvSize, free: max(pvSize-used, 0), lvs: n})
		case cs != nil && len(s.diskOSDs(ns, d)) > 0:
			used, n := int64(0), 0
			for _, o := range cs.OSDs {
				if o.Host != ns.Name {
					continue
				}
				if o.Dev == d.DevPath {
					used, n = used+o.Size, n+1
				}
				if o.DBDev == d.DevPath {
					used, n = used+o.DBSize, n+1
				}
				if o.WALDev == d.DevPath {
					used, n = used+o.WALSize, n+1
				}
			}
			vgs = append(vgs, vg{name: "ceph-" + hashUUID(ns.Name, d.DevPath, "vg"), pv: d.DevPath, size: pvSize, free: max(pvSize-used, 0), lvs: n})
		}
	}
	sort.Slice(vgs, func(i, j int) bool { return vgs[i].name < vgs[j].name })
	children := []map[string]any{}
	for _, v := range vgs {
		children = append(children, map[string]any{
			"leaf": 0, "name": v.name, "size": v.size, "free": v.free, "lvcount": v.lvs,
			"children": []map[string]any{{"leaf": 1, "name": v.pv, "size": v.size, "free": v.free}},
		})
	}
	return map[string]any{"leaf": 0, "children": children}, nil
}

func s2slice(m map[string]*thinPool) []*thinPool {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*thinPool, 0, len(keys))
	for _, k := range keys {
		out = append(out, m[k])
	}
	return out
}

// createStorageForNode is Config.pm's create_or_update: create the
// storage restricted to node, or add node to an existing one whose
// verify keys match.
func (s *Sim) createStorageForNode(node, id string, params map[string]string, verify []string, dryrun bool) error {
	_, ids := s.parsedStorageCfg(node)
	if e := ids[id]; e != nil {
		if e.Opts["nodes"] == "" || e.onNode(node) {
			return fmt.Errorf("Storage ID '%s' already exists on node %s", id, node) //nolint:staticcheck // PVE's text
		}
		for _, k := range append([]string{"type"}, verify...) {
			have := e.Opts[k]
			if k == "type" {
				have = e.Type
			}
			if have == "" {
				return fmt.Errorf("Option '%s' is not configured for storage '%s', expected it to be '%s'", k, id, params[k]) //nolint:staticcheck // PVE's text
			}
			if have != params[k] {
				return fmt.Errorf("Option '%s' (%s) does not match existing storage configuration '%s'", k, params[k], have) //nolint:staticcheck // PVE's text
			}
		}
		if dryrun {
			return nil
		}
		nodes := append(splitList(e.Opts["nodes"]), node)
		sort.Strings(nodes)
		return s.updateStorageNodes(node, id, strings.Join(nodes, ","))
	}
	if dryrun {
		return nil
	}
	p := map[string]string{}
	for k, v := range params {
		if k != "type" {
			p[k] = v
		}
	}
	return s.addStorageLocked(node, params["type"], id, p)
}

func (s *Sim) updateStorageNodes(node, id, nodes string) error {
	order, ids := s.parsedStorageCfg(node)
	if nodes == "" {
		delete(ids, id)
		for i, o := range order {
			if o == id {
				order = append(order[:i], order[i+1:]...)
				break
			}
		}
	} else {
		ids[id].Opts["nodes"] = nodes
	}
	s.writeStorageCfg(node, order, ids)
	return nil
}

// cleanupStoragesForNode is Config.pm's cleanup_storages_for_node.
func (s *Sim) cleanupStoragesForNode(node string, match func(e *storageEntry) bool) {
	_, ids := s.parsedStorageCfg(node)
	var all []string
	for _, n := range s.st.NodeOrder {
		if s.st.Nodes[n].Domain == s.st.Nodes[node].Domain {
			all = append(all, n)
		}
	}
	for id, e := range ids {
		if !match(e) || !e.onNode(node) {
			continue
		}
		nodes := splitList(e.Opts["nodes"])
		if len(nodes) == 0 {
			nodes = all
		}
		var keep []string
		for _, n := range nodes {
			if n != node {
				keep = append(keep, n)
			}
		}
		sort.Strings(keep)
		_ = s.updateStorageNodes(node, id, strings.Join(keep, ","))
	}
}

func createThinPool(c *call) (any, *apiError) {
	s := c.s
	ns := c.node()
	name, dev := c.params["name"], c.params["device"]
	d, aerr := s.freeDisk(ns, dev)
	if aerr != nil {
		return nil, aerr
	}
	sp := map[string]string{"type": "lvmthin", "vgname": name, "thinpool": name, "content": "rootdir,images", "nodes": ns.Name}
	verify := []string{"vgname", "thinpool"}
	add := c.params["add_storage"] == "1"
	if add {
		if err := s.createStorageForNode(ns.Name, name, sp, verify, true); err != nil {
			return nil, die("%s\n", err)
		}
	}
	return s.startTaskLocked(c, "lvmthincreate", name, func(t *task) (int, error) {
		if s.diskUsed(ns, d) != "" {
			return 0, fmt.Errorf("device '%s' is already in use", d.DevPath)
		}
		if s.hasVG(ns, name) {
			return 0, fmt.Errorf("volume group with name '%s' already exists on node '%s'", name, ns.Name)
		}
		pvK := (d.Size - 1<<20) / lvmExtent * lvmExtent / 1024
		dataK := pvK - 128*1024
		metaK := min(max(dataK/100, 1024*1024), 16*1024*1024)
		dataK -= 2 * metaK
		size := (dataK*1024 + lvmExtent - 1) / lvmExtent * lvmExtent
		t.Log = append(t.Log,
			fmt.Sprintf("  Physical volume \"%s\" successfully created.", d.DevPath),
			fmt.Sprintf("  Volume group \"%s\" successfully created", name),
			fmt.Sprintf("  Logical volume \"%s\" created.", name))
		d.VG, d.LVM, d.GPT, d.Partitions = name, true, false, false
		s.thinPools(ns)[name+"/"+name] = &thinPool{VG: name, LV: name, Size: size, MetaSize: metaK * 1024, Devs: []string{d.DevPath}}
		if add {
			if err := s.createStorageForNode(ns.Name, name, sp, verify, false); err != nil {
				return 0, err
			}
		}
		return 0, nil
	}), nil
}

func deleteThinPool(c *call) (any, *apiError) {
	s := c.s
	ns := c.node()
	lv, vg := c.params["name"], c.params["volume-group"]
	return s.startTaskLocked(c, "lvmthinremove", vg+"-"+lv, func(t *task) (int, error) {
		pools := s.thinPools(ns)
		if pools[vg+"/"+lv] == nil {
			return 0, fmt.Errorf("no such thin pool %s/%s", vg, lv)
		}
		// lvremove -y takes the pool's thin volumes with it.
		delete(pools, vg+"/"+lv)
		for id, v := range ns.Volumes {
			e := s.storageCfgLocked(ns.Name).Entries[v.Storage]
			if e != nil && e.Type == "lvmthin" && e.Opts["vgname"] == vg && e.Opts["thinpool"] == lv {
				delete(ns.Volumes, id)
			}
		}
		t.Log = append(t.Log, fmt.Sprintf("  Logical volume \"%s\" successfully removed.", lv))
		if c.params["cleanup-config"] == "1" {
			s.cleanupStoragesForNode(ns.Name, func(e *storageEntry) bool {
				return e.Type == "lvmthin" && e.Opts["vgname"] == vg && e.Opts["thinpool"] == lv
			})
		}
		if c.params["cleanup-disks"] == "1" {
			if !s.hasVG(ns, vg) || vg == "pve" {
				if vg == "pve" {
					return 0, fmt.Errorf("volume group '%s' still in use", vg)
				}
				return 0, fmt.Errorf("no such volume group '%s'", vg)
			}
			if s.vgLVCount(ns, vg) > 0 {
				return 0, fmt.Errorf("volume group '%s' still in use", vg)
			}
			for _, d := range s.nodeDisks(ns) {
				if d.VG == vg {
					d.VG, d.LVM, d.GPT, d.Partitions = "", false, false, false
					t.Log = append(t.Log, fmt.Sprintf("wiping disk/partition: %s", d.DevPath))
				}
			}
		}
		return 0, nil
	}), nil
}

func listZPools(c *call) (any, *apiError) {
	ns := c.node()
	names := make([]string, 0, len(ns.ZPools))
	for n := range ns.ZPools {
		names = append(names, n)
	}
	sort.Strings(names)
	out := []map[string]any{}
	for _, n := range names {
		p := ns.ZPools[n]
		alloc := c.s.zpoolUsed(ns, n)
		if p.Usable > 0 {
			alloc = alloc * p.Size / p.Usable
		}
		out = append(out, map[string]any{
			"name": p.Name, "size": p.Size, "alloc": alloc, "free": p.Size - alloc, "frag": 0, "dedup": 1.0, "health": "ONLINE",
		})
	}
	return out, nil
}

func readZPool(c *call) (any, *apiError) {
	ns := c.node()
	p := ns.ZPools[c.params["name"]]
	if p == nil {
		return nil, die("command '/sbin/zpool status -P -v %s' failed: exit code 1\n", c.params["name"])
	}
	// zpool status -P names the partition zpool create made, by id.
	leaf := func(dev string) map[string]any {
		name := dev
		if d := findDisk(c.s.nodeDisks(ns), dev); d != nil {
			name = "/dev/disk/by-id/" + strings.ReplaceAll(d.Model, " ", "_") + "_" + d.Serial + "-part1"
		}
		return map[string]any{"name": name, "state": "ONLINE", "read": 0, "write": 0, "cksum": 0, "leaf": 1}
	}
	var children []map[string]any
	switch p.RaidLevel {
	case "single":
		children = []map[string]any{leaf(p.Devs[0])}
	case "raid10":
		for i := 0; i+1 < len(p.Devs); i += 2 {
			children = append(children, map[string]any{"name": fmt.Sprintf("mirror-%d", i/2), "state": "ONLINE", "read": 0, "write": 0, "cksum": 0,
				"children": []map[string]any{leaf(p.Devs[i]), leaf(p.Devs[i+1])}})
		}
	default:
		var leaves []map[string]any
		for _, d := range p.Devs {
			leaves = append(leaves, leaf(d))
		}
		vdev := p.RaidLevel
		if vdev == "raidz" || vdev == "draid" {
			vdev += "1"
		}
		children = []map[string]any{{"name": vdev + "-0", "state": "ONLINE", "read": 0, "write": 0, "cksum": 0, "children": leaves}}
	}
	return map[string]any{
		"name": p.Name, "state": "ONLINE", "errors": "No known data errors",
		"children": []map[string]any{{"name": p.Name, "state": "ONLINE", "read": 0, "write": 0, "cksum": 0, "children": children}},
	}, nil
}

var zfsMinDisks = map[string]int{"single": 1, "mirror": 2, "raid10": 4, "raidz": 3, "raidz2": 4, "raidz3": 5, "draid": 3, "draid2": 4, "draid3": 5}

func createZPool(c *call) (any, *apiError) {
	s := c.s
	ns := c.node()
	name, level := c.params["name"], c.params["raidlevel"]
	compression := c.params["compression"]
	if compression == "" {
		compression = "on"
	}
	if _, ok := c.params["draid-config"]; ok && !strings.HasPrefix(level, "draid") {
		return nil, die("draid-config set without using dRAID level\n")
	}
	devs := splitList(c.params["devices"])
	var disks []*simDisk
	for _, dev := range devs {
		d, aerr := s.freeDisk(ns, dev)
		if aerr != nil {
			return nil, aerr
		}
		disks = append(disks, d)
	}
	sp := map[string]string{"type": "zfspool", "pool": name, "content": "rootdir,images", "nodes": ns.Name}
	add := c.params["add_storage"] == "1"
	if add {
		if err := s.createStorageForNode(ns.Name, name, sp, []string{"pool"}, true); err != nil {
			return nil, die("%s\n", err)
		}
	}
	if ns.ZPools[name] != nil {
		return nil, die("pool '%s' already exists on node '%s'\n", name, ns.Name)
	}
	n := len(devs)
	switch {
	case level == "raid10" && n%2 != 0:
		return nil, die("raid10 needs an even number of disks\n")
	case level == "single" && n > 1:
		return nil, die("please give only one disk for single disk mode\n")
	case n < zfsMinDisks[level]:
		return nil, die("%s needs at least %d disks\n", level, zfsMinDisks[level])
	}
	vdev, draidMin := draidVdev(level, c.params["draid-config"])
	if n < draidMin {
		return nil, die("At least %d disks needed for current dRAID config\n", draidMin)
	}
	ashift := 12
	if v, ok := c.params["ashift"]; ok {
		ashift, _ = strconv.Atoi(v)
	}
	return s.startTaskLocked(c, "zfscreate", name, func(t *task) (int, error) {
		minSize := disks[0].Size
		var sum int64
		for _, d := range disks {
			if s.diskUsed(ns, d) != "" {
				return 0, fmt.Errorf("device '%s' is already in use", d.DevPath)
			}
			minSize = min(minSize, d.Size)
			sum += d.Size
		}
		// zpool create partitions each disk (part 9 reserved 8 MiB).
		minSize -= 10 << 20
		var raw, usable int64
		switch level {
		case "single":
			raw, usable = minSize, minSize
		case "mirror":
			raw, usable = minSize, minSize
		case "raid10":
			raw, usable = minSize*int64(n/2), minSize*int64(n/2)
		default:
			parity := map[string]int{"raidz": 1, "raidz2": 2, "raidz3": 3, "draid": 1, "draid2": 2, "draid3": 3}[level]
			raw, usable = minSize*int64(n), minSize*int64(n-parity)
		}
		usable -= usable / 32 // spa_slop_shift
		var byID []string
		for _, d := range disks {
			byID = append(byID, "/dev/disk/by-id/"+strings.ReplaceAll(d.Model, " ", "_")+"_"+d.Serial)
		}
		cmd := []string{"/sbin/zpool", "create", "-o", "ashift=" + strconv.Itoa(ashift), name}
		switch level {
		case "single":
			cmd = append(cmd, byID[0])
		case "raid10":
			for i := 0; i+1 < n; i += 2 {
				cmd = append(cmd, "mirror", byID[i], byID[i+1])
			}
		default:
			cmd = append(append(cmd, vdev), byID...)
		}
		t.Log = append(t.Log, "# "+strings.Join(cmd, " "), fmt.Sprintf("# /sbin/zfs set compression=%s %s", compression, name),
			fmt.Sprintf("# systemctl enable zfs-import@%s.service", name))
		for _, d := range disks {
			d.ZPool, d.GPT, d.Partitions = name, true, true
		}
		if ns.ZPools == nil {
			ns.ZPools = map[string]*zPool{}
		}
		ns.ZPools[name] = &zPool{Name: name, Devs: devs, RaidLevel: level, Ashift: ashift, Compression: compression, Size: raw, Usable: usable}
		if add {
			if err := s.createStorageForNode(ns.Name, name, sp, []string{"pool"}, false); err != nil {
				return 0, err
			}
		}
		return 0, nil
	}), nil
}

func deleteZPool(c *call) (any, *apiError) {
	s := c.s
	ns := c.node()
	name := c.params["name"]
	return s.startTaskLocked(c, "zfsremove", name, func(t *task) (int, error) {
		p := ns.ZPools[name]
		if p == nil {
			if c.params["cleanup-disks"] == "1" {
				return 0, fmt.Errorf("command 'zpool list -vHPL %s' failed: exit code 1", name)
			}
			return 0, fmt.Errorf("command 'zpool destroy %s' failed: exit code 1", name)
		}
		delete(ns.ZPools, name)
		for id, v := range ns.Volumes {
			e := s.storageCfgLocked(ns.Name).Entries[v.Storage]
			if e != nil && e.Type == "zfspool" && strings.SplitN(e.Opts["pool"], "/", 2)[0] == name {
				delete(ns.Volumes, id)
			}
		}
		for _, d := range s.nodeDisks(ns) {
			if d.ZPool != name {
				continue
			}
			d.ZPool = ""
			if c.params["cleanup-disks"] == "1" {
				d.GPT, d.Partitions = false, false
				t.Log = append(t.Log, fmt.Sprintf("wiping disk/partition: %s", d.DevPath))
			}
		}
		if c.params["cleanup-config"] == "1" {
			s.cleanupStoragesForNode(ns.Name, func(e *storageEntry) bool {
				return e.Type == "zfspool" && strings.SplitN(e.Opts["pool"], "/", 2)[0] == name
			})
		}
		return 0, nil
	}), nil
}
