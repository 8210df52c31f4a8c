package pvesim

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The part of Ceph only the nodes' command line reaches: daemons as
// systemd units (restarts take an OSD down while it boots), per-OSD and
// per-host flags (`ceph osd set-group`), the config database's history
// (`ceph config log`), what each daemon read from ceph.conf when it
// started, `ceph tell` overrides, /etc/pve/ceph.conf as written by hand,
// and a record for tests of how many hosts had OSDs down at once.

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// Simulated seconds a daemon takes from `systemctl start` until the
// cluster sees it: an OSD mounts its store, peers and boots; a monitor
// rejoins the quorum; a manager registers.
const (
	cephOSDBootSeconds = 15.0
	cephMonBootSeconds = 5.0
	cephMgrBootSeconds = 5.0
	// cephClientWriteRate is what the guests write, spread over every PG:
	// an OSD that was down has to recover what its PGs received meanwhile
	// (from its peers' logs) before it holds complete copies again.
	cephClientWriteRate = 32 << 20 // bytes per second
)

type cephCLIState struct {
	// OSDFlags, NodeFlags and ClassFlags are `ceph osd set-group` flags
	// (noup, nodown, noin, noout) per OSD id, CRUSH node (host) and device
	// class.
	OSDFlags   map[string][]string `json:"osd_flags,omitempty"`
	NodeFlags  map[string][]string `json:"crush_node_flags,omitempty"`
	ClassFlags map[string][]string `json:"device_class_flags,omitempty"`
	// NoSetGroup makes `osd set-group` unknown, as on a Ceph before
	// Luminous (test hook for the cluster-wide noout fallback).
	NoSetGroup bool `json:"no_set_group,omitempty"`
	// Errors are HEALTH_ERR checks a test raised (scrub errors, damaged
	// PGs: what the model does not produce itself): name -> message.
	Errors map[string]string `json:"errors,omitempty"`
	// ConfigVersion and ConfigLog are the config database's history.
	ConfigVersion int                   `json:"config_version"`
	ConfigLog     []cephConfigChangeset `json:"config_log,omitempty"`
	// ShownDB is the config database as the daemons last reported it to
	// the manager, which answers `config show` from it until ShownUntil
	// (Clock): a change shows there about a second after `config set`.
	ShownDB    map[string]map[string]string `json:"shown_db,omitempty"`
	ShownUntil float64                      `json:"shown_until,omitempty"`
	// Daemons are the systemd side of each daemon ("osd.3", "mon.z2g4a").
	Daemons map[string]*cephDaemon `json:"daemons,omitempty"`
	// ConfRaw is /etc/pve/ceph.conf as last written over SSH. The file
	// holds it while it still parses to Conf; once the API rewrote the
	// file (PVE parses, changes and writes it back), it is PVE's rendering.
	ConfRaw string `json:"conf_raw,omitempty"`
	// Test history: the most hosts with a down OSD at one time, every
	// change of that set, and OSDs that went down without noout.
	MaxHostsDown     int      `json:"max_hosts_down"`
	MaxMonsDown      int      `json:"max_mons_down"`
	DownLog          []string `json:"down_log,omitempty"`
	DownWithoutNoout []string `json:"down_without_noout,omitempty"`
	// Restarts are the OSD restarts with their boot and recovery times,
	// for benchmarks (timing_hooks.go); not persisted.
	Restarts []*cephRestart `json:"-"`
	lastDown string         // hosts with a down OSD at the last settle
	warned   map[int]bool
}

// cephDaemon is one daemon's unit and what it runs with.
type cephDaemon struct {
	// Unit is the unit's ActiveState when it is not derived from the
	// daemon (inactive after a stop, failed after a failed start).
	Unit    string `json:"unit,omitempty"`
	Enabled string `json:"enabled,omitempty"`
	// Since is the unit's ActiveEnterTimestamp.
	Since time.Time `json:"since"`
	// BootAt is the simulated time at which a started daemon is up; 0
	// when it is not starting.
	BootAt float64 `json:"boot_at,omitempty"`
	DownAt float64 `json:"down_at,omitempty"`
	// FailStart makes every start fail (a broken disk, a bad option).
	FailStart bool `json:"fail_start,omitempty"`
	// FileConf is what the daemon read from ceph.conf when it started;
	// nil while it runs with what the file holds now.
	FileConf map[string]string `json:"file_conf,omitempty"`
	// Overrides are `ceph tell ... config set` values, lost on restart.
	Overrides map[string]string `json:"overrides,omitempty"`
}

