package pvesim

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// GET /cluster/ceph/metadata after pve-manager PVE/API2/Cluster/Ceph.pm
// (metadata): the Ceph versions the cluster's nodes broadcast
// (PVE::Ceph::Services::get_ceph_versions, from `ceph --version`), then —
// unless scope=versions, and only after check_ceph_inited — per type the
// monitors', managers' and MDSs' `<type> metadata` merged with what
// pvestatd broadcasts of each node's services (unit enabled, data
// directory), keyed "<id>@<host>", and the raw `osd metadata` of every
// OSD. osddetails (GET /nodes/{node}/ceph/osd/{osdid}/metadata) is built
// from the same `osd metadata` (osdMetadata).

func registerCephMetadata(t *routeTable) {
	t.add("GET", "/cluster/ceph/metadata", &method{params: schema{"scope": pEnum("all", "versions")}, handler: cephClusterMetadata})
}

func cephClusterMetadata(c *call) (any, *apiError) {
	s := c.s
	res := map[string]any{}
	if v := s.cephVersionsKV(c.listener); len(v) > 0 {
		res["node"] = v
	}
	if c.params["scope"] == "versions" {
		return res, nil
	}
	// check_ceph_inited: the monitor binary, then ceph.conf; then RADOS.
	if err := s.cephBinaryMissing(c.listener, "/usr/bin/ceph-mon"); err != nil {
		return nil, err
	}
	cs, err := s.cephLocked(c)
	if err != nil {
		return nil, err
	}
	res["mon"] = s.cephServiceMetadata(cs, "mon")
	res["mgr"] = s.cephServiceMetadata(cs, "mgr")
	res["mds"] = s.cephServiceMetadata(cs, "mds")
	osds := []any{}
	for _, id := range cs.osdIDs() {
		osds = append(osds, s.osdMetadata(cs.OSDs[id]))
	}
	res["osd"] = osds
	return res, nil
}

// cephVersionsKV is the "ceph-versions" node key-value store as the
// listener's pmxcfs holds it: one entry per node of its cluster (itself
// when standalone) whose ceph-common gives a version, as pvestatd's
// broadcast_ceph_versions parses `ceph --version`.
func (s *Sim) cephVersionsKV(listener string) map[string]any {
	out := map[string]any{}
	for _, n := range s.visibleNodeNames(listener) {
		if s.st.Nodes[n] == nil {
			continue
		}
		cr, ok := cephBuildOf(s.cephPkgs(n).Client)
		if !ok {
			continue
		}
		parts := []any{}
		for _, p := range strings.Split(cr.upstream, ".") {
			parts = append(parts, p)
		}
		out[n] = map[string]any{"version": map[string]any{"str": cr.upstream, "parts": parts}, "buildcommit": cr.sha}
	}
	return out
}

// cephBuildOf is the Ceph build of a Proxmox package version
// ("19.2.3-pve2": upstream 19.2.3).
func cephBuildOf(pkg string) (cephRelease, bool) {
	upstream, _, _ := strings.Cut(pkg, "-")
	for _, cr := range cephBuilds {
		if cr.upstream == upstream {
			return cr, true
		}
	}
	return cephRelease{}, false
}

// cephDaemonVersion is what a daemon on host reports in its metadata: the
// release of the Ceph packages installed there.
func (s *Sim) cephDaemonVersion(host string) (long, short, release string) {
	cr, ok := cephBuildOf(s.cephPkgs(host).Version)
	if !ok {
		cr = cephBuilds["squid"]
	}
	return fmt.Sprintf("ceph version %s (%s) %s (stable)", cr.upstream, cr.sha, cr.codename), cr.upstream, cr.codename
}

// cephHostMetadata is what every daemon's metadata says about its host
// (Ceph's collect_sys_info).
func (s *Sim) cephHostMetadata(host string) map[string]any {
	long, short, release := s.cephDaemonVersion(host)
	kernel := "6.14.11-4-pve"
	distro, distroVersion, codename := "Debian GNU/Linux 13 (trixie)", "13", "trixie"
	if !s.rel.atLeast9() {
		kernel, distro, distroVersion, codename = "6.8.12-9-pve", "Debian GNU/Linux 12 (bookworm)", "12", "bookworm"
	}
	return map[string]any{
		"hostname": host, "arch": "x86_64", "os": "Linux", "distro": "debian", "distro_description": distro,
		"distro_version": distroVersion, "distro_codename": codename, "kernel_version": kernel,
		"ceph_version": long, "ceph_version_short": short, "ceph_release": release,
		"mem_total_kb": strconv.FormatInt(memTotal/1024, 10), "mem_swap_kb": strconv.FormatInt(8<<20, 10),
	}
}

