package pvesim

import (
	"hash/fnv"
	"strings"
)

// How long PVE's workers and the nodes' programs take on the reference lab's
// hardware (three nodes, NVMe OSDs, 10 GbE), in PVE seconds. With
// Options.TimeScale > 0 every task and timed program takes
// TimeScale × its PVE seconds of real time, so a benchmark sees PVE's
// timeline shrunk evenly and can compare a client's wall time with the
// critical path of the tasks it started (internal/bench). Without
// TimeScale tasks take Options.TaskDuration, as tests want.
//
// Sources, per entry: real-lab = measured on this project's real Ceph 16
// lab (../shared/notes/real-lab/README.md); PVE = what the worker does in
// PVE's code (pve-manager, qemu-server, pve-cluster), timed by the steps it
// runs. Every figure gets a deterministic ±15% jitter from the task's UPID
// so that equal tasks do not finish in lockstep, as on real nodes.
var taskPVESeconds = map[string]float64{
	// qemu-server: qmcreate locks the config, allocates the disks (added
	// per disk below) and writes the config: ~1 s without disks.
	"qmcreate": 1.0,
	// qm start: the QEMU process forks, the QMP socket answers: 1.5–3 s
	// for a small VM without passthrough (qemu-server's vm_start).
	"qmstart":    2.0,
	"qmstop":     1.0,
	"qmshutdown": 8.0, // ACPI shutdown of a Linux guest
	"qmreboot":   10.0,
	// POST config runs in a worker only to allocate disks; the rest is a
	// config write (0.2 s) — disk allocation is added per disk.
	"qmconfig":  0.2,
	"qmdestroy": 1.0,
	"resize":    1.0,
	"qmmove":    5.0,
	// Online migration of a small VM over 10 GbE: ~8 s (RAM copy + cutover).
	"qmigrate": 8.0,
	"hastart":  0.2, "hastop": 0.2, "hamigrate": 0.2, // the CRM does the work (haRoundSeconds)
	// ifreload -a of a node with a bond, a VLAN-aware bridge and VLANs:
	// 2–4 s (ifupdown2 computes the dependency graph and applies netlink
	// changes; real-lab: a namespace with a bridge and veths reloads in ~1 s).
	"srvreload": 3.0,
	// pvecm create: corosync.conf, authkey, pve-cluster restart: ~5 s.
	"clustercreate": 5.0,
	// pvecm add over the API: the node stops pve-cluster, takes the
	// cluster's files, restarts pve-cluster and corosync and waits for
	// quorum: 15–25 s (PVE's join worker).
	"clusterjoin": 20.0,
	// pveceph mon create: monmap, keyring, mkfs, unit start, waits for the
	// quorum: ~8 s. mgr create: keyring + unit start: ~4 s.
	"cephcreatemon":  8.0,
	"cephdestroymon": 4.0,
	"cephcreatemgr":  4.0,
	"cephdestroymgr": 3.0,
	// pveceph osd create on NVMe: ceph-volume lvm create (prepare + activate,
	// bluestore mkfs): 20–30 s (real-lab: adding an OSD took ~6 s to boot
	// after ceph-volume on sparse files; real disks zap and mkfs longer).
	"cephcreateosd":  25.0,
	"cephdestroyosd": 8.0,
	// real-lab: pool create 0.7–1.0 s; PVE also sets size, min_size,
	// application (~1 s each).
	"cephcreatepool":  3.0,
	"cephsetpool":     1.0,
	"cephdestroypool": 2.0,
	"cephsetflags":    1.0, // real-lab: osd set noout 0.6–0.8 s
	"srvstart":        2.0,
	"srvstop":         2.0,
	"srvrestart":      2.0,
	"wipedisk":        3.0,
	"lvmthincreate":   3.0,
	"lvmthinremove":   2.0,
	"zfscreate":       3.0,
	"zfsremove":       2.0,
	"imgdel":          1.0,
	"acmenewcert":     15.0,
	"acmerenew":       15.0,
	"acmerevoke":      5.0,
}

// diskAllocPVESeconds is what allocating one new disk adds to a qmcreate
// or qmconfig worker, by storage type: rbd create 2.0 s (real-lab), an LVM
// thin volume ~0.5 s (lvcreate), a qcow2 file ~0.3 s (qemu-img create), a
// zvol ~0.5 s.
var diskAllocPVESeconds = map[string]float64{
	"rbd": 2.0, "lvmthin": 0.5, "lvm": 0.5, "zfspool": 0.5, "dir": 0.3, "nfs": 0.5, "cifs": 0.5, "cephfs": 0.5,
}

// programPVESeconds is how long a node program runs before it answers, for
// the programs whose time matters to an apply; unlisted programs answer at
// once (cat, ceph status, systemctl show: tens of milliseconds).
var programPVESeconds = map[string]float64{
	// pveceph install from the no-subscription repository: apt fetches
	// and unpacks ~60 packages (~100 MB): 30–60 s on a 1 Gb/s uplink.
	"pveceph install": 30.0,
	// tuned-adm profile: applies sysctl, CPU governor, disk settings: ~1 s.
	"tuned-adm profile": 1.1,
	// real-lab: `apt-get install -y fio ethtool` took 4.4 s.
	"apt-get install": 4.4,
	"apt-get update":  3.0,
	// fio's benchmark of a disk: the job's runtime (PVE seconds) is what
	// the command asks for; the wrapper spends ~1 s more.
	"fio": 1.0,
	// ifreload over SSH (the dead-man path) as the API's srvreload.
	"ifreload": 3.0,
	// update-ca-certificates rebuilds the bundle: ~1 s.
	"update-ca-certificates": 1.0,
}

// haRoundSeconds is the CRM's and LRM's loop period: a new or changed HA
// resource is acted on at the next round (pve-ha-manager: 10 s).
const haRoundSeconds = 10.0

// taskSeconds is the PVE seconds a task of typ started by c takes.
func (s *Sim) taskSeconds(c *call, typ string) float64 {
	sec := taskPVESeconds[typ]
	if sec == 0 {
		sec = 1.0
	}
	if (typ == "qmcreate" || typ == "qmconfig") && c != nil {
		for k, v := range c.params {
			if !isDriveKey(k) {
				continue
			}
			d, msg := parseDrive(k, v)
			if msg != "" {
				continue
			}
			m := newDiskRE.FindStringSubmatch(d.file())
			if m == nil {
				continue
			}
			store := m[2]
			if store == "" {
				store = c.params["storage"]
			}
			sec += s.diskAllocSecondsLocked(c.params["node"], store)
		}
	}
	return sec
}

func (s *Sim) diskAllocSecondsLocked(node, store string) float64 {
	if e, err := s.storageEntryLocked(node, store); err == nil {
		if d, ok := diskAllocPVESeconds[e.Type]; ok {
			return d
		}
	}
	return 0.5
}

// programSeconds is the PVE seconds a node program runs for argv.
func programSeconds(argv []string) float64 {
	if len(argv) == 0 {
		return 0
	}
	base := argv[0][strings.LastIndex(argv[0], "/")+1:]
	if len(argv) > 1 {
		if d, ok := programPVESeconds[base+" "+argv[1]]; ok {
			return d
		}
	}
	return programPVESeconds[base]
}

// jitter is a deterministic factor in [0.85, 1.15] from key.
func jitter(key string) float64 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	return 0.85 + 0.3*float64(h.Sum32()%1000)/999
}