type cephConfigChangeset struct {
	Version int                `json:"version"`
	Time    time.Time          `json:"time"`
	Changes []cephConfigChange `json:"changes"`
}

type cephConfigChange struct {
	Key  string  `json:"key"`
	Prev *string `json:"previous_value,omitempty"`
	New  *string `json:"new_value,omitempty"`
}

func (cs *cephState) cli() *cephCLIState {
	if cs.CLI == nil {
		cs.CLI = &cephCLIState{}
	}
	c := cs.CLI
	if c.OSDFlags == nil {
		c.OSDFlags = map[string][]string{}
	}
	if c.NodeFlags == nil {
		c.NodeFlags = map[string][]string{}
	}
	if c.ClassFlags == nil {
		c.ClassFlags = map[string][]string{}
	}
	if c.Daemons == nil {
		c.Daemons = map[string]*cephDaemon{}
	}
	return c
}

// daemon returns the record of a daemon, creating it (running since the
// node booted) on first use.
func (cs *cephState) daemon(name string) *cephDaemon {
	c := cs.cli()
	d := c.Daemons[name]
	if d == nil {
		d = &cephDaemon{Enabled: "enabled"}
		c.Daemons[name] = d
	}
	return d
}

// nooutFor reports whether a down OSD stays in: the cluster flag, or a
// group flag on the OSD, its host or its device class.
func (cs *cephState) nooutFor(o *cephOSD) bool {
	if cs.Flags["noout"] {
		return true
	}
	if cs.CLI == nil {
		return false
	}
	c := cs.CLI
	return containsStr(c.OSDFlags[strconv.Itoa(o.ID)], "noout") || containsStr(c.NodeFlags[o.Host], "noout") ||
		containsStr(c.ClassFlags[o.Class], "noout")
}

// groupFlagCheck adds OSD_FLAGS (OSDMap::check_health) when any OSD, host
// or device class carries a flag, and the HEALTH_ERR checks a test raised.
func (cs *cephState) groupFlagCheck(add func(name, sev, msg string, count int)) {
	if cs.CLI == nil {
		return
	}
	n := 0
	for id, f := range cs.CLI.OSDFlags {
		if i, err := strconv.Atoi(id); err == nil && cs.OSDs[i] != nil && len(f) > 0 {
			n++
		}
	}
	for _, m := range []map[string][]string{cs.CLI.NodeFlags, cs.CLI.ClassFlags} {
		for _, f := range m {
			if len(f) > 0 {
				n++
			}
		}
	}
	if n > 0 {
		add("OSD_FLAGS", "HEALTH_WARN", fmt.Sprintf("%d OSDs or CRUSH {nodes, device-classes} have {NOUP,NODOWN,NOIN,NOOUT} flags set", n), n)
	}
	for name, msg := range cs.CLI.Errors {
		add(name, "HEALTH_ERR", msg, 1)
	}
}

// recordDownHosts keeps the test history: the hosts with a down OSD now,
// the most at once, and OSDs down without noout.
func (cs *cephState) recordDownHosts() {
	c := cs.cli()
	hosts := map[string]bool{}
	var down []string
	for _, id := range cs.osdIDs() {
		o := cs.OSDs[id]
		if o.isUp() {
			delete(c.warned, id)
			continue
		}
		if !hosts[o.Host] {
			hosts[o.Host] = true
			down = append(down, o.Host)
		}
		if o.In && !cs.nooutFor(o) && !c.warned[id] {
			if c.warned == nil {
				c.warned = map[int]bool{}
			}
			c.warned[id] = true
			c.DownWithoutNoout = append(c.DownWithoutNoout, fmt.Sprintf("osd.%d (%s) down without noout at t=%.0fs", id, o.Host, cs.Clock))
		}
	}
	monsDown := 0
	for _, m := range cs.Mons {
		if m.Stopped {
			monsDown++
		}
	}
	c.MaxMonsDown = max(c.MaxMonsDown, monsDown)
	sort.Strings(down)
	now := strings.Join(down, ",")
	if now == c.lastDown {
		return
	}
	c.lastDown = now
	if len(down) > c.MaxHostsDown {
		c.MaxHostsDown = len(down)
	}
	if now == "" {
		now = "none"
	}
	c.DownLog = append(c.DownLog, fmt.Sprintf("t=%.0fs hosts with down OSDs: %s", cs.Clock, now))
}