// cephServiceMetadata is one type's entry of the answer: the services
// pvestatd broadcasts ({service, direxists} per "<id>@<host>": an enabled
// unit and a data directory, which the sim's daemons always have), each
// overlaid with the daemon's `<type> metadata` when Ceph has it. A monitor
// in the monmap has metadata from its first start on; a manager only
// while the mgrmap lists it (running); the sim has no MDS.
func (s *Sim) cephServiceMetadata(cs *cephState, typ string) map[string]any {
	out := map[string]any{}
	svc := func(id, host string) map[string]any {
		e := map[string]any{"service": true, "direxists": true}
		out[id+"@"+host] = e
		return e
	}
	switch typ {
	case "mon":
		for _, m := range cs.sortedMons() {
			e := svc(m.ID, m.Host)
			for k, v := range s.cephHostMetadata(m.Host) {
				e[k] = v
			}
			ip := m.Addr
			if strings.Contains(ip, ":") && !strings.HasPrefix(ip, "[") {
				ip = "[" + ip + "]"
			}
			e["name"], e["addrs"] = m.ID, fmt.Sprintf("[v2:%s:3300/0,v1:%s:6789/0]", ip, ip)
		}
		for _, m := range cs.OrphanMons {
			svc(m.ID, m.Host)
		}
	case "mgr":
		for id, m := range cs.Mgrs {
			e := svc(id, m.Host)
			if m.Stopped || s.offline[m.Host] {
				continue
			}
			for k, v := range s.cephHostMetadata(m.Host) {
				e[k] = v
			}
			ip, pid := s.hostIP(m.Host), 3000+s.nodeIndex(m.Host)
			e["name"], e["addr"] = id, fmt.Sprintf("%s:0/%d", ip, pid)
			e["addrs"] = fmt.Sprintf("[v2:%s:6800/%d,v1:%s:6801/%d]", ip, pid, ip, pid)
		}
	}
	return out
}

// osdMetadata is `ceph osd metadata` for o: what the OSD reported at its
// last start (the monitors keep it while it is down), every value a
// string but the id. BlueStore reports its main device under
// bluestore_bdev_ and a dedicated block.db or block.wal under bluefs_db_
// or bluefs_wal_ (BlueFS::collect_metadata skips the shared device), with
// KernelDevice's keys each.
func (s *Sim) osdMetadata(o *cephOSD) map[string]any {
	host := o.Host
	ip := s.hostIP(host)
	var disks []*simDisk
	if ns := s.st.Nodes[host]; ns != nil {
		disks = s.nodeDisks(ns)
	}
	m := s.cephHostMetadata(host)
	addr := func(a, b int) string {
		return fmt.Sprintf("[v2:%s:%d/%d,v1:%s:%d/%d]", ip, a, 1000+o.ID, ip, b, 1000+o.ID)
	}
	m["id"] = o.ID
	m["osd_data"] = fmt.Sprintf("/var/lib/ceph/osd/ceph-%d", o.ID)
	m["osd_objectstore"] = "bluestore"
	m["front_addr"], m["back_addr"] = addr(6802, 6803), addr(6804, 6805)
	m["hb_front_addr"], m["hb_back_addr"] = addr(6808, 6809), addr(6806, 6807)
	m["bluefs"] = "1"
	m["bluefs_dedicated_db"] = strconv.Itoa(boolInt(o.DBDev != ""))
	m["bluefs_dedicated_wal"] = strconv.Itoa(boolInt(o.WALDev != ""))
	m["bluefs_single_shared_device"] = strconv.Itoa(boolInt(o.DBDev == "" && o.WALDev == ""))
	names := map[string]bool{}
	dev := func(prefix, path string, role int, size int64) {
		typ, rot := "ssd", "0"
		if d := findDisk(disks, path); d != nil && d.Type == "hdd" {
			typ, rot = "hdd", "1"
		}
		name := kernelName(path)
		names[name] = true
		m[prefix+"access_mode"] = "blk"
		m[prefix+"block_size"] = "4096"
		m[prefix+"dev_node"] = o.dmNode(role)
		m[prefix+"devices"] = name
		m[prefix+"driver"] = "KernelDevice"
		m[prefix+"optimal_io_size"] = "0"
		m[prefix+"partition_path"] = o.dmNode(role)
		m[prefix+"rotational"] = rot
		m[prefix+"size"] = strconv.FormatInt(size, 10)
		m[prefix+"support_discard"] = strconv.Itoa(boolInt(typ == "ssd"))
		m[prefix+"type"] = typ
	}
	dev("bluestore_bdev_", o.Dev, dmBlock, o.Size)
	m["rotational"] = m["bluestore_bdev_rotational"]
	m["default_device_class"] = m["bluestore_bdev_type"]
	m["journal_rotational"] = m["bluestore_bdev_rotational"]
	if o.DBDev != "" {
		dev("bluefs_db_", o.DBDev, dmDB, o.DBSize)
		m["journal_rotational"] = m["bluefs_db_rotational"]
	}
	if o.WALDev != "" {
		dev("bluefs_wal_", o.WALDev, dmWAL, o.WALSize)
		m["journal_rotational"] = m["bluefs_wal_rotational"]
	}
	list := make([]string, 0, len(names))
	for n := range names {
		list = append(list, n)
	}
	sort.Strings(list)
	m["devices"] = strings.Join(list, ",")
	var ids []string
	for _, n := range list {
		if d := findDisk(disks, n); d != nil && d.Serial != "" {
			ids = append(ids, n+"="+strings.ReplaceAll(d.Model, " ", "_")+"_"+d.Serial)
		}
	}
	m["device_ids"] = strings.Join(ids, ",")
	return m
}
