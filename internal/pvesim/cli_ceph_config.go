package pvesim

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

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
	case "ls":
		return c.configLs()
	case "help":
		if len(w) != 3 {
			return c.invalid("config help <key>")
		}
		name := normalizeKeyName(w[2])
		o := cephOptions[name]
		if o == nil {
			// ConfigMonitor writes its "configuration option '<name>' not
			// recognized" into a stream that shadows the reply's: the
			// reply says nothing (Ceph 16 here and Ceph's main branch).
			return c.fail(errnoENOENT, "")
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
		return o.level, o.canUpdateAtRuntime()
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
	for k, v := range c.cs.shownConfig(who) {
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
