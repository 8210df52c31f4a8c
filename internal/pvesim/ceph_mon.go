package pvesim

import (
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Ceph monitors and managers after pve-manager PVE/API2/Ceph/{MON,MGR}.pm.

func registerCephMon(t *routeTable) {
	node := schema{"node": nodeParam()}
	daemonID := func() param { p := pStr().req(); p.pattern = cephDaemonIDRE; return p }
	optDaemonID := func() param { p := pStr().maxLen(200); p.pattern = cephDaemonIDRE; return p }
	t.add("GET", "/nodes/{node}/ceph/mon", &method{params: node, handler: cephListMon})
	t.add("POST", "/nodes/{node}/ceph/mon/{monid}", &method{params: schema{"node": nodeParam(), "monid": optDaemonID(), "mon-address": pFmt("ip-list")}, handler: cephCreateMon})
	t.add("DELETE", "/nodes/{node}/ceph/mon/{monid}", &method{params: schema{"node": nodeParam(), "monid": daemonID()}, handler: cephDestroyMon})
	t.add("GET", "/nodes/{node}/ceph/mgr", &method{params: node, handler: cephListMgr})
	t.add("POST", "/nodes/{node}/ceph/mgr/{id}", &method{params: schema{"node": nodeParam(), "id": optDaemonID()}, handler: cephCreateMgr})
	t.add("DELETE", "/nodes/{node}/ceph/mgr/{id}", &method{params: schema{"node": nodeParam(), "id": daemonID()}, handler: cephDestroyMgr})
}

func cephListMon(c *call) (any, *apiError) {
	cs := c.s.cephDomain(c).Ceph
	if cs == nil {
		return nil, die(cephNotInited)
	}
	c.s.cephTickLocked(cs)
	// Without quorum there is no RADOS connection: PVE lists the monitors
	// it knows from ceph.conf with state unknown.
	quorum := len(cs.Mons) > 0 && c.s.monQuorum(cs, nil)
	out := []map[string]any{}
	for _, m := range cs.sortedMons() {
		e := map[string]any{"name": m.ID, "host": m.Host, "service": 1, "direxists": 1}
		switch {
		case !quorum:
			e["addr"], e["state"] = m.Addr, "unknown"
		default:
			e["addr"], e["rank"] = m.Addr+":6789/0", m.Rank
			e["ceph_version"], e["ceph_version_short"] = "ceph version 19.2.3 (pve) squid (stable)", "19.2.3"
			if c.s.monUp(m) {
				e["state"], e["quorum"] = "running", 1
			} else {
				e["state"] = "stopped"
			}
		}
		out = append(out, e)
	}
	// A monitor outside the cluster's monmap (see cephCreateMon) is known
	// only from ceph.conf and its systemd unit.
	ids := make([]string, 0, len(cs.OrphanMons))
	for id := range cs.OrphanMons {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		m := cs.OrphanMons[id]
		out = append(out, map[string]any{"name": m.ID, "host": m.Host, "addr": m.Addr, "service": 1, "direxists": 1, "state": "stopped"})
	}
	return out, nil
}

func cephCreateMon(c *call) (any, *apiError) {
	s := c.s
	cs := s.cephDomain(c).Ceph
	if cs == nil {
		return nil, die(cephNotInited)
	}
	node := c.params["node"]
	monid := c.params["monid"]
	if monid == "" {
		monid = node
	}
	ips, err := s.monIPs(cs, node, c.params["mon-address"])
	if err != nil {
		return nil, err
	}
	check := func() error {
		used := map[string]bool{}
		for _, h := range strings.Fields(cs.Conf["global"]["mon_host"]) {
			used[h] = true
		}
		for _, m := range cs.allMons() {
			used[m.Addr] = true
		}
		for _, ip := range ips {
			if used[ip] {
				return fmt.Errorf("monitor address '%s' already in use", ip)
			}
		}
		if cs.Mons[monid] != nil || cs.OrphanMons[monid] != nil {
			return fmt.Errorf("monitor '%s' already exists", monid)
		}
		return nil
	}
	if e := check(); e != nil {
		return nil, die("%s", e.Error())
	}
	// MON.pm decides before its worker, outside the ceph.conf lock, whether
	// this is the first monitor: no RADOS connection and no mon_host. A
	// worker that then finds monitors (another create won the lock) still
	// bootstraps a monmap of its own, so its monitor never joins them.
	connected := len(cs.Mons) > 0
	first := !connected && len(cs.OrphanMons) == 0 && cs.Conf["global"]["mon_host"] == ""
	if connected && !s.monQuorum(cs, nil) {
		return nil, die("Could not connect to ceph cluster despite configured monitors")
	}
	d := s.cephDomain(c)
	return s.startTaskLocked(c, "cephcreatemon", "mon."+monid, func(t *task) (int, error) {
		if err := s.cephConfLockErr(d); err != nil {
			return 0, err
		}
		if e := check(); e != nil {
			return 0, e
		}
		m := &cephMon{ID: monid, Host: node, Addr: ips[0], Rank: len(cs.Mons)}
		if !connected && len(cs.Mons) > 0 {
			if cs.OrphanMons == nil {
				cs.OrphanMons = map[string]*cephMon{}
			}
			m.Rank = 0
			cs.OrphanMons[monid] = m
		} else {
			cs.Mons[monid] = m
		}
		g := cs.Conf["global"]
		var hosts []string
		if h := g["mon_host"]; h != "" {
			hosts = strings.Fields(h)
		}
		g["mon_host"] = strings.Join(append(hosts, ips[0]), " ")
		if !connected {
			a, _ := netip.ParseAddr(ips[0])
			g["ms_bind_ipv4"], g["ms_bind_ipv6"] = strconv.FormatBool(a.Is4()), strconv.FormatBool(a.Is6())
		}
		cs.Conf["mon."+monid] = map[string]string{"public_addr": ips[0]}
		cs.lastReal = time.Now()
		t.Log = append(t.Log, "creating new monitor keyring", "monmaptool: monmap file /tmp/monmap", "Created symlink /etc/systemd/system/ceph-mon.target.wants/ceph-mon@"+monid+".service -> /lib/systemd/system/ceph-mon@.service.")
		// The first monitor also gets a manager, named after the node.
		if first && cs.Mgrs[node] == nil {
			cs.Mgrs[node] = &cephMgr{ID: node, Host: node}
			t.Log = append(t.Log, "creating manager directory '/var/lib/ceph/mgr/ceph-"+node+"'", "creating keys for 'mgr."+node+"'")
		}
		cs.settle()
		return 0, nil
	}), nil
}

// monIPs picks the monitor address like MON.pm's $find_mon_ips.
func (s *Sim) monIPs(cs *cephState, node, override string) ([]string, *apiError) {
	pub := cs.Conf["global"]["public_network"]
	local := s.localIPs(node)
	if override != "" {
		var out []string
		for _, ip := range splitList(override) {
			a, err := netip.ParseAddr(ip)
			ok := err == nil && containsAddr(local, a)
			if ok && pub != "" {
				ok = containsAddr(ipsIn(local, pub), a)
			}
			if !ok {
				return nil, die("Specified monitor IP '%s' not configured or up on %s!", ip, node)
			}
			out = append(out, a.String())
		}
		return out, nil
	}
	if pub == "" {
		return []string{s.hostIP(node)}, nil
	}
	var out []string
	for _, net := range splitList(pub) {
		in := ipsIn(local, net)
		switch len(in) {
		case 0:
			return nil, die("No active IP found for the requested ceph public network '%s' on node '%s'", net, node)
		case 1:
			out = append(out, in[0].String())
		default:
			var l []string
			for _, a := range in {
				l = append(l, a.String())
			}
			return nil, die("Multiple IPs for ceph public network '%s' detected on %s:\n%s\nuse 'mon-address' to specify one of them.", net, node, strings.Join(l, "\n"))
		}
	}
	return out, nil
}

// cephDestroyMon is MON.pm destroymon: its checks run before the worker
// (a 500 to the caller) and again inside it. Like Ceph's `mon remove` it
// does not look at quorum: removing a monitor in quorum while another is
// down leaves the rest without a majority (see cmd-safety, `mon ok-to-rm`).
func cephDestroyMon(c *call) (any, *apiError) {
	s := c.s
	cs, err := s.cephLocked(c)
	if err != nil {
		return nil, err
	}
	monid, node := c.params["monid"], c.params["node"]
	check := func() error {
		m := cs.Mons[monid]
		if m == nil {
			m = cs.OrphanMons[monid]
		}
		if m == nil {
			return fmt.Errorf("no such monitor id '%s'", monid)
		}
		if m.Host != node {
			return fmt.Errorf("monitor filesystem '/var/lib/ceph/mon/ceph-%s' does not exist on this node", monid)
		}
		if len(cs.Mons) <= 1 {
			return fmt.Errorf("can't remove last monitor")
		}
		return nil
	}
	if e := check(); e != nil {
		return nil, die("%s", e.Error())
	}
	d := s.cephDomain(c)
	return s.startTaskLocked(c, "cephdestroymon", "mon."+monid, func(t *task) (int, error) {
		if err := s.cephConfLockErr(d); err != nil {
			return 0, err
		}
		s.cephTickLocked(cs)
		if !s.monQuorum(cs, nil) {
			return 0, fmt.Errorf("got timeout")
		}
		if e := check(); e != nil {
			return 0, e
		}
		m := cs.Mons[monid]
		if m == nil {
			m = cs.OrphanMons[monid]
		}
		delete(cs.Mons, monid)
		delete(cs.OrphanMons, monid)
		delete(cs.Conf, "mon."+monid)
		var hosts []string
		for _, h := range strings.Fields(cs.Conf["global"]["mon_host"]) {
			if h != m.Addr {
				hosts = append(hosts, h)
			}
		}
		cs.Conf["global"]["mon_host"] = strings.Join(hosts, " ")
		for i, x := range cs.sortedMons() {
			x.Rank = i
		}
		cs.settle()
		return 0, nil
	}), nil
}

func cephListMgr(c *call) (any, *apiError) {
	cs := c.s.cephDomain(c).Ceph
	if cs == nil {
		return nil, die(cephNotInited)
	}
	c.s.cephTickLocked(cs)
	active := c.s.activeMgrLocked(cs)
	ids := make([]string, 0, len(cs.Mgrs))
	for id := range cs.Mgrs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := []map[string]any{}
	for _, id := range ids {
		m := cs.Mgrs[id]
		state := "stopped"
		switch {
		case m == active:
			state = "active"
		case !m.Stopped && !c.s.offline[m.Host]:
			state = "standby"
		}
		out = append(out, map[string]any{"name": id, "host": m.Host, "addr": c.s.hostIP(m.Host), "state": state})
	}
	return out, nil
}

func (s *Sim) activeMgrLocked(cs *cephState) *cephMgr {
	ids := make([]string, 0, len(cs.Mgrs))
	for id := range cs.Mgrs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if m := cs.Mgrs[id]; !m.Stopped && !s.offline[m.Host] {
			return m
		}
	}
	return nil
}

