package pvesim

import (
	"cmp"
	"fmt"
	"math"
	"net/netip"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Ceph after pve-manager PVE/API2/Ceph.pm, Ceph/{MON,MGR,OSD,Pool}.pm and
// Cluster/Ceph.pm. Ceph state is cluster-wide (authDomain.Ceph: ceph.conf
// lives in /etc/pve); the health model is in ceph_model.go. `pveceph
// install` is not in the API: Ceph counts as installed everywhere.

const (
	cephNotInited = "pveceph configuration not initialized - missing '/etc/pve/ceph.conf', missing '/etc/pve/ceph'"
	cephPoolRE    = `^[^:/\s]+$`
)

var (
	cephDaemonIDRE = regexp.MustCompile(`^[a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?$`)
	cephServiceRE  = regexp.MustCompile(`^(ceph|mon|mds|osd|mgr)(\.[a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?)?$`)
	cephCfgKeysRE  = regexp.MustCompile(`^(?i:[0-9a-z\-_.]+:[0-9a-zA-Z\-_]+)(?:[;, ](?i:[0-9a-z\-_.]+:[0-9a-zA-Z\-_]+))*$`)
	targetSizeRE   = regexp.MustCompile(`^(\d+(\.\d+)?)([KMGT])?$`)
	cephFlagNames  = []string{"nobackfill", "nodeep-scrub", "nodown", "noin", "noout", "norebalance", "norecover", "noscrub", "notieragent", "noup", "pause"}
	cephFlagDescr  = map[string]string{
		"nobackfill": "Backfilling of PGs is suspended.", "nodeep-scrub": "Deep Scrubbing is disabled.",
		"nodown":      "OSD failure reports are being ignored, such that the monitors will not mark OSDs down.",
		"noin":        "OSDs that were previously marked out will not be marked back in when they start.",
		"noout":       "OSDs will not automatically be marked out after the configured interval.",
		"norebalance": "Rebalancing of PGs is suspended.", "norecover": "Recovery of PGs is suspended.",
		"noscrub": "Scrubbing is disabled.", "notieragent": "Cache tiering activity is suspended.",
		"noup": "OSDs are not allowed to start.", "pause": "Pauses read and writes.",
	}
)

func pPattern(re string) param {
	p := pStr()
	p.pattern = regexp.MustCompile(re)
	return p
}

func cidrParam() param {
	p := pFmt("CIDR").maxLen(128)
	p.formatFn = func(v string) string {
		if !validCIDR(v, true) && !validCIDR(v, false) {
			return "value does not look like a valid CIDR network"
		}
		return ""
	}
	return p
}

func registerCeph(t *routeTable) {
	node := schema{"node": nodeParam()}
	daemonID := func() param { p := pStr().req(); p.pattern = cephDaemonIDRE; return p }
	optDaemonID := func() param { p := pStr().maxLen(200); p.pattern = cephDaemonIDRE; return p }
	osdID := schema{"node": nodeParam(), "osdid": param{typ: tInteger}}

	t.add("POST", "/nodes/{node}/ceph/init", &method{params: schema{
		"node": nodeParam(), "network": cidrParam(), "cluster-network": cidrParam().needs("network"),
		"size": pInt(i64(1), i64(7)), "min_size": pInt(i64(1), i64(7)), "pg_bits": pInt(i64(6), i64(14)),
		"disable_cephx": pBool(),
	}, handler: cephInit})
	t.add("GET", "/nodes/{node}/ceph/cfg/raw", &method{params: node, handler: cephCfgRaw})
	t.add("GET", "/nodes/{node}/ceph/cfg/db", &method{params: node, handler: cephCfgDB})
	keys := pStr().req()
	keys.pattern = cephCfgKeysRE
	t.add("GET", "/nodes/{node}/ceph/cfg/value", &method{params: schema{"node": nodeParam(), "config-keys": keys}, handler: cephCfgValue})

	t.add("GET", "/nodes/{node}/ceph/mon", &method{params: node, handler: cephListMon})
	t.add("POST", "/nodes/{node}/ceph/mon/{monid}", &method{params: schema{"node": nodeParam(), "monid": optDaemonID(), "mon-address": pFmt("ip-list")}, handler: cephCreateMon})
	t.add("DELETE", "/nodes/{node}/ceph/mon/{monid}", &method{params: schema{"node": nodeParam(), "monid": daemonID()}, handler: cephDestroyMon})
	t.add("GET", "/nodes/{node}/ceph/mgr", &method{params: node, handler: cephListMgr})
	t.add("POST", "/nodes/{node}/ceph/mgr/{id}", &method{params: schema{"node": nodeParam(), "id": optDaemonID()}, handler: cephCreateMgr})
	t.add("DELETE", "/nodes/{node}/ceph/mgr/{id}", &method{params: schema{"node": nodeParam(), "id": daemonID()}, handler: cephDestroyMgr})

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

	t.add("GET", "/nodes/{node}/ceph/pool", &method{params: node, handler: cephListPools})
	t.add("POST", "/nodes/{node}/ceph/pool", &method{params: poolSchema(true), handler: cephCreatePool})
	t.add("GET", "/nodes/{node}/ceph/pool/{name}", &method{params: schema{"node": nodeParam(), "name": pStr().req()}, handler: func(c *call) (any, *apiError) {
		if _, err := c.s.cephLocked(c); err != nil {
			return nil, err
		}
		return []map[string]any{{"name": "status"}}, nil
	}})
	t.add("PUT", "/nodes/{node}/ceph/pool/{name}", &method{params: poolSchema(false), handler: cephSetPool})
	t.add("DELETE", "/nodes/{node}/ceph/pool/{name}", &method{params: schema{
		"node": nodeParam(), "name": pStr().req(), "force": pBool(), "remove_storages": pBool(), "remove_ecprofile": pBool(),
	}, handler: cephDestroyPool})
	t.add("GET", "/nodes/{node}/ceph/pool/{name}/status", &method{params: schema{"node": nodeParam(), "name": pStr().req(), "verbose": pBool()}, handler: cephPoolStatus})
	t.add("GET", "/nodes/{node}/ceph/rules", &method{params: node, handler: func(c *call) (any, *apiError) {
		if _, err := c.s.cephLocked(c); err != nil {
			return nil, err
		}
		return []map[string]any{{"name": "replicated_rule"}}, nil
	}})

	t.add("GET", "/nodes/{node}/ceph/status", &method{params: node, handler: cephStatus})
	t.add("GET", "/cluster/ceph/status", &method{params: schema{}, handler: cephStatus})
	t.add("GET", "/nodes/{node}/ceph/cmd-safety", &method{params: schema{
		"node": nodeParam(), "service": pEnum("osd", "mon", "mds").req(), "action": pEnum("stop", "destroy").req(), "id": pStr().req(),
	}, handler: cephCmdSafety})
	for _, op := range []string{"start", "stop", "restart"} {
		re := cephServiceRE
		if op == "restart" {
			re = regexp.MustCompile(`^(mon|mds|osd|mgr)(\.[a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?)?$`)
		}
		svc := pStr()
		svc.pattern = re
		t.add("POST", "/nodes/{node}/ceph/"+op, &method{params: schema{"node": nodeParam(), "service": svc}, handler: cephService(op)})
	}

	flags := schema{}
	for _, f := range cephFlagNames {
		flags[f] = pBool()
	}
	t.add("GET", "/cluster/ceph/flags", &method{params: schema{}, handler: cephGetFlags})
	t.add("PUT", "/cluster/ceph/flags", &method{params: flags, handler: cephSetFlags})
	t.add("GET", "/cluster/ceph/flags/{flag}", &method{params: schema{"flag": pEnum(cephFlagNames...).req()}, handler: func(c *call) (any, *apiError) {
		cs, err := c.s.cephLocked(c)
		if err != nil {
			return nil, err
		}
		return boolInt(cs.Flags[c.params["flag"]]), nil
	}})
	t.add("PUT", "/cluster/ceph/flags/{flag}", &method{params: schema{"flag": pEnum(cephFlagNames...).req(), "value": param{typ: tBoolean}}, handler: func(c *call) (any, *apiError) {
		cs, err := c.s.cephLocked(c)
		if err != nil {
			return nil, err
		}
		cs.Flags[c.params["flag"]] = c.params["value"] == "1"
		cs.Epoch++
		cs.settle()
		c.s.saveLocked()
		return nil, nil
	}})
}

func poolSchema(create bool) schema {
	sc := schema{
		"node": nodeParam(), "name": pPattern(cephPoolRE).req(),
		"size": pInt(i64(1), i64(7)), "min_size": pInt(i64(1), i64(7)), "pg_num": pInt(i64(1), i64(32768)),
		"pg_num_min": pInt(nil, i64(32768)), "pg_autoscale_mode": pEnum("on", "off", "warn"),
		"application": pEnum("rbd", "cephfs", "rgw"), "crush_rule": pStr(),
		"target_size": pPattern(`^(\d+(\.\d+)?)([KMGT])?$`), "target_size_ratio": {typ: tNumber, optional: true},
	}
	if create {
		sc["add_storages"] = pBool()
	}
	return sc
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// cephDomain is the trust domain (cluster) the node belongs to.
func (s *Sim) cephDomain(c *call) *authDomain {
	n := c.params["node"]
	if n == "" {
		n = c.listener
	}
	return s.st.Domains[s.st.Nodes[n].Domain]
}

// cephLocked returns the initialised Ceph cluster with its clock brought up
// to date, or PVE's error when there is none or no monitor answers.
func (s *Sim) cephLocked(c *call) (*cephState, *apiError) {
	cs := s.cephDomain(c).Ceph
	if cs == nil {
		return nil, die(cephNotInited)
	}
	s.cephTickLocked(cs)
	if len(cs.Mons) == 0 {
		return nil, die("rados_connect failed - No such file or directory")
	}
	if !s.monQuorum(cs, nil) {
		return nil, die("got timeout")
	}
	return cs, nil
}

// cephTickLocked syncs powered-off hosts and advances the simulated clock
// by the real time elapsed since the last tick, scaled.
func (s *Sim) cephTickLocked(cs *cephState) {
	cs.fixup()
	changed := false
	for _, o := range cs.OSDs {
		down := s.offline[o.Host]
		if down != o.hostDown {
			if down && o.Up {
				o.DownSince = cs.Clock
			}
			o.hostDown = down
			changed = true
		}
	}
	now := time.Now()
	scale := s.opts.CephTimeScale
	if scale == 0 {
		scale = 60
	}
	if !cs.lastReal.IsZero() && scale > 0 {
		if dt := now.Sub(cs.lastReal).Seconds() * scale; dt > 0 {
			cs.advance(dt)
			changed = true
		}
	}
	cs.lastReal = now
	if changed {
		cs.settle()
	}
}

func (s *Sim) monUp(m *cephMon) bool { return !m.Stopped && !s.offline[m.Host] }

// monQuorum: more than half of the monitors (without `without`) are up.
func (s *Sim) monQuorum(cs *cephState, without *cephMon) bool {
	total, up := 0, 0
	for _, m := range cs.Mons {
		if m == without {
			continue
		}
		total++
		if s.monUp(m) {
			up++
		}
	}
	return total > 0 && up*2 > total
}

// cephInit is PVE::API2::Ceph init: synchronous, keeps an existing config.
func cephInit(c *call) (any, *apiError) {
	s := c.s
	d := s.cephDomain(c)
	if d.Cluster != nil && !s.quorate(s.st.Nodes[c.params["node"]].Domain, d.Cluster) {
		return nil, die("cluster not ready - no quorum?")
	}
	if err := s.cephConfLockErr(d); err != nil {
		return nil, die("%s", err.Error())
	}
	cs := d.Ceph
	if cs == nil {
		cs = newCephState(randUUID())
		cs.lastReal = time.Now()
	}
	auth := "cephx"
	if c.params["disable_cephx"] == "1" {
		auth = "none"
	}
	if cs.Conf["global"] == nil {
		size, minSize := c.params["size"], c.params["min_size"]
		if size == "" {
			size = "3"
		}
		if minSize == "" {
			minSize = "2"
		}
		cs.Conf["global"] = map[string]string{
			"fsid": cs.FSID, "auth_cluster_required": auth, "auth_service_required": auth, "auth_client_required": auth,
			"osd_pool_default_size": size, "osd_pool_default_min_size": minSize, "mon_allow_pool_delete": "true",
		}
	}
	if auth == "cephx" {
		if cs.Conf["client"] == nil {
			cs.Conf["client"] = map[string]string{}
		}
		cs.Conf["client"]["keyring"] = "/etc/pve/priv/$cluster.$name.keyring"
	}
	if n := c.params["network"]; n != "" {
		cs.Conf["global"]["public_network"] = n
		cs.Conf["global"]["cluster_network"] = n
	}
	if n := c.params["cluster-network"]; n != "" {
		cs.Conf["global"]["cluster_network"] = n
	}
	d.Ceph = cs
	s.saveLocked()
	return nil, nil
}

// renderConf writes ceph.conf as PVE's write_ceph_config does: sections
// in the order global, client, client.*, mds, mds.*, mon, mon.*, osd,
// osd.*, mgr, mgr.*, then the rest, each sorted; keys sorted, tab-indented.
func (cs *cephState) renderConf() string {
	names := make([]string, 0, len(cs.Conf))
	for n := range cs.Conf {
		names = append(names, n)
	}
	sort.Strings(names)
	group := func(sec string) int {
		for i, t := range []string{"global", "client", "mds", "mon", "osd", "mgr"} {
			switch {
			case sec == t:
				return 2 * i
			case strings.HasPrefix(sec, t+".") && t != "global":
				return 2*i + 1
			}
		}
		return 12
	}
	sort.SliceStable(names, func(i, j int) bool { return group(names[i]) < group(names[j]) })
	var b strings.Builder
	for _, sec := range names {
		kv := cs.Conf[sec]
		fmt.Fprintf(&b, "[%s]\n", sec)
		keys := make([]string, 0, len(kv))
		for k := range kv {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "\t%s = %s\n", k, kv[k])
		}
		b.WriteString("\n")
	}
	// Comment characters that are not escaped yet are escaped.
	var out strings.Builder
	prev := rune(0)
	for _, r := range b.String() {
		if (r == ';' || r == '#') && prev != '\\' {
			out.WriteRune('\\')
		}
		out.WriteRune(r)
		prev = r
	}
	return out.String()
}

func cephCfgRaw(c *call) (any, *apiError) {
	cs := c.s.cephDomain(c).Ceph
	if cs == nil {
		return nil, die(cephNotInited)
	}
	return cs.confText(), nil
}

func cephCfgDB(c *call) (any, *apiError) {
	cs, err := c.s.cephLocked(c)
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	var secs []string
	for s := range cs.ConfigDB {
		secs = append(secs, s)
	}
	sort.Strings(secs)
	for _, sec := range secs {
		var keys []string
		for k := range cs.ConfigDB[sec] {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			section, mask, _ := configSection(sec)
			level, runtime := "unknown", 0
			if o := cephOptions[k]; o != nil {
				level, runtime = o.level, boolInt(o.runtime)
			}
			out = append(out, map[string]any{"section": section, "name": k, "value": cs.ConfigDB[sec][k],
				"level": level, "mask": mask, "can_update_at_runtime": runtime})
		}
	}
	return out, nil
}

// cephCfgValue: config DB first, ceph.conf overrides.
func cephCfgValue(c *call) (any, *apiError) {
	cs, err := c.s.cephLocked(c)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]string{}
	for _, item := range regexp.MustCompile(`[;, ]`).Split(c.params["config-keys"], -1) {
		sec, key, _ := strings.Cut(item, ":")
		v, ok := cs.ConfigDB[sec][key]
		if cv, cok := cs.Conf[sec][key]; cok {
			v, ok = cv, true
		}
		if !ok {
			continue
		}
		if out[sec] == nil {
			out[sec] = map[string]string{}
		}
		out[sec][key] = v
	}
	return out, nil
}

