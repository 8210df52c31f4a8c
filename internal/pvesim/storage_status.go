package pvesim

import (
	"cmp"
	"sort"
	"strings"
)

// Storage status and content on a node after pve-storage
// PVE/API2/Storage/Status.pm and PVE::Storage::storage_info /
// volume_list. Sizes come from the node's disks (the installer's root and
// pve/data on the 120 GB boot SSD, thin pools, zpools) and the Ceph pool
// model; backends the simulator does not model (NFS servers, external
// Ceph, LINSTOR, Vitastor) are always reachable with a nominal 4 TiB.

const (
	rootFSSize    = 29394726912 // ext4 on pve/root
	rootFSUsed    = 3489660928  // the installed system
	remoteStoreSz = 4 << 40
)

func registerStorageStatus(t *routeTable) {
	t.add("GET", "/nodes/{node}/storage", &method{params: schema{
		"node": nodeParam(), "content": pFmt("pve-storage-content-list"), "enabled": pBool(), "format": pBool(),
		"storage": pFmt("pve-storage-id"), "target": pFmt("pve-node"),
	}, handler: listNodeStorage})
	t.add("GET", "/nodes/{node}/storage/{storage}/status", &method{params: schema{
		"node": nodeParam(), "storage": storageIDParam(),
	}, handler: nodeStorageStatus})
	t.add("GET", "/nodes/{node}/storage/{storage}/content", &method{params: schema{
		"node": nodeParam(), "storage": storageIDParam(), "content": pFmt("pve-storage-content"),
		"vmid": vmidParam().opt(),
	}, handler: nodeStorageContent})
}

// storageUsage is the plugin's status on node: total, avail, used and
// whether the storage could be activated.
func (s *Sim) storageUsage(ns *nodeState, e *storageEntry) (total, avail, used int64, active bool) {
	if err := s.activateStorageLocked(ns.Name, e); err != nil {
		return 0, 0, 0, false
	}
	volUsed := func() int64 {
		var n int64
		for _, v := range s.volumesLocked(ns.Name, e) {
			if v.Storage == e.ID {
				n += v.Size
			}
		}
		return n
	}
	switch e.Type {
	case "dir":
		// Every directory storage sits on the root file system.
		var files int64
		for _, other := range s.storageCfgLocked(ns.Name).Entries {
			if other.Type == "dir" {
				for _, v := range s.volumesLocked(ns.Name, other) {
					if v.Storage == other.ID {
						files += v.Size
					}
				}
			}
		}
		used = rootFSUsed + files
		return rootFSSize, max(rootFSSize-used, 0), used, true
	case "lvmthin":
		p := s.thinPools(ns)[e.Opts["vgname"]+"/"+e.Opts["thinpool"]]
		used = s.thinPoolUsed(ns, p.VG, p.LV)
		if p.VG == "pve" && p.LV == "data" {
			used += 1 << 30
		}
		return p.Size, max(p.Size-used, 0), used, true
	case "lvm":
		var size int64
		for _, d := range s.nodeDisks(ns) {
			if d.VG == e.Opts["vgname"] || (d.Boot && e.Opts["vgname"] == "pve") {
				size += (d.Size - 1<<20) / lvmExtent * lvmExtent
			}
		}
		used = volUsed()
		for _, p := range s.thinPools(ns) {
			if p.VG == e.Opts["vgname"] {
				used += p.Size + 2*p.MetaSize
			}
		}
		return size, max(size-used, 0), used, true
	case "zfspool":
		pool, _, _ := strings.Cut(e.Opts["pool"], "/")
		p := ns.ZPools[pool]
		used = s.zpoolUsed(ns, pool)
		return p.Usable, max(p.Usable-used, 0), used, true
	case "rbd":
		if p := s.rbdPoolLocked(ns.Name, e); p != nil {
			cs := s.st.Domains[ns.Domain].Ceph
			avail = max(cs.rawCapacity()-cs.usedRaw(), 0) / int64(max(p.Size, 1))
			used = p.Stored
			return used + avail, avail, used, true
		}
		if e.Opts["monhost"] == "" {
			return 0, 0, 0, false // no such pool
		}
	}
	used = volUsed()
	return remoteStoreSz, remoteStoreSz - used, used, true
}