// bootDue brings up the daemons whose start has completed.
func (cs *cephState) bootDue() {
	if cs.CLI == nil {
		return
	}
	names := make([]string, 0, len(cs.CLI.Daemons))
	for n := range cs.CLI.Daemons {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		d := cs.CLI.Daemons[name]
		if d.BootAt == 0 || d.BootAt > cs.Clock {
			continue
		}
		bootAt := d.BootAt
		kind, id, _ := strings.Cut(name, ".")
		switch kind {
		case "osd":
			if cs.Flags["noup"] {
				continue // the OSD waits in "booting" until noup is cleared
			}
			d.BootAt = 0
			n, _ := strconv.Atoi(id)
			o := cs.OSDs[n]
			if o == nil {
				continue
			}
			// Writes that happened while it was down are recovered from
			// its peers: its copies are not complete until then.
			cs.missedWrites(n, cs.Clock-d.DownAt)
			cs.setOSDUp(n, true)
			cs.restartBooted(n, bootAt)
		case "mon":
			d.BootAt = 0
			if m := cs.Mons[id]; m != nil {
				m.Stopped = false
			}
		case "mgr":
			d.BootAt = 0
			if m := cs.Mgrs[id]; m != nil {
				m.Stopped = false
			}
		default:
			d.BootAt = 0
		}
	}
}

// cephRestart is one OSD restart in Ceph's clock: down at DownAt, up at
// UpAt, then Recovery seconds to recover what its PGs missed meanwhile
// (at the backfill rate, as backfill() moves it).
type cephRestart struct {
	OSD          int
	Host         string
	DownAt, UpAt float64
	Recovery     float64
	Real         time.Time // when it went down, on the host's clock
	booted       bool
}

// restartBooted completes the open restart record of osd, which came up
// at upAt.
func (cs *cephState) restartBooted(osd int, upAt float64) {
	for _, r := range cs.CLI.Restarts {
		if r.OSD != osd || r.booted {
			continue
		}
		r.booted, r.UpAt = true, upAt
		missing := 0.0
		for _, p := range cs.Pools {
			size := p.pgBytes()
			for _, pg := range p.PGs {
				if f, ok := pg.Copies[osd]; ok && size > 0 {
					missing += (1 - f) * size
				}
			}
		}
		if rate := cephBackfillRate * cs.maxBackfills(); rate > 0 {
			r.Recovery = missing / rate
		}
	}
}

// missedWrites makes osd's complete copies lack what their PGs were
// written while it was down for downFor seconds.
func (cs *cephState) missedWrites(osd int, downFor float64) {
	total := 0
	for _, p := range cs.Pools {
		if p.Stored > 0 {
			total += p.PGNum
		}
	}
	if total == 0 || downFor <= 0 {
		return
	}
	perPG := downFor * cephClientWriteRate / float64(total)
	for _, p := range cs.Pools {
		size := p.pgBytes()
		if size <= 0 {
			continue
		}
		for _, pg := range p.PGs {
			if f, ok := pg.Copies[osd]; ok && f >= 1 {
				pg.Copies[osd] = math.Max(0, 1-perPG/size)
			}
		}
	}
}

// daemonHost returns the host a daemon runs on.
func (cs *cephState) daemonHost(name string) (string, bool) {
	kind, id, _ := strings.Cut(name, ".")
	switch kind {
	case "osd":
		n, err := strconv.Atoi(id)
		if err == nil && cs.OSDs[n] != nil {
			return cs.OSDs[n].Host, true
		}
	case "mon":
		if m := cs.Mons[id]; m != nil {
			return m.Host, true
		}
	case "mgr":
		if m := cs.Mgrs[id]; m != nil {
			return m.Host, true
		}
	}
	return "", false
}

