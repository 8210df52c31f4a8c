package pvesim

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The `ceph` command line tool on a node, acting on the same Ceph state as
// the API. Errors are printed the way the tool prints a monitor's or
// manager's reply: "Error <ERRNO>: <message>" on stderr and the errno as
// exit status (EINVAL 22, ENOENT 2, EBUSY 16, EAGAIN 11, ENXIO 6).

const (
	errnoENOENT = 2
	errnoENXIO  = 6
	errnoEAGAIN = 11
	errnoEACCES = 13
	errnoEBUSY  = 16
	errnoEINVAL = 22
)

var errnoNames = map[int]string{errnoENOENT: "ENOENT", errnoENXIO: "ENXIO", errnoEAGAIN: "EAGAIN", errnoEACCES: "EACCES",
	errnoEBUSY: "EBUSY", errnoEINVAL: "EINVAL"}

// cephCmd is one invocation: its words after the global options and the
// output format asked for.
type cephCmd struct {
	x      *sshExec
	s      *Sim
	cs     *cephState
	words  []string
	format string // "", plain, json, json-pretty
	force  bool   // --force / --yes-i-really-mean-it
	max    int    // --max
}

func (c *cephCmd) json() bool { return c.format == "json" || c.format == "json-pretty" }

// out prints v as the chosen JSON format.
func (c *cephCmd) outJSON(v any) {
	var b []byte
	if c.format == "json-pretty" {
		b, _ = json.MarshalIndent(v, "", "    ")
	} else {
		b, _ = json.Marshal(v)
	}
	c.x.outf("%s\n", b)
}

func (c *cephCmd) fail(errno int, format string, args ...any) int {
	c.x.errf("Error %s: %s\n", errnoNames[errno], fmt.Sprintf(format, args...))
	return errno
}

// invalid is the tool's answer to words that match no command signature.
func (c *cephCmd) invalid(detail string) int {
	if detail != "" {
		c.x.errf("Invalid command: %s\n", detail)
	} else {
		c.x.errf("no valid command found; 10 closest matches:\n")
	}
	return c.fail(errnoEINVAL, "invalid command")
}

