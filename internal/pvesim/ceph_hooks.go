package pvesim

import (
	"fmt"
	"sort"
	"time"
)

// Test hooks.

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

// CephMaxHostsDownAtOnce is the most hosts that had at least one down OSD
// at the same time since Ceph was initialised (restarts, crashes, power).
func (s *Sim) CephMaxHostsDownAtOnce() int {
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
	var out []string
	s.forEachCeph(func(cs *cephState) { out = append(out, cs.cli().DownLog...) })
	return out
}

// CephDownWithoutNoout lists OSDs that went down while they were in and
// neither the cluster's noout nor a group noout (OSD, host, class) kept
// them from being marked out.
func (s *Sim) CephDownWithoutNoout() []string {
	var out []string
	s.forEachCeph(func(cs *cephState) { out = append(out, cs.cli().DownWithoutNoout...) })
	return out
}

// CephNooutSet lists where noout is set: "cluster", "osd.N", "host NAME"
// or "class NAME".
func (s *Sim) CephNooutSet() []string {
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
	out := map[string]time.Time{}
	s.forEachCeph(func(cs *cephState) {
		for n, d := range cs.cli().Daemons {
			out[n] = d.Since
		}
	})
	return out
}
