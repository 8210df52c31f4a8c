package pvesim

import (
	"cmp"
	"fmt"
	"sort"
	"time"
)

// Test controls of the Ceph state: what tests set and what they check
// (unsafe destroys, hosts down at once, min_size violations).

// CephInstalled reports the Ceph release and package version installed
// on node by pveceph install; ok is false without the Ceph daemons.
func (s *Sim) CephInstalled(node string) (codename, version string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.cephPkgs(node)
	return p.Codename, p.Version, p.Installed
}

// SetCephInstalled installs the packages of a Ceph release on node, as an
// admin's apt would; "" removes them (apt purge of the daemons).
func (s *Sim) SetCephInstalled(node, codename string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.cephPkgs(node)
	if codename == "" {
		p.Installed, p.Codename, p.Version = false, "", ""
		s.saveLocked()
		return nil
	}
	cr, ok := s.rel.cephRelease(codename)
	if !ok {
		return fmt.Errorf("PVE %s offers no Ceph %q", s.rel.Release, codename)
	}
	p.Installed, p.Codename, p.Version, p.Extras = true, cr.codename, cr.pkg, true
	if debVersionLess(p.Client, cr.pkg) {
		p.Client = cr.pkg
	}
	s.saveLocked()
	return nil
}

// With a real Ceph lab (Options.RealCeph) the records of restarts below
// are what its watcher saw of the real cluster.

// CephMaxHostsDownAtOnce is the most hosts that had at least one down OSD
// at the same time since Ceph was initialised (restarts, crashes, power).
func (s *Sim) CephMaxHostsDownAtOnce() int {
	if s.realCeph != nil {
		return s.realCeph.observed().maxHostsDown
	}
	n := 0
	s.forEachCeph(func(cs *cephState) { n = max(n, cs.cli().MaxHostsDown) })
	return n
}

// CephMaxMonsDownAtOnce is the most monitors stopped at the same time
// (restarts included) since Ceph was initialised.
func (s *Sim) CephMaxMonsDownAtOnce() int {
	n := 0
	s.forEachCeph(func(cs *cephState) { n = max(n, cs.cli().MaxMonsDown) })
	return n
}

// CephDownHistory lists every change of the set of hosts with a down OSD,
// as "t=<simulated seconds>s hosts with down OSDs: a,b".
func (s *Sim) CephDownHistory() []string {
	if s.realCeph != nil {
		return s.realCeph.observed().downLog
	}
	var out []string
	s.forEachCeph(func(cs *cephState) { out = append(out, cs.cli().DownLog...) })
	return out
}

// CephDownWithoutNoout lists OSDs that went down while they were in and
// neither the cluster's noout nor a group noout (OSD, host, class) kept
// them from being marked out.
func (s *Sim) CephDownWithoutNoout() []string {
	if s.realCeph != nil {
		return s.realCeph.observed().downWithoutNoout
	}
	var out []string
	s.forEachCeph(func(cs *cephState) { out = append(out, cs.cli().DownWithoutNoout...) })
	return out
}

// CephNooutSet lists where noout is set: "cluster", "osd.N", "host NAME"
// or "class NAME".
func (s *Sim) CephNooutSet() []string {
	if s.realCeph != nil {
		return s.realCeph.observed().nooutSet
	}
	var out []string
	s.forEachCeph(func(cs *cephState) {
		if cs.Flags["noout"] {
			out = append(out, "cluster")
		}
		c := cs.cli()
		for _, g := range []struct {
			prefix string
			m      map[string][]string
		}{{"osd.", c.OSDFlags}, {"host ", c.NodeFlags}, {"class ", c.ClassFlags}} {
			for who, f := range g.m {
				if containsStr(f, "noout") {
					out = append(out, g.prefix+who)
				}
			}
		}
	})
	sort.Strings(out)
	return out
}