// localIPs are the node's addresses: its /etc/hosts address and every
// address configured on its interfaces.
func (s *Sim) localIPs(node string) []netip.Addr {
	var out []netip.Addr
	if a, err := netip.ParseAddr(s.hostIP(node)); err == nil {
		out = append(out, a)
	}
	ns := s.st.Nodes[node]
	for a := range ns.localAddresses() {
		if p, err := netip.ParseAddr(a); err == nil && !containsAddr(out, p) {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Less(out[j]) })
	return out
}

func containsAddr(l []netip.Addr, a netip.Addr) bool {
	for _, x := range l {
		if x == a {
			return true
		}
	}
	return false
}

func ipsIn(ips []netip.Addr, cidr string) []netip.Addr {
	pfx, err := netip.ParsePrefix(cidr)
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, a := range ips {
		if pfx.Masked().Contains(a) {
			out = append(out, a)
		}
	}
	return out
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

// cephOSDTree is GET /nodes/{node}/ceph/osd: the CRUSH tree with status.
func cephOSDTree(c *call) (any, *apiError) {
	s := c.s
	cs, err := s.cephLocked(c)
	if err != nil {
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

func cephOSDParam(c *call, cs *cephState) (*cephOSD, int, *apiError) {
	id, _ := strconv.Atoi(c.params["osdid"])
	o := cs.OSDs[id]
	if o == nil {
		return nil, id, die("no such OSD '%d'", id)
	}
	return o, id, nil
}

func cephInOut(c *call, in bool) (any, *apiError) {
	cs, err := c.s.cephLocked(c)
	if err != nil {
		return nil, err
	}
	o, _, err := cephOSDParam(c, cs)
	if err != nil {
		return nil, err
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
	id, _ := strconv.Atoi(c.params["osdid"])
	if o := cs.OSDs[id]; o != nil && o.Host != c.params["node"] {
		return nil, die("OSD osd.%d does not belong to node %s! at /usr/share/perl5/PVE/API2/Ceph/OSD.pm line 1008.", id, c.params["node"])
	}
	o, _, err := cephOSDParam(c, cs)
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
		cs.destroyOSD(id)
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

func cephListPools(c *call) (any, *apiError) {
	cs, err := c.s.cephLocked(c)
	if err != nil {
		return nil, err
	}
	total := cs.rawCapacity()
	out := []map[string]any{}
	for _, p := range cs.Pools {
		e := map[string]any{
			"pool": p.ID, "pool_name": p.Name, "size": p.Size, "min_size": p.MinSize, "pg_num": p.PGNum,
			"pg_autoscale_mode": p.Autoscale, "crush_rule": 0, "crush_rule_name": "replicated_rule", "type": "replicated",
			"bytes_used": p.Stored * int64(p.Size), "percent_used": cs.percentUsed(p, total),
			"application_metadata": map[string]any{p.Application: map[string]any{}},
		}
		as := cs.autoscaleStatus(p)
		e["autoscale_status"], e["pg_num_final"] = as, as["pg_num_final"]
		if p.PGNumMin > 0 {
			e["pg_num_min"] = p.PGNumMin
		}
		if p.TargetSize > 0 {
			e["target_size"] = p.TargetSize
		}
		if p.TargetRatio > 0 {
			e["target_size_ratio"] = p.TargetRatio
		}
		out = append(out, e)
	}
	return out, nil
}

func (cs *cephState) rawCapacity() int64 {
	var total int64
	for _, o := range cs.OSDs {
		if o.In {
			total += o.Size
		}
	}
	return total
}

func (cs *cephState) percentUsed(p *cephPool, total int64) float64 {
	if total == 0 {
		return 0
	}
	return float64(p.Stored*int64(p.Size)) / float64(total)
}

func (cs *cephState) autoscaleStatus(p *cephPool) map[string]any {
	final, adjust := cs.autoscaleTarget(p)
	return map[string]any{
		"pool_name": p.Name, "pool_id": p.ID, "logical_used": p.Stored, "raw_used": p.Stored * int64(p.Size),
		"target_bytes": p.TargetSize, "target_ratio": p.TargetRatio, "pg_num_target": p.PGNum, "pg_num_final": final,
		"pg_autoscale_mode": p.Autoscale, "would_adjust": adjust, "crush_root_id": -1, "raw_used_rate": float64(p.Size),
	}
}

func parseTargetSize(v string) int64 {
	m := targetSizeRE.FindStringSubmatch(v)
	if m == nil {
		return 0
	}
	f, _ := strconv.ParseFloat(m[1], 64)
	mult := map[string]float64{"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}[m[3]]
	return int64(f * mult)
}

// cephCreatePool is createpool: PVE fills in its defaults, `osd pool
// create` makes the pool with Ceph's (osd_pool_default_size, autoscale
// mode on), then set_pool applies the parameters and add_storages adds
// the RBD storage.
func cephCreatePool(c *call) (any, *apiError) {
	s := c.s
	d := s.cephDomain(c)
	if d.Cluster != nil && !s.quorate(s.st.Nodes[c.params["node"]].Domain, d.Cluster) {
		return nil, die("cluster not ready - no quorum?")
	}
	cs, err := s.cephLocked(c)
	if err != nil {
		return nil, err
	}
	name := c.params["name"]
	if c.params["add_storages"] == "1" && !configIDRE.MatchString(name) {
		return nil, die("pool name contains characters which are illegal for storage naming")
	}
	params := poolParams(c.params)
	for k, v := range map[string]string{"pg_num": "128", "size": "3", "min_size": "2", "application": "rbd", "pg_autoscale_mode": "warn"} {
		if _, ok := params[k]; !ok {
			params[k] = v
		}
	}
	addStorage := c.params["add_storages"] == "1"
	return s.startTaskLocked(c, "cephcreatepool", name, func(t *task) (int, error) {
		s.cephTickLocked(cs)
		// `osd pool create` answers "already exists" with success, so
		// PVE goes on to apply the settings to the existing pool.
		p := cs.pool(name)
		if p == nil {
			size, _ := strconv.Atoi(cs.configValue("global", "osd_pool_default_size"))
			if size <= 0 {
				size = 3
			}
			pgNum, _ := strconv.Atoi(params["pg_num"])
			p = &cephPool{ID: cs.NextPoolID, Name: name, Size: size, MinSize: cs.defaultMinSize(size), PGNum: pgNum, Autoscale: "on",
				CrushRule: "replicated_rule", Stored: cephDefaultStored}
			cs.NextPoolID++
			cs.addPool(p)
		}
		if err := cs.pveSetPool(p, params, &t.Log); err != nil {
			return 0, err
		}
		if addStorage {
			// Pool.pm $add_storage through Storage::Config->create.
			err := s.addStorageLocked(t.Node, "rbd", name, map[string]string{"pool": name, "krbd": "0", "content": "rootdir,images"})
			if err != nil {
				return 0, fmt.Errorf("adding PVE storage for ceph pool '%s' failed: %w", name, err)
			}
		}
		return 0, nil
	}), nil
}

func cephSetPool(c *call) (any, *apiError) {
	s := c.s
	cs, err := s.cephLocked(c)
	if err != nil {
		return nil, err
	}
	name := c.params["name"]
	params := poolParams(c.params)
	return s.startTaskLocked(c, "cephsetpool", name, func(t *task) (int, error) {
		s.cephTickLocked(cs)
		p := cs.pool(name)
		if p == nil {
			return 0, fmt.Errorf("mon_command failed - unrecognized pool '%s'", name)
		}
		return 0, cs.pveSetPool(p, params, &t.Log)
	}), nil
}

// cephDestroyPool is destroypool: unless forced, a storage on the pool
// that still lists images (guest disks) stops it; remove_storages also
// removes those storages afterwards.
func cephDestroyPool(c *call) (any, *apiError) {
	s := c.s
	cs, err := s.cephLocked(c)
	if err != nil {
		return nil, err
	}
	name := c.params["name"]
	removeStorages := c.params["remove_storages"] == "1"
	force := c.params["force"] == "1"
	return s.startTaskLocked(c, "cephdestroypool", name, func(t *task) (int, error) {
		s.cephTickLocked(cs)
		idx := -1
		for i, p := range cs.Pools {
			if p.Name == name {
				idx = i
			}
		}
		storages := s.poolStoragesLocked(t.Node, name)
		if !force {
			for _, id := range storages {
				t.Log = append(t.Log, fmt.Sprintf("checking storage '%s' for RBD images..", id))
				if idx >= 0 && len(cs.Pools[idx].Images) > 0 {
					return 0, fmt.Errorf("ceph pool '%s' still in use by storage '%s'", name, id)
				}
			}
		}
		if idx < 0 {
			return 0, fmt.Errorf("mon_command failed - unrecognized pool '%s'", name)
		}
		if cs.Conf["global"]["mon_allow_pool_delete"] != "true" {
			return 0, fmt.Errorf("mon_command failed - pool deletion is disabled; you must first set the mon_allow_pool_delete config option to true before you can destroy a pool")
		}
		cs.Pools = append(cs.Pools[:idx], cs.Pools[idx+1:]...)
		if removeStorages {
			order, ids := s.parsedStorageCfg(t.Node)
			for _, id := range storages {
				if ids[id].Opts["monhost"] != "" {
					continue // external cluster, not managed by pveceph
				}
				delete(ids, id)
				order = slices.DeleteFunc(order, func(o string) bool { return o == id })
			}
			s.writeStorageCfg(t.Node, order, ids)
		}
		cs.Epoch++
		cs.settle()
		return 0, nil
	}), nil
}

func cephPoolStatus(c *call) (any, *apiError) {
	cs, err := c.s.cephLocked(c)
	if err != nil {
		return nil, err
	}
	p := cs.pool(c.params["name"])
	if p == nil {
		return nil, die("mon_command failed - unrecognized pool '%s'", c.params["name"])
	}
	out := map[string]any{
		"id": p.ID, "name": p.Name, "size": p.Size, "min_size": p.MinSize, "pg_num": p.PGNum, "pgp_num": p.PGNum,
		"crush_rule": p.CrushRule, "pg_autoscale_mode": p.Autoscale,
		"noscrub": false, "nodeep-scrub": false, "nodelete": false, "nopgchange": false, "nosizechange": false,
		"write_fadvise_dontneed": false, "hashpspool": true, "use_gmt_hitset": true, "fast_read": false,
	}
	if p.PGNumMin > 0 {
		out["pg_num_min"] = p.PGNumMin
	}
	if p.TargetSize > 0 {
		out["target_size"] = p.TargetSize
	}
	if p.TargetRatio > 0 {
		out["target_size_ratio"] = p.TargetRatio
	}
	if c.params["verbose"] == "1" {
		total := cs.rawCapacity()
		out["application_list"] = []string{p.Application}
		out["autoscale_status"] = cs.autoscaleStatus(p)
		out["statistics"] = map[string]any{"stored": p.Stored, "objects": p.pgObjects() * int64(p.PGNum),
			"bytes_used": p.Stored * int64(p.Size), "percent_used": cs.percentUsed(p, total), "max_avail": (total - cs.usedRaw()) / int64(max(p.Size, 1))}
	}
	return out, nil
}

func (cs *cephState) usedRaw() int64 {
	var n int64
	for _, p := range cs.Pools {
		n += p.Stored * int64(p.Size)
	}
	return n
}

// cephStatusJSON is `ceph status -f json` for the model.
func (s *Sim) cephStatusJSON(cs *cephState) map[string]any {
	health, checks := cs.health(s.monUp, s.activeMgrLocked(cs) != nil)
	sum := cs.summarize()
	var quorum []int
	var quorumNames []string
	for _, m := range cs.sortedMons() {
		if s.monUp(m) {
			quorum = append(quorum, m.Rank)
			quorumNames = append(quorumNames, m.ID)
		}
	}
	byState := []map[string]any{}
	var states []string
	for st := range sum.byState {
		states = append(states, st)
	}
	sort.Slice(states, func(i, j int) bool {
		if sum.byState[states[i]] != sum.byState[states[j]] {
			return sum.byState[states[i]] > sum.byState[states[j]]
		}
		return states[i] < states[j]
	})
	for _, st := range states {
		byState = append(byState, map[string]any{"state_name": st, "count": sum.byState[st]})
	}
	up, in := 0, 0
	for _, o := range cs.OSDs {
		if o.isUp() {
			up++
		}
		if o.In {
			in++
		}
	}
	total := cs.rawCapacity()
	pgmap := map[string]any{
		"pgs_by_state": byState, "num_pgs": sum.numPGs, "num_pools": len(cs.Pools), "num_objects": sum.objects,
		"data_bytes": cs.usedRaw() / 3, "bytes_used": cs.usedRaw(), "bytes_avail": max(total-cs.usedRaw(), 0), "bytes_total": total,
	}
	if sum.degradedObj > 0 {
		pgmap["degraded_objects"], pgmap["degraded_total"] = sum.degradedObj, sum.copy
		pgmap["degraded_ratio"] = float64(sum.degradedObj) / float64(max(sum.copy, 1))
	}
	if sum.misplacedObj > 0 {
		pgmap["misplaced_objects"], pgmap["misplaced_total"] = sum.misplacedObj, sum.copy
		pgmap["misplaced_ratio"] = float64(sum.misplacedObj) / float64(max(sum.copy, 1))
	}
	if cs.lastRate > 0 {
		pgmap["recovering_bytes_per_sec"] = int64(cs.lastRate)
		pgmap["recovering_objects_per_sec"] = int64(cs.lastRate / cephObjectSize)
	}
	mgr := s.activeMgrLocked(cs)
	standbys := 0
	for _, m := range cs.Mgrs {
		if m != mgr && !m.Stopped && !s.offline[m.Host] {
			standbys++
		}
	}
	mgrmap := map[string]any{"available": mgr != nil, "num_standbys": standbys,
		"modules": []string{"iostat", "nfs", "restful"}, "services": map[string]any{}}
	if mgr != nil {
		mgrmap["active_name"] = mgr.ID
	}
	return map[string]any{
		"fsid":           cs.FSID,
		"health":         map[string]any{"status": health, "checks": checks, "mutes": []any{}},
		"election_epoch": 2 * len(cs.Mons), "quorum": quorum, "quorum_names": quorumNames, "quorum_age": int64(cs.Clock),
		"monmap": map[string]any{"epoch": len(cs.Mons), "min_mon_release_name": "squid", "num_mons": len(cs.Mons)},
		"osdmap": map[string]any{"epoch": cs.Epoch, "num_osds": len(cs.OSDs), "num_up_osds": up, "osd_up_since": 0,
			"num_in_osds": in, "osd_in_since": 0, "num_remapped_pgs": sum.remappedPGs},
		"pgmap":           pgmap,
		"fsmap":           map[string]any{"epoch": 1, "by_rank": []any{}, "up:standby": 0},
		"mgrmap":          mgrmap,
		"servicemap":      map[string]any{"epoch": 1, "modified": "0.000000", "services": map[string]any{}},
		"progress_events": map[string]any{},
	}
}

func cephStatus(c *call) (any, *apiError) {
	cs, err := c.s.cephLocked(c)
	if err != nil {
		return nil, err
	}
	return c.s.cephStatusJSON(cs), nil
}

func cephCmdSafety(c *call) (any, *apiError) {
	s := c.s
	cs, err := s.cephLocked(c)
	if err != nil {
		return nil, err
	}
	id := c.params["id"]
	var safe bool
	var msg string
	switch c.params["service"] {
	case "osd":
		n, perr := strconv.Atoi(strings.TrimPrefix(id, "osd."))
		if perr != nil {
			return nil, die("invalid OSD id '%s'", id)
		}
		if c.params["action"] == "stop" {
			safe, msg = cs.okToStop(n)
		} else {
			safe, msg = cs.safeToDestroy(n)
		}
	case "mon":
		m := cs.Mons[id]
		if c.params["action"] == "destroy" {
			// mon ok-to-rm: unsafe only when the monitor is in quorum and
			// the rest would not be a majority of the smaller monmap.
			switch {
			case m == nil:
				safe, msg = true, fmt.Sprintf("mon.%s does not exist", id)
			case s.monUp(m) && !s.monQuorum(cs, m):
				msg = fmt.Sprintf("removing mon.%s would break quorum", id)
			default:
				safe, msg = true, fmt.Sprintf("safe to remove mon.%s", id)
			}
			break
		}
		if m == nil {
			return nil, die("mon.%s does not exist", id)
		}
		safe = s.monQuorum(cs, m)
		if !safe {
			msg = fmt.Sprintf("stopping mon.%s would break quorum", id)
		}
	default:
		return nil, die("Service does not support this action: %s: %s", c.params["service"], c.params["action"])
	}
	out := map[string]any{"safe": boolInt(safe)}
	if msg != "" {
		out["status"] = msg
	}
	return out, nil
}

// cephService is POST /nodes/{node}/ceph/{start,stop,restart}.
func cephService(op string) handlerFunc {
	return func(c *call) (any, *apiError) {
		s := c.s
		cs := s.cephDomain(c).Ceph
		if cs == nil || len(cs.Conf) == 0 {
			return nil, die("no configuration")
		}
		node := c.params["node"]
		svc := c.params["service"]
		id := svc
		if id == "" {
			id = "ceph"
		}
		typ := map[string]string{"start": "srvstart", "stop": "srvstop", "restart": "srvrestart"}[op]
		return s.startTaskLocked(c, typ, id, func(t *task) (int, error) {
			s.cephTickLocked(cs)
			kind, name, _ := strings.Cut(svc, ".")
			if kind == "" || kind == "ceph" {
				kind = ""
			}
			// PVE runs systemctl on the daemons' units (ssh_ceph_state.go:
			// a started daemon comes up after it booted).
			matched := false
			var failed []string
			for _, d := range cs.nodeDaemons(node, kind) {
				_, did, _ := strings.Cut(d, ".")
				if name != "" && did != name {
					continue
				}
				matched = true
				if !s.daemonOp(cs, d, op) {
					failed = append(failed, d)
				}
			}
			if len(failed) > 0 {
				k, n, _ := strings.Cut(failed[0], ".")
				return 0, fmt.Errorf("command '/bin/systemctl %s ceph-%s@%s' failed: exit code 1", op, k, n)
			}
			if !matched && name != "" {
				unit := fmt.Sprintf("ceph-%s@%s.service", kind, name)
				return 0, fmt.Errorf("command '/bin/systemctl %s %s' failed: exit code 5", op, unit)
			}
			cs.settle()
			return 0, nil
		}), nil
	}
}

func cephGetFlags(c *call) (any, *apiError) {
	cs, err := c.s.cephLocked(c)
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	for _, f := range cephFlagNames {
		out = append(out, map[string]any{"name": f, "description": cephFlagDescr[f], "value": boolInt(cs.Flags[f])})
	}
	return out, nil
}

func cephSetFlags(c *call) (any, *apiError) {
	s := c.s
	cs, err := s.cephLocked(c)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, f := range cephFlagNames {
		if v, ok := c.params[f]; ok {
			set[f] = v == "1"
		}
	}
	c.params["node"] = c.listener // the worker runs on the node that got the request
	return s.startTaskLocked(c, "cephsetflags", "", func(t *task) (int, error) {
		s.cephTickLocked(cs)
		for _, f := range cephFlagNames {
			if v, ok := set[f]; ok {
				cs.Flags[f] = v
			}
		}
		cs.Epoch++
		cs.settle()
		return 0, nil
	}), nil
}

// ---- hooks for tests and the simulator's users ----

func (s *Sim) forEachCeph(f func(cs *cephState)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]string, 0, len(s.st.Domains))
	for k := range s.st.Domains {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if cs := s.st.Domains[k].Ceph; cs != nil {
			s.cephTickLocked(cs)
			f(cs)
		}
	}
	s.saveLocked()
}

// CephAdvance moves every Ceph cluster's simulated clock forward by d
// (recovery, down-out interval), on top of the real-time clock.
func (s *Sim) CephAdvance(d time.Duration) {
	s.forEachCeph(func(cs *cephState) { cs.advance(d.Seconds()) })
}

// CephMinSizeViolations lists every time a PG had fewer than min_size
// copies up (I/O blocked), since init.
func (s *Sim) CephMinSizeViolations() []string {
	var out []string
	s.forEachCeph(func(cs *cephState) { out = append(out, cs.MinSizeViolations...) })
	return out
}

// CephDataLoss lists PGs that lost their last up-to-date copy.
func (s *Sim) CephDataLoss() []string {
	var out []string
	s.forEachCeph(func(cs *cephState) { out = append(out, cs.DataLoss...) })
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