// daemonRunning reports whether the daemon is up for the cluster.
func (s *Sim) daemonRunning(cs *cephState, name string) bool {
	kind, id, _ := strings.Cut(name, ".")
	switch kind {
	case "osd":
		n, _ := strconv.Atoi(id)
		return cs.OSDs[n] != nil && cs.OSDs[n].isUp()
	case "mon":
		return cs.Mons[id] != nil && s.monUp(cs.Mons[id])
	case "mgr":
		m := cs.Mgrs[id]
		return m != nil && !m.Stopped && !s.offline[m.Host]
	}
	return false
}

// unitState is the ActiveState of a daemon's unit.
func (s *Sim) unitState(cs *cephState, name string) string {
	d := cs.cli().Daemons[name]
	switch {
	case s.daemonRunning(cs, name), d != nil && d.BootAt > 0:
		return "active"
	case d != nil && (d.Unit == "inactive" || d.Unit == "failed"):
		return d.Unit
	}
	return "failed" // the daemon died without systemctl stopping it
}

// daemonOp is systemctl start, stop or restart of a daemon; it returns
// false when the start failed.
func (s *Sim) daemonOp(cs *cephState, name, op string) bool {
	d := cs.daemon(name)
	active := s.unitState(cs, name) == "active"
	switch op {
	case "try-restart":
		if !active {
			return true
		}
		op = "restart"
	case "start":
		if active {
			return true
		}
	case "reload-or-restart":
		op = "restart"
	}
	kind, id, _ := strings.Cut(name, ".")
	// Stop: the daemon shuts down cleanly and tells the monitors.
	d.BootAt = 0
	switch kind {
	case "osd":
		n, _ := strconv.Atoi(id)
		if o := cs.OSDs[n]; o != nil && o.Up {
			d.DownAt = cs.Clock
			cs.setOSDUp(n, false)
			if op == "restart" {
				cs.CLI.Restarts = append(cs.CLI.Restarts, &cephRestart{OSD: n, Host: o.Host, DownAt: cs.Clock, Real: time.Now()})
			}
		}
	case "mon":
		if m := cs.Mons[id]; m != nil {
			m.Stopped = true
		}
	case "mgr":
		if m := cs.Mgrs[id]; m != nil {
			m.Stopped = true
		}
	}
	d.Overrides = nil
	if op == "stop" {
		d.Unit = "inactive"
		return true
	}
	if d.FailStart {
		d.Unit = "failed"
		return false
	}
	d.Unit, d.Since = "active", time.Now()
	d.FileConf = cs.fileConfFor(name)
	boot := map[string]float64{"osd": cephOSDBootSeconds, "mon": cephMonBootSeconds, "mgr": cephMgrBootSeconds}[kind]
	d.BootAt = cs.Clock + boot
	if boot == 0 {
		d.BootAt = 0
	}
	return true
}

// fileConfFor is what a daemon reads from ceph.conf: [global], its type's
// section, then its own, later ones winning.
func (cs *cephState) fileConfFor(name string) map[string]string {
	kind, _, _ := strings.Cut(name, ".")
	out := map[string]string{}
	for _, sec := range []string{"global", kind, name} {
		for k, v := range cs.Conf[sec] {
			out[normalizeKeyName(k)] = v
		}
	}
	return out
}

// captureFileConf records, for every daemon that has not restarted since
// the simulator knew it, what it read from ceph.conf: the file as it is
// before a change.
func (cs *cephState) captureFileConf() {
	var names []string
	for _, id := range cs.osdIDs() {
		names = append(names, fmt.Sprintf("osd.%d", id))
	}
	for id := range cs.Mons {
		names = append(names, "mon."+id)
	}
	for id := range cs.Mgrs {
		names = append(names, "mgr."+id)
	}
	for _, n := range names {
		if d := cs.daemon(n); d.FileConf == nil {
			d.FileConf = cs.fileConfFor(n)
		}
	}
}