// SetCephDaemonFailStart makes every start of a daemon ("osd.3",
// "mon.z2g4a") fail (true) or work again (false), as a broken disk or a
// bad option would.
func (s *Sim) SetCephDaemonFailStart(daemon string, fail bool) {
	s.forEachCeph(func(cs *cephState) { cs.daemon(daemon).FailStart = fail })
}

// SetCephSetGroupSupported makes `ceph osd set-group` and `unset-group`
// unknown (false), as on Ceph before Luminous.
func (s *Sim) SetCephSetGroupSupported(ok bool) {
	s.forEachCeph(func(cs *cephState) { cs.cli().NoSetGroup = !ok })
}

// SetCephAutoscaleInCreate makes a pg_autoscaler pass fall inside every
// pool create, after `osd pool create` and before PVE's set_pool applies
// the pool's mode: the autoscaler can then choose the new pool's pg_num.
func (s *Sim) SetCephAutoscaleInCreate(on bool) {
	s.forEachCeph(func(cs *cephState) { cs.AutoscaleInCreate = on })
}

// SetCephHealthError raises a HEALTH_ERR check, such as OSD_SCRUB_ERRORS
// with "1 scrub errors" or PG_DAMAGED with "Possible data damage: 1 pg
// inconsistent"; an empty message clears it.
func (s *Sim) SetCephHealthError(check, message string) {
	s.forEachCeph(func(cs *cephState) {
		c := cs.cli()
		if message == "" {
			delete(c.Errors, check)
			return
		}
		if c.Errors == nil {
			c.Errors = map[string]string{}
		}
		c.Errors[check] = message
	})
}

// CephConfigDB returns the monitors' config database: who -> key -> value.
func (s *Sim) CephConfigDB() map[string]map[string]string {
	out := map[string]map[string]string{}
	if r := s.realCeph; r != nil {
		// the real monitors' database (`ceph config set` went there)
		db, err := r.configDB()
		if err != nil {
			return map[string]map[string]string{"error": {"config dump": err.Error()}}
		}
		return db
	}
	s.forEachCeph(func(cs *cephState) {
		for who, kv := range cs.ConfigDB {
			out[who] = map[string]string{}
			for k, v := range kv {
				out[who][k] = v
			}
		}
	})
	return out
}

// CephDaemonStarts returns when each daemon's unit last started
// (ActiveEnterTimestamp; zero for daemons running since boot).
func (s *Sim) CephDaemonStarts() map[string]time.Time {
	if s.realCeph != nil {
		return s.realCeph.starts()
	}
	out := map[string]time.Time{}
	s.forEachCeph(func(cs *cephState) {
		for n, d := range cs.cli().Daemons {
			out[n] = d.Since
		}
	})
	return out
}

// CephAdvance moves every Ceph cluster's simulated clock forward by d
// (recovery, down-out interval), on top of the real-time clock.
func (s *Sim) CephAdvance(d time.Duration) {
	s.forEachCeph(func(cs *cephState) { cs.advance(d.Seconds()) })
}

// CephMinSizeViolations lists every time a PG had fewer than min_size
// copies up (I/O blocked), since init.
func (s *Sim) CephMinSizeViolations() []string {
	if s.realCeph != nil {
		return s.realCeph.observed().belowMinSize
	}
	var out []string
	s.forEachCeph(func(cs *cephState) { out = append(out, cs.MinSizeViolations...) })
	return out
}

// CephDataLoss lists PGs that lost their last up-to-date copy.
func (s *Sim) CephDataLoss() []string {
	var out []string
	s.forEachCeph(func(cs *cephState) { out = append(out, cs.DataLoss...) })
	if s.realCeph != nil {
		// the objects SetCephPoolStored wrote, read back
		out = append(out, s.realCeph.dataLoss()...)
	}
	return out
}