func sshCeph(x *sshExec) int {
	c := &cephCmd{x: x, s: x.s}
	args := x.argv[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		value := func() (string, bool) {
			if k, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(k, "--") {
				return v, true
			}
			if i+1 >= len(args) {
				x.errf("ceph: error: argument %s: expected one argument\n", a)
				return "", false
			}
			i++
			return args[i], true
		}
		name, _, _ := strings.Cut(a, "=")
		switch {
		case len(c.words) >= 2 && c.words[0] == "tell":
			// The rest is the daemon's command (injectargs '--opt v').
			c.words = append(c.words, args[i:]...)
			i = len(args)
		case a == "--":
			c.words = append(c.words, args[i+1:]...)
			i = len(args)
		case name == "-f" || name == "--format":
			v, ok := value()
			if !ok {
				return 2
			}
			switch v {
			case "json", "json-pretty", "plain", "xml", "xml-pretty":
				c.format = v
			default:
				x.errf("ceph: error: argument -f/--format: invalid choice: '%s' (choose from 'json', 'json-pretty', 'xml', 'xml-pretty', 'plain', 'yaml')\n", v)
				return 2
			}
		case name == "--connect-timeout" || name == "-n" || name == "--name" || name == "--id" || name == "-i" || name == "--user" ||
			name == "-c" || name == "--conf" || name == "-k" || name == "--keyring" || name == "--cluster":
			if _, ok := value(); !ok {
				return 2
			}
		case a == "-s":
			c.words = append(c.words, "status")
		case a == "--force" || a == "--yes-i-really-mean-it":
			c.force = true
		case name == "--max":
			v, ok := value()
			if !ok {
				return 2
			}
			n, err := strconv.Atoi(v)
			if err != nil {
				return c.invalid(fmt.Sprintf("%s doesn't represent an int", v))
			}
			c.max = n
		case a == "-w" || a == "--watch" || a == "-h" || a == "--help":
			x.errf("ceph: pvesim does not simulate %s\n", a)
			return 1
		case strings.HasPrefix(a, "-") && len(a) > 1 && !isNumber(a):
			x.errf("ceph: error: unrecognized arguments: %s\n", a)
			return 2
		default:
			c.words = append(c.words, a)
		}
	}
	if len(c.words) == 0 {
		x.errf("ceph: pvesim does not simulate the interactive ceph shell; give a command\n")
		return 1
	}
	if !x.root {
		// /etc/pve/priv/ceph.client.admin.keyring is root's only.
		x.errf("[errno 13] RADOS permission denied (error connecting to the cluster)\n")
		return errnoEACCES
	}
	cs := x.domain().Ceph
	if cs == nil {
		x.errf("Error initializing cluster client: ObjectNotFound('RADOS object not found (error calling conf_read_file)')\n")
		return 1
	}
	x.s.cephTickLocked(cs)
	if len(cs.Mons) == 0 || !x.s.monQuorum(cs, nil) {
		x.errf("[errno 110] RADOS timed out (error connecting to the cluster)\n")
		return 1
	}
	c.cs = cs
	x.changed = true // the clock moved, and most commands change something
	w := c.words
	switch {
	case w[0] == "status":
		return c.status()
	case w[0] == "health":
		return c.health()
	case w[0] == "config" && len(w) > 1:
		return c.config()
	case w[0] == "tell" && len(w) > 2:
		return c.tell()
	case w[0] == "osd" && len(w) > 1:
		return c.osd()
	case w[0] == "mon" && len(w) > 1 && w[1] == "ok-to-stop":
		return c.monOkToStop()
	case w[0] == "quorum_status":
		return c.quorumStatus()
	case w[0] == "mgr" && len(w) == 2 && w[1] == "dump":
		return c.mgrDump()
	}
	return c.invalid("")
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// ---- status and health ----

func (c *cephCmd) status() int {
	st := c.s.cephStatusJSON(c.cs)
	if c.json() {
		c.outJSON(st)
		return 0
	}
	health, checks := c.cs.health(c.s.monUp, c.s.activeMgrLocked(c.cs) != nil)
	var b strings.Builder
	fmt.Fprintf(&b, "  cluster:\n    id:     %s\n    health: %s\n", c.cs.FSID, health)
	for _, n := range sortedKeys(checks) {
		fmt.Fprintf(&b, "            %s\n", checks[n].Summary.Message)
	}
	up, in := 0, 0
	for _, o := range c.cs.OSDs {
		if o.isUp() {
			up++
		}
		if o.In {
			in++
		}
	}
	qn, _ := st["quorum_names"].([]string)
	fmt.Fprintf(&b, "\n  services:\n    mon: %d daemons, quorum %s\n", len(c.cs.Mons), strings.Join(qn, ","))
	if m := c.s.activeMgrLocked(c.cs); m != nil {
		fmt.Fprintf(&b, "    mgr: %s(active)\n", m.ID)
	} else {
		b.WriteString("    mgr: no daemons active\n")
	}
	fmt.Fprintf(&b, "    osd: %d osds: %d up, %d in\n", len(c.cs.OSDs), up, in)
	sum := c.cs.summarize()
	fmt.Fprintf(&b, "\n  data:\n    pools:   %d pools, %d pgs\n", len(c.cs.Pools), sum.numPGs)
	states := sortedKeys(sum.byState)
	for i, s := range states {
		prefix := "             "
		if i == 0 {
			prefix = "    pgs:     "
		}
		fmt.Fprintf(&b, "%s%d %s\n", prefix, sum.byState[s], s)
	}
	c.x.outf("%s\n", b.String())
	return 0
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (c *cephCmd) health() int {
	status, checks := c.cs.health(c.s.monUp, c.s.activeMgrLocked(c.cs) != nil)
	if c.json() {
		c.outJSON(map[string]any{"status": status, "checks": checks, "mutes": []any{}})
		return 0
	}
	var msgs []string
	for _, n := range sortedKeys(checks) {
		msgs = append(msgs, checks[n].Summary.Message)
	}
	if len(msgs) == 0 {
		c.x.outf("%s\n", status)
		return 0
	}
	c.x.outf("%s %s\n", status, strings.Join(msgs, "; "))
	if len(c.words) > 1 && c.words[1] == "detail" {
		for _, n := range sortedKeys(checks) {
			c.x.outf("[%s] %s: %s\n", strings.TrimPrefix(checks[n].Severity, "HEALTH_")[:3], n, checks[n].Summary.Message)
		}
	}
	return 0
}

// ---- config ----

func (c *cephCmd) config() int {
	w := c.words
	switch w[1] {
	case "set":
		if len(w) < 5 {
			return c.invalid("missing required parameter value(<string>)")
		}
		if len(w) > 5 {
			return c.invalid(fmt.Sprintf("unused arguments: %s", pyList(w[5:])))
		}
		return c.configSet(w[2], w[3], w[4])
	case "rm":
		if len(w) != 4 {
			return c.invalid("config rm <who> <name>")
		}
		who, name := w[2], normalizeKeyName(w[3])
		if _, _, ok := configSection(who); !ok {
			return c.fail(errnoEINVAL, "unrecognized config target '%s'", who)
		}
		c.cs.configSet(who, name, nil)
		return 0
	case "get":
		if len(w) < 3 || len(w) > 4 {
			return c.invalid("config get <who> [<key>]")
		}
		key := ""
		if len(w) == 4 {
			key = w[3]
		}
		return c.configGet(w[2], key)
	case "dump":
		return c.configDump()
	case "help":
		if len(w) != 3 {
			return c.invalid("config help <key>")
		}
		name := normalizeKeyName(w[2])
		o := cephOptions[name]
		if o == nil {
			return c.fail(errnoENOENT, "configuration option '%s' not recognized", name)
		}
		if c.json() {
			c.outJSON(o.helpJSON())
		} else {
			c.x.outf("%s", o.helpText())
		}
		return 0
	case "show":
		if len(w) < 3 || len(w) > 4 {
			return c.invalid("config show <who> [<key>]")
		}
		key := ""
		if len(w) == 4 {
			key = w[3]
		}
		return c.configShow(w[2], key)
	case "log":
		n := 10
		if len(w) > 2 {
			v, err := strconv.Atoi(w[2])
			if err != nil {
				return c.invalid(fmt.Sprintf("%s doesn't represent an int", w[2]))
			}
			n = v
		}
		return c.configLog(n)
	}
	return c.invalid("")
}

func pyList(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = "'" + s + "'"
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// configSet is ConfigMonitor's "config set": the option must be known
// (unless --force) and its value valid; Ceph stores the normalized value.
func (c *cephCmd) configSet(who, name, value string) int {
	name = normalizeKeyName(name)
	if !c.force {
		o := cephOptions[name]
		if o == nil {
			return c.fail(errnoEINVAL, "unrecognized config option '%s'", name)
		}
		norm, msg := o.parseValue(value)
		if msg != "" {
			return c.fail(errnoEINVAL, "error parsing value: %s", msg)
		}
		if containsStr(o.flags, "no_mon_update") {
			return c.fail(errnoEINVAL, "%s is special and cannot be stored by the mon", name)
		}
		value = norm
	}
	if _, _, ok := configSection(who); !ok {
		return c.fail(errnoEINVAL, "unrecognized config target '%s'", who)
	}
	c.cs.configSet(who, name, &value)
	return 0
}

// entityOK is EntityName::from_str: type.id or a bare type.
func entityOK(who string) bool {
	kind, _, _ := strings.Cut(who, ".")
	return containsStr([]string{"mon", "mgr", "osd", "mds", "client", "auth"}, kind)
}

func (c *cephCmd) configGet(who, key string) int {
	if !entityOK(who) {
		return c.fail(errnoEINVAL, "unrecognized entity '%s'", who)
	}
	cfg := c.cs.entityConfig(who)
	if key != "" {
		key = normalizeKeyName(key)
		o := cephOptions[key]
		if o == nil {
			return c.fail(errnoENOENT, "unrecognized key '%s'", key)
		}
		if containsStr(o.flags, "no_mon_update") {
			if key == "fsid" {
				c.x.outf("%s\n", c.cs.FSID)
				return 0
			}
			return c.fail(errnoEINVAL, "%s is special and cannot be stored by the mon", key)
		}
		if v, ok := cfg[key]; ok {
			c.x.outf("%s\n", v[0])
		} else {
			c.x.outf("%s\n", o.def)
		}
		return 0
	}
	if c.json() {
		out := map[string]any{}
		for _, k := range sortedKeys(cfg) {
			level, runtime := optionMeta(k)
			_ = level
			out[k] = map[string]any{"value": cfg[k][0], "section": cfg[k][1], "mask": map[string]any{}, "can_update_at_runtime": runtime}
		}
		c.outJSON(out)
		return 0
	}
	rows := [][]string{{"WHO", "MASK", "LEVEL", "OPTION", "VALUE", "RO"}}
	for _, k := range sortedKeys(cfg) {
		level, runtime := optionMeta(k)
		rows = append(rows, []string{cfg[k][1], "", level, k, cfg[k][0], roMark(runtime)})
	}
	c.x.outf("%s", textTable(rows))
	return 0
}

func optionMeta(name string) (string, bool) {
	if o := cephOptions[name]; o != nil {
		return o.level, o.runtime
	}
	return "unknown", false
}

func roMark(runtime bool) string {
	if runtime {
		return ""
	}
	return "*"
}

// textTable is Ceph's TextTable: left-aligned columns two spaces apart.
func textTable(rows [][]string) string {
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, cell := range r {
			widths[i] = max(widths[i], len(cell))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		var line strings.Builder
		for i, cell := range r {
			line.WriteString(cell)
			if i < len(r)-1 {
				line.WriteString(strings.Repeat(" ", widths[i]-len(cell)+2))
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	return b.String()
}

// dumpOrder is the order of `config dump`: global, then for each type its
// section and its daemons' sections.
func (c *cephCmd) dumpOrder() []string {
	var whos []string
	for who := range c.cs.ConfigDB {
		whos = append(whos, who)
	}
	rank := func(who string) (int, string) {
		sec, _, _ := configSection(who)
		if sec == "global" {
			return 0, who
		}
		kind, _, _ := strings.Cut(sec, ".")
		for i, t := range []string{"mon", "mgr", "osd", "mds", "client"} {
			if kind == t {
				return i + 1, who
			}
		}
		return 9, who
	}
	sort.Slice(whos, func(i, j int) bool {
		ri, wi := rank(whos[i])
		rj, wj := rank(whos[j])
		if ri != rj {
			return ri < rj
		}
		return wi < wj
	})
	return whos
}

func (c *cephCmd) configDump() int {
	var entries []map[string]any
	rows := [][]string{{"WHO", "MASK", "LEVEL", "OPTION", "VALUE", "RO"}}
	for _, who := range c.dumpOrder() {
		sec, mask, _ := configSection(who)
		for _, k := range sortedKeys(c.cs.ConfigDB[who]) {
			v := c.cs.ConfigDB[who][k]
			level, runtime := optionMeta(k)
			e := map[string]any{"section": sec, "name": k, "value": v, "level": level, "can_update_at_runtime": runtime, "mask": mask}
			if t, val, ok := strings.Cut(mask, ":"); ok {
				if t == "class" {
					e["device_class"] = val
				} else {
					e["location_type"], e["location_value"] = t, val
				}
			}
			entries = append(entries, e)
			indent := sec
			switch {
			case sec == "global":
			case strings.Contains(sec, "."):
				indent = "    " + sec
			default:
				indent = "  " + sec
			}
			rows = append(rows, []string{indent, mask, level, k, v, roMark(runtime)})
		}
	}
	if c.json() {
		if entries == nil {
			entries = []map[string]any{}
		}
		c.outJSON(entries)
		return 0
	}
	c.x.outf("%s", textTable(rows))
	return 0
}

// configShow is the manager's "config show": what a running daemon uses,
// from the compiled-in defaults, the monitors' database, the ceph.conf it
// read when it started and `ceph tell` overrides.
func (c *cephCmd) configShow(who, key string) int {
	if _, ok := c.cs.daemonHost(who); !ok || !c.s.daemonRunning(c.cs, who) {
		return c.fail(errnoENOENT, "no config state for daemon %s", who)
	}
	d := c.cs.daemon(who)
	file := d.FileConf
	if file == nil {
		file = c.cs.fileConfFor(who)
	}
	type entry struct{ value, source string }
	vals := map[string]entry{}
	for k, v := range c.cs.entityConfig(who) {
		vals[k] = entry{v[0], "mon"}
	}
	for k, v := range file {
		vals[k] = entry{v, "file"}
	}
	for k, v := range d.Overrides {
		vals[k] = entry{v, "override"}
	}
	if key != "" {
		key = normalizeKeyName(key)
		if e, ok := vals[key]; ok {
			c.x.outf("%s\n", e.value)
			return 0
		}
		if o := cephOptions[key]; o != nil {
			c.x.outf("%s\n", o.def)
			return 0
		}
		return c.fail(errnoENOENT, "unrecognized key '%s'", key)
	}
	if c.json() {
		out := []map[string]any{}
		for _, k := range sortedKeys(vals) {
			out = append(out, map[string]any{"name": k, "value": vals[k].value, "source": vals[k].source, "overrides": []any{}, "ignores": []any{}})
		}
		c.outJSON(out)
		return 0
	}
	rows := [][]string{{"NAME", "VALUE", "SOURCE", "OVERRIDES", "IGNORES"}}
	for _, k := range sortedKeys(vals) {
		rows = append(rows, []string{k, vals[k].value, vals[k].source, "", ""})
	}
	c.x.outf("%s", textTable(rows))
	return 0
}

// cephTime formats a utime_t as Ceph's formatters print it.
func cephTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000000+0000")
}

func (c *cephCmd) configLog(n int) int {
	log := c.cs.cli().ConfigLog
	var sets []cephConfigChangeset
	for i := len(log) - 1; i >= 0 && len(sets) < n; i-- {
		sets = append(sets, log[i])
	}
	if c.json() {
		out := []map[string]any{}
		for _, s := range sets {
			changes := []map[string]any{}
			for _, ch := range s.Changes {
				e := map[string]any{"key": ch.Key}
				if ch.Prev != nil {
					e["previous_value"] = *ch.Prev
				}
				if ch.New != nil {
					e["new_value"] = *ch.New
				}
				changes = append(changes, e)
			}
			out = append(out, map[string]any{"version": s.Version, "timestamp": cephTime(s.Time), "name": "", "changes": changes})
		}
		c.outJSON(out)
		return 0
	}
	for _, s := range sets {
		c.x.outf("--- %d --- %s ---\n", s.Version, s.Time.UTC().Format("2006-01-02T15:04:05.000000+0000"))
		for _, ch := range s.Changes {
			if ch.Prev != nil {
				c.x.outf("- %s = %s\n", ch.Key, *ch.Prev)
			}
			if ch.New != nil {
				c.x.outf("+ %s = %s\n", ch.Key, *ch.New)
			}
		}
	}
	return 0
}

// ---- tell ----

// tell sends a command to daemons: config get/set and injectargs act on
// the daemon's overrides, which a restart drops.
func (c *cephCmd) tell() int {
	target := c.words[1]
	var daemons []string
	kind, id, _ := strings.Cut(target, ".")
	if id == "*" {
		for _, h := range c.s.st.NodeOrder {
			for _, d := range c.cs.nodeDaemons(h, kind) {
				if c.s.daemonRunning(c.cs, d) {
					daemons = append(daemons, d)
				}
			}
		}
		sortDaemons(daemons)
	} else {
		if _, ok := c.cs.daemonHost(target); !ok {
			return c.fail(errnoENOENT, "problem getting command descriptions from %s", target)
		}
		if !c.s.daemonRunning(c.cs, target) {
			return c.fail(errnoENXIO, "problem getting command descriptions from %s", target)
		}
		daemons = []string{target}
	}
	code := 0
	for _, d := range daemons {
		out, errno, msg := c.tellOne(d, c.words[2:])
		if errno != 0 {
			if len(daemons) > 1 {
				c.x.errf("%s: ", d)
			}
			code = c.fail(errno, "%s", msg)
			continue
		}
		if len(daemons) > 1 {
			c.x.outf("%s: ", d)
		}
		c.x.outf("%s", out)
	}
	return code
}

func (c *cephCmd) tellOne(daemon string, w []string) (string, int, string) {
	d := c.cs.daemon(daemon)
	pretty := func(v any) string {
		b, _ := json.MarshalIndent(v, "", "    ")
		return string(b) + "\n"
	}
	set := func(k, v string) (string, int, string) {
		k = normalizeKeyName(k)
		o := cephOptions[k]
		if o == nil {
			return "", errnoEINVAL, fmt.Sprintf("error setting '%s' to '%s': (22) Invalid argument", k, v)
		}
		norm, msg := o.parseValue(v)
		if msg != "" {
			return "", errnoEINVAL, fmt.Sprintf("error setting '%s' to '%s': (22) Invalid argument", k, v)
		}
		if d.Overrides == nil {
			d.Overrides = map[string]string{}
		}
		d.Overrides[k] = norm
		note := ""
		if !o.runtime {
			note = " (not observed, change may require restart)"
		}
		return fmt.Sprintf("%s = '%s'%s ", k, norm, note), 0, ""
	}
	switch {
	case len(w) == 3 && w[0] == "config" && w[1] == "get":
		k := normalizeKeyName(w[2])
		o := cephOptions[k]
		if o == nil {
			return "", errnoENOENT, fmt.Sprintf("unrecognized option '%s'", k)
		}
		v := o.def
		if e, ok := c.cs.entityConfig(daemon)[k]; ok {
			v = e[0]
		}
		if f, ok := d.FileConf[k]; ok {
			v = f
		}
		if ov, ok := d.Overrides[k]; ok {
			v = ov
		}
		return pretty(map[string]string{k: v}), 0, ""
	case len(w) == 4 && w[0] == "config" && w[1] == "set":
		line, errno, msg := set(w[2], w[3])
		if errno != 0 {
			return "", errno, msg
		}
		return pretty(map[string]string{"success": line}), 0, ""
	case len(w) >= 2 && w[0] == "injectargs":
		var parts []string
		for _, a := range w[1:] {
			parts = append(parts, strings.Fields(a)...)
		}
		var lines []string
		for i := 0; i < len(parts); i++ {
			p := parts[i]
			if !strings.HasPrefix(p, "--") {
				return "", errnoEINVAL, fmt.Sprintf("injectargs: unexpected argument '%s'", p)
			}
			k, v, ok := strings.Cut(strings.TrimPrefix(p, "--"), "=")
			if !ok {
				if i+1 >= len(parts) {
					return "", errnoEINVAL, fmt.Sprintf("injectargs: no value for --%s", k)
				}
				i++
				v = parts[i]
			}
			line, errno, msg := set(k, v)
			if errno != 0 {
				return "", errno, msg
			}
			lines = append(lines, line)
		}
		return "{}\n" + strings.Join(lines, "\n") + "\n", 0, ""
	}
	return "", errnoEINVAL, "unrecognized command! [" + strings.Join(w, " ") + "]"
}

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
	}
	return c.invalid("")
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
	var missing []string
	stop := map[int]bool{}
	for _, id := range ids {
		if c.cs.OSDs[id] == nil {
			missing = append(missing, strconv.Itoa(id))
		}
		stop[id] = true
	}
	if len(missing) > 0 {
		return c.fail(errnoENOENT, "osd(s) %s do not exist", strings.Join(missing, ","))
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
	c.x.errf("OSD(s) %s are ok to stop without reducing availability or risking data, provided there are no other concurrent failures or interventions.\n%d PGs are likely to be degraded (but remain available) as a result.\n",
		strings.Join(ids2str(ids), ","), len(degraded))
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
	var mons []map[string]any
	for _, m := range c.cs.sortedMons() {
		mons = append(mons, map[string]any{"rank": m.Rank, "name": m.ID, "addr": m.Addr + ":6789/0"})
		if c.s.monUp(m) {
			quorum = append(quorum, m.Rank)
			names = append(names, m.ID)
		}
	}
	out := map[string]any{"election_epoch": 2 * len(c.cs.Mons), "quorum": quorum, "quorum_names": names,
		"monmap": map[string]any{"fsid": c.cs.FSID, "mons": mons}}
	if len(names) > 0 {
		out["quorum_leader_name"] = names[0]
	}
	c.outJSON(out)
	return 0
}

func (c *cephCmd) mgrDump() int {
	active := c.s.activeMgrLocked(c.cs)
	standbys := []map[string]any{}
	for _, id := range sortedKeys(c.cs.Mgrs) {
		m := c.cs.Mgrs[id]
		if m != active && !m.Stopped && !c.s.offline[m.Host] {
			standbys = append(standbys, map[string]any{"name": id})
		}
	}
	out := map[string]any{"epoch": c.cs.Epoch, "available": active != nil, "standbys": standbys, "modules": []string{"iostat", "nfs", "restful"}}
	if active != nil {
		out["active_name"] = active.ID
	}
	c.outJSON(out)
	return 0
}
