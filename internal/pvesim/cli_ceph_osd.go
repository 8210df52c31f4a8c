package pvesim

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// ---- osd ----

func (c *cephCmd) osd() int {
	w := c.words
	switch w[1] {
	case "ok-to-stop":
		return c.osdOkToStop(w[2:])
	case "safe-to-destroy":
		return c.osdSafeToDestroy(w[2:])
	case "set", "unset":
		if len(w) != 3 {
			return c.invalid("osd " + w[1] + " <key>")
		}
		return c.osdFlag(w[1] == "set", w[2])
	case "set-group", "unset-group":
		if c.cs.cli().NoSetGroup {
			return c.invalid("")
		}
		if len(w) < 4 {
			return c.invalid("missing required parameter who(<string>)")
		}
		return c.osdGroupFlags(w[1] == "set-group", w[2], w[3:])
	case "dump":
		return c.osdDump()
	case "destroy":
		return c.osdDestroy(w[2:])
	case "pool":
		return c.osdPool(w[2:])
	}
	return c.invalid("")
}

// osdPool is `ceph osd pool ls|get|set`: the pool commands PVE's set_pool
// sends, run by hand (the provider sets a pg_num PVE skipped).
func (c *cephCmd) osdPool(w []string) int {
	if len(w) == 0 {
		return c.invalid("")
	}
	if w[0] == "ls" && len(w) == 1 {
		names := []string{}
		for _, p := range c.cs.Pools {
			names = append(names, p.Name)
		}
		if c.json() {
			c.outJSON(names)
		} else {
			for _, n := range names {
				c.x.outf("%s\n", n)
			}
		}
		return 0
	}
	if (w[0] != "get" || len(w) != 3) && (w[0] != "set" || len(w) != 4) {
		return c.invalid("")
	}
	p := c.cs.pool(w[1])
	if p == nil {
		return c.fail(errnoENOENT, "unrecognized pool '%s'", w[1])
	}
	if w[0] == "set" {
		if err := c.cs.osdPoolSet(p, w[2], w[3]); err != nil {
			return c.fail(errnoEINVAL, "%s", err.Error())
		}
		c.cs.Epoch++
		c.cs.settle()
		c.x.errf("set pool %d %s to %s\n", p.ID, w[2], w[3])
		return 0
	}
	all := p.poolGetAll()
	v, ok := all[w[2]]
	if !ok {
		return c.fail(errnoENOENT, "option '%s' is not set on pool '%s'", w[2], p.Name)
	}
	if c.json() {
		out := map[string]any{"pool": p.Name, "pool_id": p.ID}
		if n, err := strconv.Atoi(v); err == nil {
			out[w[2]] = n
		} else {
			out[w[2]] = v
		}
		c.outJSON(out)
	} else {
		c.x.outf("%s: %s\n", w[2], v)
	}
	return 0
}

// osdDestroy is `ceph osd destroy <id>`: the manager refuses an OSD that
// is not safe to destroy unless forced (--force or --yes-i-really-mean-it),
// then the monitor refuses one that is up. The provider destroys OSDs
// through PVE's API; destroying one here, which leaves it "destroyed" in
// the map, is not modelled and says so.
func (c *cephCmd) osdDestroy(words []string) int {
	ids, bad := parseOSDIDs(words)
	if bad != "" || len(ids) != 1 {
		return c.invalid("osd destroy <id> [--force] [--yes-i-really-mean-it]")
	}
	id := ids[0]
	if ok, why := c.cs.safeToDestroy(id); !ok && !c.force {
		return c.fail(errnoEBUSY, "%s\nYou can proceed by passing --force, but be warned that this will likely mean real, permanent data loss.", why)
	}
	o := c.cs.OSDs[id]
	switch {
	case o == nil:
		c.x.errf("osd.%d does not exist\n", id)
		return 0
	case o.isUp():
		return c.fail(errnoEBUSY, "osd.%d is not `down`.", id)
	}
	c.x.errf("ceph: pvesim does not simulate destroying an OSD from the command line; PVE's API destroys OSDs\n")
	return 1
}

// osdIDs parses OSD ids given as "3" or "osd.3".
func parseOSDIDs(words []string) ([]int, string) {
	var ids []int
	for _, a := range words {
		n, err := strconv.Atoi(strings.TrimPrefix(a, "osd."))
		if err != nil || n < 0 {
			return nil, a
		}
		ids = append(ids, n)
	}
	return ids, ""
}