// storageInfo is PVE::Storage::storage_info on node, by storage id.
func (s *Sim) storageInfo(node, content string) map[string]map[string]any {
	ns := s.st.Nodes[node]
	if cs := s.st.Domains[ns.Domain].Ceph; cs != nil {
		s.cephTickLocked(cs)
	}
	_, ids := s.parsedStorageCfg(node)
	want := splitList(content)
	info := map[string]map[string]any{}
	for id, e := range ids {
		enabled := e.checkUsable(node) == nil
		if content != "" {
			ok := false
			ct := e.contentTypes()
			for _, w := range want {
				ok = ok || ct[w]
			}
			if !ok || !enabled {
				continue
			}
		}
		cts := strings.Split(e.Opts["content"], ",")
		sort.Strings(cts)
		d := map[string]any{
			"type": e.Type, "total": 0, "avail": 0, "used": 0, "shared": boolInt(e.Opts["shared"] == "1"),
			"content": cmp.Or(strings.Join(cts, ","), "none"), "active": 0, "enabled": boolInt(enabled),
		}
		if enabled {
			if total, avail, used, active := s.storageUsage(ns, e); active {
				d["total"], d["avail"], d["used"], d["active"] = total, avail, used, 1
			}
		}
		info[id] = d
	}
	return info
}

func listNodeStorage(c *call) (any, *apiError) {
	s := c.s
	node := c.params["node"]
	target := c.params["target"]
	if target == node || target == "localhost" {
		target = ""
	}
	info := s.storageInfo(node, c.params["content"])
	if id := c.params["storage"]; id != "" && info[id] == nil {
		return nil, paramErr1("storage", "No such storage.")
	}
	_, ids := s.parsedStorageCfg(node)
	keys := make([]string, 0, len(info))
	for id := range info {
		keys = append(keys, id)
	}
	sort.Strings(keys)
	out := []map[string]any{}
	for _, id := range keys {
		d := info[id]
		e := ids[id]
		if sid := c.params["storage"]; sid != "" && sid != id {
			continue
		}
		if c.params["enabled"] == "1" && e.Opts["disable"] == "1" {
			continue
		}
		if target != "" && (e.Opts["shared"] != "1" || !e.onNode(node) || !e.onNode(target)) {
			continue
		}
		total, _ := d["total"].(int64)
		used, _ := d["used"].(int64)
		if total > 0 {
			d["used_fraction"] = float64(used) / float64(total)
		}
		d["storage"] = id
		out = append(out, d)
	}
	return out, nil
}

func nodeStorageStatus(c *call) (any, *apiError) {
	info := c.s.storageInfo(c.params["node"], "")
	d := info[c.params["storage"]]
	if d == nil {
		return nil, paramErr1("storage", "No such storage.")
	}
	return d, nil
}

func nodeStorageContent(c *call) (any, *apiError) {
	s := c.s
	node := c.params["node"]
	_, ids := s.parsedStorageCfg(node)
	id := c.params["storage"]
	e := ids[id]
	if e == nil {
		return nil, die("storage '%s' does not exist\n", id)
	}
	if !e.onNode(node) {
		return nil, die("storage '%s' is not available on node '%s'\n", id, node)
	}
	if err := s.activateStorageLocked(node, e); err != nil {
		return nil, die("%s\n", err)
	}
	vmid := 0
	if v := c.params["vmid"]; v != "" {
		vmid = atoiOr(v, 0)
	}
	out := []map[string]any{}
	ct := c.params["content"]
	for _, v := range s.storageVolumesLocked(node, id, vmid) {
		content := v.content()
		if ct != "" && ct != content {
			continue
		}
		if content == "iso" {
			// No vmid key: PVE lists templates as nobody's.
			out = append(out, map[string]any{"volid": v.volid(), "format": v.Format, "size": v.Size, "content": content})
			continue
		}
		out = append(out, map[string]any{"volid": v.volid(), "format": v.Format, "size": v.Size, "vmid": v.VMID, "content": content})
	}
	return out, nil
}
