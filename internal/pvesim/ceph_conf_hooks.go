package pvesim

import "sort"

// Hooks for the Ceph cluster configuration and monitors (pve_ceph_cluster,
// pve_ceph_monitor tests).

// allMons are the monitors of the monmap and those outside it.
func (cs *cephState) allMons() []*cephMon {
	out := cs.sortedMons()
	ids := make([]string, 0, len(cs.OrphanMons))
	for id := range cs.OrphanMons {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		out = append(out, cs.OrphanMons[id])
	}
	return out
}

// SetCephConf edits /etc/pve/ceph.conf as an administrator would by hand
// (PVE's API has no call that writes it): value "" deletes the key. It
// does nothing before init.
func (s *Sim) SetCephConf(section, key, value string) {
	s.forEachCeph(func(cs *cephState) {
		if value == "" {
			delete(cs.Conf[section], key)
			return
		}
		if cs.Conf[section] == nil {
			cs.Conf[section] = map[string]string{}
		}
		cs.Conf[section][key] = value
	})
}

// CephSplitMonitors lists monitors that bootstrapped a monmap of their own
// because their creation raced another one (PVE decides "first monitor"
// outside its ceph.conf lock); they never join the cluster's quorum.
func (s *Sim) CephSplitMonitors() []string {
	var out []string
	s.forEachCeph(func(cs *cephState) {
		for _, m := range cs.allMons()[len(cs.Mons):] {
			out = append(out, m.ID+"@"+m.Host)
		}
	})
	return out
}

// SetCephMonitorUp simulates a monitor daemon crashing (false) or starting
// (true) outside the API.
func (s *Sim) SetCephMonitorUp(id string, up bool) {
	s.forEachCeph(func(cs *cephState) {
		if m := cs.Mons[id]; m != nil {
			m.Stopped = !up
			cs.settle()
		}
	})
}
