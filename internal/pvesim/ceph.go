package pvesim

import (
	"fmt"
	"net/netip"
	"regexp"
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
		flags := cs.Flags
		if r := c.s.realCeph; r != nil {
			if flags, err = r.flagsOrDie(); err != nil {
				return nil, err
			}
		}
		return boolInt(flags[c.params["flag"]]), nil
	}})
	t.add("PUT", "/cluster/ceph/flags/{flag}", &method{params: schema{"flag": pEnum(cephFlagNames...).req(), "value": param{typ: tBoolean}}, handler: func(c *call) (any, *apiError) {
		cs, err := c.s.cephLocked(c)
		if err != nil {
			return nil, err
		}
		if r := c.s.realCeph; r != nil {
			if err := r.setFlag(c.params["flag"], c.params["value"] == "1"); err != nil {
				return nil, die("%s", err.Error())
			}
		}
		cs.Flags[c.params["flag"]] = c.params["value"] == "1"
		cs.Epoch++
		cs.settle()
		c.s.saveLocked()
		return nil, nil
	}})
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
	db, err := c.s.configDBLocked(cs)
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	var secs []string
	for s := range db {
		secs = append(secs, s)
	}
	sort.Strings(secs)
	for _, sec := range secs {
		var keys []string
		for k := range db[sec] {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			section, mask, _ := configSection(sec)
			level, runtime := "unknown", 0
			if o := cephOptions[k]; o != nil {
				level, runtime = o.level, boolInt(o.canUpdateAtRuntime())
			}
			out = append(out, map[string]any{"section": section, "name": k, "value": db[sec][k],
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
	db, err := c.s.configDBLocked(cs)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]string{}
	for _, item := range regexp.MustCompile(`[;, ]`).Split(c.params["config-keys"], -1) {
		sec, key, _ := strings.Cut(item, ":")
		v, ok := db[sec][key]
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

// cephStatus is PVE's ceph_cluster_status: Ceph's `status`, with the
// health in detail and, since Octopus left them out of status, the whole
// `mon dump` as monmap and `mgr dump` as mgrmap (PVE/Ceph/Tools.pm).
func cephStatus(c *call) (any, *apiError) {
	cs, err := c.s.cephLocked(c)
	if err != nil {
		return nil, err
	}
	if r := c.s.realCeph; r != nil {
		st, err := r.status()
		if err != nil {
			return nil, die("%s", err.Error())
		}
		return st, nil
	}
	st := c.s.cephStatusJSON(cs)
	st["monmap"] = c.s.monDumpJSON(cs)
	st["mgrmap"] = c.s.mgrDumpJSON(cs)
	return st, nil
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
		r := s.realCeph
		if r != nil && !r.backed(n) {
			r = nil // the model's own OSD
		}
		switch {
		case r != nil && c.params["action"] == "stop":
			safe, msg = r.okToStop(n)
		case r != nil:
			safe, msg = r.safeToDestroy(n)
		case c.params["action"] == "stop":
			safe, msg = cs.okToStop(n)
		default:
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
				if r := s.realCeph; r != nil {
					// the lab's daemon; the monitors say when it is down
					if err := r.daemon(op, d); err != nil {
						t.Log = append(t.Log, err.Error())
						failed = append(failed, d)
					}
					_, cs.daemon(d).Since = r.unit(d)
					continue
				}
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
	flags := cs.Flags
	if r := c.s.realCeph; r != nil {
		if flags, err = r.flagsOrDie(); err != nil {
			return nil, err
		}
	}
	out := []map[string]any{}
	for _, f := range cephFlagNames {
		out = append(out, map[string]any{"name": f, "description": cephFlagDescr[f], "value": boolInt(flags[f])})
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
			v, ok := set[f]
			if !ok {
				continue
			}
			if r := s.realCeph; r != nil {
				if err := r.setFlag(f, v); err != nil {
					return 0, err
				}
			}
			cs.Flags[f] = v
		}
		cs.Epoch++
		cs.settle()
		return 0, nil
	}), nil
}

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