// osdOkToStop is the manager's "osd ok-to-stop" (DaemonServer,
// Pacific and later): stopping the OSDs must leave every PG with at least
// min_size complete copies up. The answer is JSON on stdout either way.
func (c *cephCmd) osdOkToStop(words []string) int {
	if len(words) == 0 {
		return c.invalid("missing required parameter ids(<string>)")
	}
	ids, bad := parseOSDIDs(words)
	if bad != "" {
		return c.fail(errnoEINVAL, "invalid osd id '%s'", bad)
	}
	// An OSD that does not exist holds no PG: Ceph says it may stop
	// (make testlab: Ceph 16 answers ok_to_stop true, exit 0).
	stop := map[int]bool{}
	for _, id := range ids {
		stop[id] = true
	}
	var bad2, degraded []string
	ok := 0
	for _, p := range c.cs.Pools {
		for i, pg := range p.PGs {
			if !pg.Created || pg.Lost {
				continue
			}
			acting := c.cs.complete(pg, true)
			touched, left := false, 0
			for _, id := range acting {
				if stop[id] {
					touched = true
				} else {
					left++
				}
			}
			switch {
			case len(acting) < p.MinSize:
				bad2 = append(bad2, pgID(p, i)) // already inactive
			case !touched:
			case left < p.MinSize:
				bad2 = append(bad2, pgID(p, i))
			default:
				ok++
				degraded = append(degraded, pgID(p, i))
			}
		}
	}
	out := map[string]any{"ok_to_stop": len(bad2) == 0, "osds": ids, "num_ok_pgs": ok, "num_not_ok_pgs": len(bad2)}
	if len(bad2) > 0 {
		out["bad_become_inactive"] = bad2
	}
	if len(degraded) > 0 {
		out["ok_become_degraded"] = degraded
	}
	if c.format == "" || c.json() {
		c.outJSON(out)
	}
	if len(bad2) > 0 {
		return c.fail(errnoEBUSY, "unsafe to stop osd(s) at this time (%d PGs are or would become offline)", len(bad2))
	}
	// Since Octopus the manager says nothing more when they may stop: the
	// report on stdout is the answer (make testlab: Ceph 16, stderr empty).
	return 0
}

func ids2str(ids []int) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = strconv.Itoa(id)
	}
	return out
}

func (c *cephCmd) osdSafeToDestroy(words []string) int {
	if len(words) == 0 {
		return c.invalid("missing required parameter ids(<string>)")
	}
	ids, bad := parseOSDIDs(words)
	if bad != "" {
		return c.fail(errnoEINVAL, "invalid osd id '%s'", bad)
	}
	for _, id := range ids {
		if ok, why := c.cs.safeToDestroy(id); !ok {
			if strings.Contains(why, "cannot draw any conclusions") {
				return c.fail(errnoEAGAIN, "%s", why)
			}
			return c.fail(errnoEBUSY, "%s", why)
		}
	}
	c.x.errf("OSD(s) %s are safe to destroy without reducing data durability.\n", strings.Join(ids2str(ids), ","))
	return 0
}

// cephCLIFlags are the flags `ceph osd set` knows.
var cephCLIFlags = []string{"full", "pause", "noup", "nodown", "noout", "noin", "nobackfill", "norebalance", "norecover", "noscrub",
	"nodeep-scrub", "notieragent", "nosnaptrim", "pglog_hardlimit", "noautoscale"}

func (c *cephCmd) osdFlag(set bool, flag string) int {
	if !containsStr(cephCLIFlags, flag) {
		return c.invalid(fmt.Sprintf("%s not in %s", flag, strings.Join(cephCLIFlags, "|")))
	}
	if containsStr(cephFlagNames, flag) {
		if c.cs.Flags[flag] != set {
			c.cs.Flags[flag] = set
			c.cs.Epoch++
			c.cs.settle()
		}
	}
	if set {
		c.x.errf("%s is set\n", flag)
	} else {
		c.x.errf("%s is unset\n", flag)
	}
	return 0
}

