package pvesim

import (
	"fmt"
	"sort"
	"strings"
)

// Node disks after pve-storage PVE/API2/Disks.pm and PVE::Diskmanage: the
// list with usage and OSD ids, and wipedisk (root@pam only).

type simDisk struct {
	DevPath    string `json:"devpath"`
	Model      string `json:"model"`
	Vendor     string `json:"vendor,omitempty"`
	Serial     string `json:"serial"`
	WWN        string `json:"wwn,omitempty"`
	Size       int64  `json:"size"`
	Type       string `json:"type"` // ssd, hdd, nvme
	RPM        int    `json:"rpm"`
	Wearout    int    `json:"wearout"` // percent left
	GPT        bool   `json:"gpt,omitempty"`
	Partitions bool   `json:"partitions,omitempty"`
	LVM        bool   `json:"lvm,omitempty"`
	Boot       bool   `json:"boot,omitempty"` // the installer's disk: BIOS boot, ESP, LVM
	// VG and ZPool are the LVM volume group or ZFS pool on the disk
	// (storage_disks.go).
	VG    string `json:"vg,omitempty"`
	ZPool string `json:"zpool,omitempty"`
	// PLP and SyncWriteIOPS come from a lab file (LabDisk): power-loss
	// protection, and what fio measures with 4K QD1 --fsync=1 writes
	// (cli_fio.go); 0 = the drive family's model.
	PLP           bool `json:"plp,omitempty"`
	SyncWriteIOPS int  `json:"sync_write_iops,omitempty"`
}

const (
	size120G = 120034123776
	size480G = 480103981056
	size512G = 512110190592
)

// defaultDisks are the reference lab's: a 120 GB Intel D3-S3510 boot SSD,
// Intel DC S3500 and S4510 480 GB data SSDs, and a 512 GB consumer QLC NVMe
// (Intel 660p on two nodes, Samsung PM981a on the third).
func defaultDisks(idx int) []*simDisk {
	sn := func(prefix string, n int) string { return fmt.Sprintf("%s%04d%02d", prefix, 4711+idx*13, n) }
	nvme := &simDisk{DevPath: "/dev/nvme0n1", Model: "INTEL SSDPEKNW512G8", Serial: sn("BTNH", 4) + "512A", Size: size512G, Type: "nvme", Wearout: 93}
	if idx%3 == 2 {
		nvme = &simDisk{DevPath: "/dev/nvme0n1", Model: "SAMSUNG MZVLB512HBJQ-00000", Serial: sn("S4GENX0N", 4), Size: size512G, Type: "nvme", Wearout: 97}
	}
	return []*simDisk{
		{DevPath: "/dev/sda", Model: "INTEL_SSDSC2BB120G6", Vendor: "ATA", Serial: sn("BTWL", 1) + "120LGN", WWN: fmt.Sprintf("0x55cd2e414d%06x", 0x100+idx), Size: size120G, Type: "ssd", Wearout: 98, GPT: true, Partitions: true, LVM: true, Boot: true},
		{DevPath: "/dev/sdb", Model: "INTEL_SSDSC2BB480G4", Vendor: "ATA", Serial: sn("BTWL", 2) + "480QGN", WWN: fmt.Sprintf("0x55cd2e404b%06x", 0x200+idx), Size: size480G, Type: "ssd", Wearout: 96},
		{DevPath: "/dev/sdc", Model: "INTEL_SSDSC2KB480G8", Vendor: "ATA", Serial: sn("PHYF", 3) + "480BGN", WWN: fmt.Sprintf("0x55cd2e4150%06x", 0x300+idx), Size: size480G, Type: "ssd", Wearout: 100},
		nvme,
	}
}

// nodeDisks returns the node's disks, creating the lab's default set.
func (s *Sim) nodeDisks(ns *nodeState) []*simDisk {
	if ns.Disks == nil {
		ns.Disks = defaultDisks(s.nodeIndex(ns.Name))
	}
	return ns.Disks
}

func findDisk(disks []*simDisk, dev string) *simDisk {
	if !strings.HasPrefix(dev, "/dev/") {
		dev = "/dev/" + dev
	}
	for _, d := range disks {
		if d.DevPath == dev {
			return d
		}
	}
	return nil
}

// diskOSDs lists the Ceph OSDs on a node's disk.
func (s *Sim) diskOSDs(ns *nodeState, d *simDisk) []int {
	cs := s.st.Domains[ns.Domain].Ceph
	if cs == nil {
		return nil
	}
	var out []int
	for _, id := range cs.osdIDs() {
		o := cs.OSDs[id]
		if o.Host == ns.Name && (o.Dev == d.DevPath || o.DBDev == d.DevPath || o.WALDev == d.DevPath) {
			out = append(out, id)
		}
	}
	return out
}