// ---- the config database ----

// configSection splits a `who` (section[/mask]) as ConfigMap::parse_mask
// does; ok is false for an unknown section or mask.
func configSection(who string) (section, mask string, ok bool) {
	parts := strings.Split(who, "/")
	section = parts[0]
	if section != "global" {
		kind, id, hasID := strings.Cut(section, ".")
		if !containsStr([]string{"mon", "mgr", "osd", "mds", "client"}, kind) || (hasID && id == "") {
			return "", "", false
		}
	}
	var masks []string
	for _, m := range parts[1:] {
		k, v, found := strings.Cut(m, ":")
		if !found || v == "" || !containsStr([]string{"host", "rack", "row", "room", "datacenter", "root", "class"}, k) {
			return "", "", false
		}
		masks = append(masks, m)
	}
	return section, strings.Join(masks, "/"), true
}

// configSet changes (value non-nil) or removes one key of the config
// database and logs the change; setting what is already there logs nothing.
func (cs *cephState) configSet(who, key string, value *string) {
	prev, had := cs.ConfigDB[who][key]
	switch {
	case value != nil && had && prev == *value, value == nil && !had:
		return
	}
	c := cs.cli()
	if cs.Clock >= c.ShownUntil {
		c.ShownDB = map[string]map[string]string{}
		for w, kv := range cs.ConfigDB {
			c.ShownDB[w] = maps.Clone(kv)
		}
	}
	c.ShownUntil = cs.Clock + cephConfigShowLag
	if value == nil {
		delete(cs.ConfigDB[who], key)
		if len(cs.ConfigDB[who]) == 0 {
			delete(cs.ConfigDB, who)
		}
	} else {
		if cs.ConfigDB[who] == nil {
			cs.ConfigDB[who] = map[string]string{}
		}
		cs.ConfigDB[who][key] = *value
	}
	c.ConfigVersion++
	ch := cephConfigChange{Key: who + "/" + key, New: value}
	if had {
		p := prev
		ch.Prev = &p
	}
	c.ConfigLog = append(c.ConfigLog, cephConfigChangeset{Version: c.ConfigVersion, Time: time.Now(), Changes: []cephConfigChange{ch}})
	if len(c.ConfigLog) > 1000 {
		c.ConfigLog = c.ConfigLog[len(c.ConfigLog)-1000:]
	}
}

// entityConfig is what the monitors send a daemon or client (ConfigMap::
// generate_entity_map): global, its type and its own section, with masks
// that match its host and device class; value and the section it came from.
func (cs *cephState) entityConfig(entity string) map[string][2]string {
	return cs.entityConfigIn(cs.ConfigDB, entity)
}

// cephConfigShowLag: on Ceph 16 (make testlab) `ceph config show osd.0
// osd_max_backfills` polled every 0.2 s still said 1 at 0.7 s after
// `ceph config set osd osd_max_backfills 3` returned, and 3 at 1.6 s.
const cephConfigShowLag = 1.0

// shownConfig is what the manager has of a daemon's database config.
func (cs *cephState) shownConfig(entity string) map[string][2]string {
	if c := cs.cli(); cs.Clock < c.ShownUntil && c.ShownDB != nil {
		return cs.entityConfigIn(c.ShownDB, entity)
	}
	return cs.entityConfig(entity)
}

func (cs *cephState) entityConfigIn(db map[string]map[string]string, entity string) map[string][2]string {
	kind, _, _ := strings.Cut(entity, ".")
	host, class := "", ""
	if kind == "osd" {
		if n, err := strconv.Atoi(strings.TrimPrefix(entity, "osd.")); err == nil && cs.OSDs[n] != nil {
			host, class = cs.OSDs[n].Host, cs.OSDs[n].Class
		}
	} else if h, ok := cs.daemonHost(entity); ok {
		host = h
	}
	out := map[string][2]string{}
	for _, sec := range []string{"global", kind, entity} {
		// Masked entries are more specific than unmasked ones of the same
		// section.
		whos := make([]string, 0, len(db))
		for who := range db {
			if s, _, _ := configSection(who); s == sec {
				whos = append(whos, who)
			}
		}
		sort.Slice(whos, func(i, j int) bool {
			return len(whos[i]) < len(whos[j]) || (len(whos[i]) == len(whos[j]) && whos[i] < whos[j])
		})
		for _, who := range whos {
			_, mask, _ := configSection(who)
			if !maskMatches(mask, host, class) {
				continue
			}
			for k, v := range db[who] {
				out[k] = [2]string{v, sec}
			}
		}
	}
	return out
}