// osdGroupFlags is "osd set-group/unset-group <flags> <who>...": flags
// (noup, nodown, noin, noout) on OSDs, CRUSH nodes (hosts) or device
// classes.
func (c *cephCmd) osdGroupFlags(set bool, flagList string, whos []string) int {
	var flags []string
	for _, f := range strings.Split(flagList, ",") {
		if !containsStr([]string{"noup", "nodown", "noin", "noout"}, f) {
			return c.fail(errnoEINVAL, "unrecognized flag '%s', must be one of {noup,nodown,noin,noout}", f)
		}
		flags = append(flags, f)
	}
	cli := c.cs.cli()
	hosts := map[string]bool{}
	classes := map[string]bool{}
	for _, o := range c.cs.OSDs {
		hosts[o.Host] = true
		classes[o.Class] = true
	}
	type target struct {
		m   map[string][]string
		key string
	}
	var targets []target
	for _, w := range whos {
		for _, who := range strings.Split(w, ",") {
			switch {
			case strings.HasPrefix(who, "osd.") || isNumber(who):
				n, err := strconv.Atoi(strings.TrimPrefix(who, "osd."))
				if err != nil || c.cs.OSDs[n] == nil {
					return c.fail(errnoENOENT, "osd.%s does not exist", strings.TrimPrefix(who, "osd."))
				}
				targets = append(targets, target{cli.OSDFlags, strconv.Itoa(n)})
			case hosts[who]:
				targets = append(targets, target{cli.NodeFlags, who})
			case classes[who]:
				targets = append(targets, target{cli.ClassFlags, who})
			default:
				return c.fail(errnoEINVAL, "unable to parse osd id or crush node or device class: \"%s\". ", who)
			}
		}
	}
	for _, t := range targets {
		cur := t.m[t.key]
		for _, f := range flags {
			if set && !containsStr(cur, f) {
				cur = append(cur, f)
			}
			if !set {
				cur = removeStr(cur, f)
			}
		}
		sort.Strings(cur)
		if len(cur) == 0 {
			delete(t.m, t.key)
		} else {
			t.m[t.key] = cur
		}
	}
	c.cs.Epoch++
	c.cs.settle()
	return 0
}