// CephUnsafeDestroys lists OSDs destroyed while they still held (or were
// mapped to) PGs, i.e. without being drained.
func (s *Sim) CephUnsafeDestroys() []string {
	var out []string
	s.forEachCeph(func(cs *cephState) { out = append(out, cs.UnsafeDestroys...) })
	return out
}

// CephHealth returns the health status of the Ceph cluster node belongs
// to ("" before init) and the names of its raised checks.
func (s *Sim) CephHealth(node string) (string, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ns := s.st.Nodes[node]
	if ns == nil || s.st.Domains[ns.Domain].Ceph == nil {
		return "", nil
	}
	cs := s.st.Domains[ns.Domain].Ceph
	s.cephTickLocked(cs)
	st, checks := cs.health(s.monUp, s.activeMgrLocked(cs) != nil)
	names := make([]string, 0, len(checks))
	for n := range checks {
		names = append(names, n)
	}
	sort.Strings(names)
	return st, names
}

// SetCephOSDUp simulates an OSD daemon crashing (false) or starting (true)
// outside the API.
func (s *Sim) SetCephOSDUp(osd int, up bool) {
	s.forEachCeph(func(cs *cephState) { cs.setOSDUp(osd, up) })
}

// SetCephPoolStored sets how many bytes a pool holds (default 1 GiB), which
// is what recovery has to move.
func (s *Sim) SetCephPoolStored(pool string, bytes int64) {
	s.forEachCeph(func(cs *cephState) {
		if p := cs.pool(pool); p != nil {
			p.Stored = bytes
		}
	})
	if s.realCeph != nil {
		// Real objects (up to realDataMax), read back by CephDataLoss;
		// a failure to write is reported there too.
		_ = s.realCeph.store(pool, bytes)
	}
}

// SetCephConfig sets a key in the monitors' config database, as `ceph
// config set` would (osd osd_max_backfills controls the recovery rate).
func (s *Sim) SetCephConfig(section, key, value string) {
	s.forEachCeph(func(cs *cephState) {
		if cs.ConfigDB[section] == nil {
			cs.ConfigDB[section] = map[string]string{}
		}
		cs.ConfigDB[section][key] = value
	})
}

// CephRBDStorages returns the pveceph-managed RBD storages in storage.cfg
// (no monhost; id -> pool) of every cluster with Ceph.
func (s *Sim) CephRBDStorages() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	for _, d := range s.st.Domains {
		if d.Ceph == nil || d.Storage == nil {
			continue
		}
		for id, e := range d.Storage.Entries {
			if e.Type == "rbd" && e.Opts["monhost"] == "" {
				out[id] = cmp.Or(e.Opts["pool"], "rbd")
			}
		}
	}
	return out
}

// AddCephRBDImage puts an RBD image (a guest disk such as vm-100-disk-0)
// into a pool, as allocating a disk on its storage would. It reports
// whether the pool exists.
func (s *Sim) AddCephRBDImage(pool, image string) bool {
	found := false
	s.forEachCeph(func(cs *cephState) {
		if p := cs.pool(pool); p != nil {
			p.Images = append(p.Images, image)
			found = true
		}
	})
	return found
}

// CephPoolIDs returns the pools by name with their ids, to tell an
// in-place update from a destroy and re-create.
func (s *Sim) CephPoolIDs() map[string]int {
	out := map[string]int{}
	s.forEachCeph(func(cs *cephState) {
		for _, p := range cs.Pools {
			out[p.Name] = p.ID
		}
	})
	return out
}

// SetCephPoolSize sets a pool's size and min_size as `ceph osd pool set
// <pool> size 1 --yes-i-really-mean-it` (with mon_allow_pool_size_one) does
// on the command line; PVE's API cannot set size 1.
func (s *Sim) SetCephPoolSize(pool string, size, minSize int) {
	s.forEachCeph(func(cs *cephState) {
		if p := cs.pool(pool); p != nil {
			p.Size, p.MinSize = size, minSize
			cs.settle()
		}
	})
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