func cephCreateMgr(c *call) (any, *apiError) {
	s := c.s
	cs, err := s.cephLocked(c)
	if err != nil {
		return nil, err
	}
	id, node := c.params["id"], c.params["node"]
	if id == "" {
		id = node
	}
	return s.startTaskLocked(c, "cephcreatemgr", "mgr."+id, func(t *task) (int, error) {
		if m := cs.Mgrs[id]; m != nil && m.Host == node {
			return 0, fmt.Errorf("ceph manager directory '/var/lib/ceph/mgr/ceph-%s' already exists", id)
		}
		if cs.Mgrs[id] != nil {
			return 0, fmt.Errorf("mgr.%s already exists on another node", id)
		}
		cs.Mgrs[id] = &cephMgr{ID: id, Host: node}
		t.Log = append(t.Log, "creating manager directory '/var/lib/ceph/mgr/ceph-"+id+"'", "creating keys for 'mgr."+id+"'")
		return 0, nil
	}), nil
}

func cephDestroyMgr(c *call) (any, *apiError) {
	s := c.s
	cs, err := s.cephLocked(c)
	if err != nil {
		return nil, err
	}
	id, node := c.params["id"], c.params["node"]
	return s.startTaskLocked(c, "cephdestroymgr", "mgr."+id, func(t *task) (int, error) {
		if m := cs.Mgrs[id]; m == nil || m.Host != node {
			return 0, fmt.Errorf("ceph manager directory '/var/lib/ceph/mgr/ceph-%s' not found", id)
		}
		delete(cs.Mgrs, id)
		return 0, nil
	}), nil
}