func maskMatches(mask, host, class string) bool {
	if mask == "" {
		return true
	}
	for _, m := range strings.Split(mask, "/") {
		k, v, _ := strings.Cut(m, ":")
		switch k {
		case "host":
			if v != host {
				return false
			}
		case "class":
			if v != class {
				return false
			}
		default:
			if v != "default" { // the lab's CRUSH tree has only the default root
				return false
			}
		}
	}
	return true
}

// ---- /etc/pve/ceph.conf ----

// confText is /etc/pve/ceph.conf: what was written by hand while it still
// says what PVE's last parse says, else PVE's rendering.
func (cs *cephState) confText() string {
	if cs.CLI != nil && cs.CLI.ConfRaw != "" && sameConf(parseCephConf(cs.CLI.ConfRaw), cs.Conf) {
		return cs.CLI.ConfRaw
	}
	return cs.renderConf()
}

func sameConf(a, b map[string]map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for sec, kv := range a {
		other, ok := b[sec]
		if !ok || len(other) != len(kv) {
			return false
		}
		for k, v := range kv {
			if w, ok := other[k]; !ok || w != v {
				return false
			}
		}
	}
	return true
}

// parseCephConf parses ceph.conf as PVE's parse_ceph_config does
// (PVE::CephConfig in pve-storage, after Ceph's ConfUtils grammar):
// comments start with # or ; (escape them with a backslash to keep them),
// a line ending in a backslash continues, keys have runs of whitespace
// squeezed to one underscore, values may be single- or double-quoted, and
// lines that do not parse are skipped (PVE warns).
func parseCephConf(raw string) map[string]map[string]string {
	cfg := map[string]map[string]string{}
	lines := strings.Split(raw, "\n")
	section := ""
	inSection := false
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		for strings.HasSuffix(line, "\\") && !strings.HasSuffix(line, "\\\\") && i+1 < len(lines) {
			i++
			line = line[:len(line)-1] + lines[i]
		}
		trimmed := strings.TrimLeft(line, " \t")
		if trimmed == "" || trimmed[0] == '#' || trimmed[0] == ';' {
			continue
		}
		if trimmed[0] == '[' {
			inSection = false
			end := strings.IndexByte(trimmed, ']')
			if end <= 1 {
				continue
			}
			rest := strings.TrimLeft(trimmed[end+1:], " \t")
			if rest != "" && rest[0] != '#' && rest[0] != ';' {
				continue
			}
			section, inSection = unescapeComments(trimmed[1:end]), true
			if cfg[section] == nil {
				cfg[section] = map[string]string{}
			}
			continue
		}
		if !inSection {
			continue
		}
		key, value, ok := parseConfLine(trimmed)
		if !ok {
			continue
		}
		cfg[section][key] = value
	}
	return cfg
}

// parseConfLine splits `key = value` with PVE's rules.
func parseConfLine(line string) (string, string, bool) {
	eq := -1
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == '\\' {
			i++
			continue
		}
		if c == '#' || c == ';' || c == '[' {
			return "", "", false
		}
		if c == '=' {
			eq = i
			break
		}
	}
	if eq < 0 {
		return "", "", false
	}
	key := strings.Join(strings.Fields(line[:eq]), "_")
	key = unescapeComments(key)
	if key == "" {
		return "", "", false
	}
	rest := strings.TrimLeft(line[eq+1:], " \t")
	var value string
	if rest != "" && (rest[0] == '"' || rest[0] == '\'') {
		q := rest[0]
		end := -1
		for i := 1; i < len(rest); i++ {
			if rest[i] == '\\' {
				i++
				continue
			}
			if rest[i] == '#' || rest[i] == ';' {
				return "", "", false
			}
			if rest[i] == q {
				end = i
				break
			}
		}
		if end < 0 {
			return "", "", false
		}
		value = rest[1:end]
		after := strings.TrimLeft(rest[end+1:], " \t")
		if after != "" && after[0] != '#' && after[0] != ';' {
			return "", "", false
		}
	} else {
		end := len(rest)
		for i := 0; i < len(rest); i++ {
			if rest[i] == '\\' {
				i++
				continue
			}
			if rest[i] == '#' || rest[i] == ';' {
				end = i
				break
			}
		}
		value = strings.TrimRight(rest[:end], " \t")
	}
	if value == "" {
		return "", "", false
	}
	return key, unescapeComments(value), true
}