// diskRoles is what Diskmanage's get_ceph_volume_infos reads from the LVM
// tags on a disk: the OSDs whose data (block) LV lives there, in id order,
// how many block.db and block.wal LVs it holds, and whether any data LV is
// dm-crypt encrypted.
func (s *Sim) diskRoles(ns *nodeState, d *simDisk) (block []int, db, wal int, encrypted bool) {
	cs := s.st.Domains[ns.Domain].Ceph
	if cs == nil {
		return nil, 0, 0, false
	}
	for _, id := range cs.osdIDs() {
		o := cs.OSDs[id]
		if o.Host != ns.Name {
			continue
		}
		if o.Dev == d.DevPath {
			block = append(block, id)
			encrypted = encrypted || o.Encrypted
		}
		if o.DBDev == d.DevPath {
			db++
		}
		if o.WALDev == d.DevPath {
			wal++
		}
	}
	return block, db, wal, encrypted
}

// diskUsed is Diskmanage's "used": "" when the disk is free.
func (s *Sim) diskUsed(ns *nodeState, d *simDisk) string {
	switch {
	case d.Boot:
		return "BIOS boot"
	case d.ZPool != "":
		return "ZFS"
	case len(s.diskOSDs(ns, d)) > 0, d.LVM:
		return "LVM"
	case d.Partitions:
		return "partitions"
	}
	return ""
}

func registerDisks(t *routeTable) {
	t.add("GET", "/nodes/{node}/disks/list", &method{params: schema{
		"node": nodeParam(), "include-partitions": pBool(), "skipsmart": pBool(), "type": pEnum("unused", "journal_disks"),
	}, handler: listDisks})
	t.add("PUT", "/nodes/{node}/disks/wipedisk", &method{rootOnly: true, params: schema{
		"node": nodeParam(), "disk": pPattern(`^/dev/[a-zA-Z0-9\/]+$`).req(),
	}, handler: wipeDisk})
}

func listDisks(c *call) (any, *apiError) {
	s := c.s
	ns := c.node()
	if cs := s.st.Domains[ns.Domain].Ceph; cs != nil {
		s.cephTickLocked(cs)
	}
	out := []map[string]any{}
	disks := append([]*simDisk(nil), s.nodeDisks(ns)...)
	sort.Slice(disks, func(i, j int) bool { return disks[i].DevPath < disks[j].DevPath })
	for _, d := range disks {
		used := s.diskUsed(ns, d)
		osds, dbs, wals, encrypted := s.diskRoles(ns, d)
		switch c.params["type"] {
		case "unused":
			if used != "" {
				continue
			}
		case "journal_disks":
			// API2/Disks.pm: no OSD data disks, and only LVM or GPT partitions.
			if len(osds) > 0 || (used != "" && used != "LVM" && (used != "partitions" || !d.GPT)) {
				continue
			}
		}
		e := map[string]any{
			"devpath": d.DevPath, "model": d.Model, "serial": d.Serial, "size": d.Size, "type": d.Type,
			"rpm": d.RPM, "gpt": boolInt(d.GPT), "mounted": boolInt(d.Boot), "osdid": -1,
			"by_id_link": "/dev/disk/by-id/" + strings.ReplaceAll(d.Model, " ", "_") + "_" + d.Serial,
		}
		if d.Vendor != "" {
			e["vendor"] = d.Vendor
		}
		if d.WWN != "" {
			e["wwn"] = d.WWN
		}
		// Diskmanage reads a wear level only on ssd and nvme (is_ssdlike).
		e["wearout"] = "N/A"
		if c.params["skipsmart"] != "1" {
			e["health"] = "PASSED"
			if d.Type == "ssd" || d.Type == "nvme" {
				e["wearout"] = d.Wearout
			}
		}
		if used != "" {
			e["used"] = used
		}
		// Diskmanage: osdid is the last OSD found (ids of a disk in order),
		// osdid-list all of them; bluestore and osdencrypted only on OSD data
		// disks; db and wal count the LVs of other OSDs' block.db/block.wal.
		if len(osds) > 0 {
			e["osdid"] = osds[len(osds)-1]
			e["osdid-list"] = osds
			e["bluestore"] = 1
			e["osdencrypted"] = boolInt(encrypted)
		} else {
			e["osdid-list"] = nil
		}
		if dbs > 0 {
			e["db"] = dbs
		}
		if wals > 0 {
			e["wal"] = wals
		}
		out = append(out, e)
	}
	return out, nil
}

func wipeDisk(c *call) (any, *apiError) {
	s := c.s
	ns := c.node()
	dev := c.params["disk"]
	d := findDisk(s.nodeDisks(ns), dev)
	if d == nil {
		return nil, die("%s: no such block device", dev)
	}
	if d.Boot {
		return nil, die("disk/partition '%s' is mounted", dev)
	}
	if len(s.diskOSDs(ns, d)) > 0 || s.diskHeld(ns, d) {
		return nil, die("disk/partition '%s' has a holder", dev)
	}
	return s.startTaskLocked(c, "wipedisk", strings.TrimPrefix(dev, "/dev/"), func(t *task) (int, error) {
		t.Log = append(t.Log, fmt.Sprintf("wiping disk/partition: %s", dev), "200+0 records in", "200+0 records out")
		d.GPT, d.Partitions, d.LVM = false, false, false
		return 0, nil
	}), nil
}