func removeStr(l []string, s string) []string {
	var out []string
	for _, x := range l {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

func (c *cephCmd) osdDump() int {
	var flags []string
	for _, f := range cephFlagNames {
		if c.cs.Flags[f] {
			flags = append(flags, f)
		}
	}
	flags = append(flags, "sortbitwise", "recovery_deletes", "purged_snapdirs", "pglog_hardlimit")
	cli := c.cs.cli()
	var osds []map[string]any
	for _, id := range c.cs.osdIDs() {
		o := c.cs.OSDs[id]
		state := []string{"exists"}
		if o.isUp() {
			state = append(state, "up")
		}
		state = append(state, cli.OSDFlags[strconv.Itoa(id)]...)
		weight := 0.0
		if o.In {
			weight = 1
		}
		osds = append(osds, map[string]any{"osd": id, "uuid": o.UUID, "up": boolInt(o.isUp()), "in": boolInt(o.In),
			"weight": weight, "primary_affinity": 1, "state": state})
	}
	if c.json() {
		if osds == nil {
			osds = []map[string]any{}
		}
		nodeFlags := map[string]any{}
		for k, v := range cli.NodeFlags {
			nodeFlags[k] = v
		}
		classFlags := map[string]any{}
		for k, v := range cli.ClassFlags {
			classFlags[k] = v
		}
		c.outJSON(map[string]any{"epoch": c.cs.Epoch, "fsid": c.cs.FSID, "flags": strings.Join(flags, ","),
			"crush_node_flags": nodeFlags, "device_class_flags": classFlags, "osds": osds})
		return 0
	}
	c.x.outf("epoch %d\nfsid %s\nflags %s\n", c.cs.Epoch, c.cs.FSID, strings.Join(flags, ","))
	for _, id := range c.cs.osdIDs() {
		o := c.cs.OSDs[id]
		up, in, weight := "down", "out", 0
		if o.isUp() {
			up = "up"
		}
		if o.In {
			in, weight = "in", 1
		}
		state := append([]string{"exists"}, cli.OSDFlags[strconv.Itoa(id)]...)
		if o.isUp() {
			state = append([]string{"exists", "up"}, cli.OSDFlags[strconv.Itoa(id)]...)
		}
		c.x.outf("osd.%d %s %s weight %d %s\n", id, up, in, weight, strings.Join(state, ","))
	}
	return 0
}

// ---- monitors and managers ----

func (c *cephCmd) monOkToStop() int {
	ids := c.words[2:]
	if len(ids) == 0 {
		return c.invalid("missing required parameter ids(<string>)")
	}
	var alive, stopping []string
	for _, id := range ids {
		if c.cs.Mons[id] == nil {
			return c.fail(errnoENOENT, "mon.%s does not exist", id)
		}
	}
	up, total := 0, len(c.cs.Mons)
	for _, m := range c.cs.sortedMons() {
		if containsStr(ids, m.ID) {
			stopping = append(stopping, m.ID)
			continue
		}
		if c.s.monUp(m) {
			up++
			alive = append(alive, m.ID)
		}
	}
	if up*2 <= total {
		return c.fail(errnoEBUSY, "not enough monitors would be available (%s) after stopping mons [%s]", strings.Join(alive, ","), strings.Join(stopping, ","))
	}
	c.x.errf("quorum should be preserved (%s) after stopping [%s]\n", strings.Join(alive, ","), strings.Join(stopping, ","))
	return 0
}

func (c *cephCmd) quorumStatus() int {
	var quorum []int
	var names []string
	for _, m := range c.cs.sortedMons() {
		if c.s.monUp(m) {
			quorum = append(quorum, m.Rank)
			names = append(names, m.ID)
		}
	}
	monmap := c.s.monDumpJSON(c.cs)
	delete(monmap, "quorum") // mon dump has it; quorum_status has it one level up
	out := map[string]any{"election_epoch": 2 * len(c.cs.Mons), "quorum": quorum, "quorum_names": names, "monmap": monmap}
	if len(names) > 0 {
		out["quorum_leader_name"] = names[0]
	}
	c.outJSON(out)
	return 0
}

// monDumpJSON is `ceph mon dump`: the monitor map with each monitor's
// addresses and the ranks in quorum.
func (s *Sim) monDumpJSON(cs *cephState) map[string]any {
	mons := []map[string]any{}
	quorum := []int{}
	for _, m := range cs.sortedMons() {
		mons = append(mons, map[string]any{"rank": m.Rank, "name": m.ID,
			"public_addrs": map[string]any{"addrvec": []map[string]any{
				{"type": "v2", "addr": m.Addr + ":3300", "nonce": 0}, {"type": "v1", "addr": m.Addr + ":6789", "nonce": 0}}},
			"addr": m.Addr + ":6789/0", "public_addr": m.Addr + ":6789/0", "priority": 0, "weight": 0, "crush_location": "{}"})
		if s.monUp(m) {
			quorum = append(quorum, m.Rank)
		}
	}
	return map[string]any{"epoch": len(cs.Mons), "fsid": cs.FSID, "min_mon_release": 19, "min_mon_release_name": "squid",
		"election_strategy": 1, "stretch_mode": false, "tiebreaker_mon": "", "mons": mons, "quorum": quorum}
}

// mgrDumpJSON is `ceph mgr dump`: the active manager and the standbys.
func (s *Sim) mgrDumpJSON(cs *cephState) map[string]any {
	active := s.activeMgrLocked(cs)
	standbys := []map[string]any{}
	for _, id := range sortedKeys(cs.Mgrs) {
		m := cs.Mgrs[id]
		if m != active && !m.Stopped && !s.offline[m.Host] {
			standbys = append(standbys, map[string]any{"gid": 4100 + len(standbys) + 1, "name": id})
		}
	}
	out := map[string]any{"epoch": cs.Epoch, "active_gid": 0, "active_name": "", "available": active != nil, "standbys": standbys,
		"modules": []string{"iostat", "nfs", "restful"}, "services": map[string]any{}}
	if active != nil {
		out["active_gid"], out["active_name"] = 4100, active.ID
	}
	return out
}

func (c *cephCmd) mgrDump() int {
	c.outJSON(c.s.mgrDumpJSON(c.cs))
	return 0
}

func (c *cephCmd) monDump() int {
	c.outJSON(c.s.monDumpJSON(c.cs))
	return 0
}