func unescapeComments(s string) string {
	return strings.NewReplacer(`\#`, "#", `\;`, ";").Replace(s)
}

// writeConf replaces /etc/pve/ceph.conf with content written over SSH.
// The daemons keep what they read when they started.
func (s *Sim) writeConf(x *sshExec, content []byte) {
	d := x.domain()
	cfg := parseCephConf(string(content))
	if d.Ceph == nil {
		fsid := cfg["global"]["fsid"]
		if !uuidRE.MatchString(fsid) {
			fsid = randUUID()
		}
		d.Ceph = newCephState(fsid)
		d.Ceph.lastReal = time.Now()
	}
	cs := d.Ceph
	cs.captureFileConf()
	cs.Conf = cfg
	cs.cli().ConfRaw = string(content)
	if r := s.realCeph; r != nil {
		if err := r.writeConf(cfg); err != nil {
			x.errf("pvesim: the lab's ceph.conf: %v\n", err)
		}
	}
}

// ---- pmxcfs locks ----

// pmxcfsLockTimeout is how long pmxcfs honours a lock directory
// (CFS_LOCK_TIMEOUT in memdb.c); an older one may be taken over.
const pmxcfsLockTimeout = 120 * time.Second

const pveLockDir = "/etc/pve/priv/lock"

// cephConfLockErr is what PVE's cfs_lock_file('ceph.conf') says while
// someone else holds /etc/pve/priv/lock/file-ceph_conf. PVE waits up to
// 10 s for it; the simulator, whose handlers hold its state lock, fails at
// once.
func (s *Sim) cephConfLockErr(d *authDomain) error {
	if t, ok := d.locks["file-ceph_conf"]; ok && time.Since(t) < pmxcfsLockTimeout {
		return fmt.Errorf("cfs-lock 'file-ceph_conf' error: got lock request timeout")
	}
	return nil
}

// nodeDaemons lists the daemons of kind (mon, mgr, osd; "" for all) on
// node: monitors first, then managers, then OSDs by id.
func (cs *cephState) nodeDaemons(node, kind string) []string {
	var out []string
	if kind == "" || kind == "mon" {
		for _, m := range cs.sortedMons() {
			if m.Host == node {
				out = append(out, "mon."+m.ID)
			}
		}
	}
	if kind == "" || kind == "mgr" {
		ids := make([]string, 0, len(cs.Mgrs))
		for id, m := range cs.Mgrs {
			if m.Host == node {
				ids = append(ids, id)
			}
		}
		sort.Strings(ids)
		for _, id := range ids {
			out = append(out, "mgr."+id)
		}
	}
	if kind == "" || kind == "osd" {
		for _, id := range cs.osdIDs() {
			if cs.OSDs[id].Host == node {
				out = append(out, fmt.Sprintf("osd.%d", id))
			}
		}
	}
	return out
}

// cephConfFile is /etc/pve/ceph.conf: the Ceph state rendered, written
// back by line edits under the pmxcfs rules.
func cephConfFile() *fileHook {
	return &fileHook{
		read: func(x *sshExec) ([]byte, bool) {
			cs := x.domain().Ceph
			if cs == nil {
				return nil, false
			}
			return []byte(cs.confText()), true
		},
		write: func(x *sshExec, content []byte) error {
			if err := x.pmxcfsWritable(); err != nil {
				return err
			}
			x.s.writeConf(x, content)
			x.changed = true
			return nil
		},
	}
}
