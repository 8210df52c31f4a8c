package pvesim

import (
	"slices"
	"strings"
	"time"
)

// --- systemctl ---

// unitHook makes units a view of simulator state instead of entries of
// the node's unit table: Ceph's ceph-osd@N, ceph-mon@, ceph-mgr@ and their
// targets plug in here. get returns the unit's state (nil: no such
// unit); set is called after a verb changed the copy get returned.
type unitHook struct {
	match func(unit string) bool
	get   func(x *sshExec, unit string) *simUnit
	set   func(x *sshExec, unit string, u *simUnit, verb string)
}

func (x *sshExec) unitHookFor(unit string) *unitHook {
	for _, h := range x.s.nodeOS.units {
		if h.match(unit) {
			return h
		}
	}
	return nil
}

// unit returns unit's state: from its hook, else the node's table (a
// pointer into it, so changes stick).
func (x *sshExec) unit(unit string) *simUnit {
	if h := x.unitHookFor(unit); h != nil {
		return h.get(x, unit)
	}
	st := x.s.execState(x.node)
	if u := st.Units[unit]; u != nil {
		return u
	}
	return st.loadUnitFile(unit) // systemd loads a unit file on first reference
}

// setUnit hands a changed unit to its hook; table units changed in place.
func (x *sshExec) setUnit(unit string, u *simUnit, verb string) {
	if h := x.unitHookFor(unit); h != nil {
		h.set(x, unit, u, verb)
	}
}

// unitEnabledOK are UnitFileStates for which is-enabled exits 0.
var unitEnabledOK = []string{"enabled", "enabled-runtime", "static", "alias", "indirect", "generated"}

func sshSystemctl(x *sshExec) int {
	var verb string
	var units, props []string
	quiet, now := false, false
	tsFormat := "pretty"
	args := x.argv[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-q" || a == "--quiet":
			quiet = true
		case a == "--now":
			now = true
		case a == "--no-pager" || a == "--no-block" || a == "--no-ask-password" || a == "--system" || a == "--no-legend":
		case a == "-p" || a == "--property":
			if i+1 >= len(args) {
				x.errf("systemctl: option requires an argument -- 'p'\n")
				return 1
			}
			i++
			props = append(props, strings.Split(args[i], ",")...)
		case strings.HasPrefix(a, "--timestamp="):
			tsFormat = strings.TrimPrefix(a, "--timestamp=")
			switch tsFormat {
			case "pretty", "us", "µs", "utc", "us+utc", "µs+utc", "unix":
			default:
				x.errf("Invalid value for --timestamp: '%s'\n", tsFormat)
				return 1
			}
		case strings.HasPrefix(a, "--property="):
			props = append(props, strings.Split(strings.TrimPrefix(a, "--property="), ",")...)
		case strings.HasPrefix(a, "-p") && len(a) > 2 && !strings.HasPrefix(a, "--"):
			props = append(props, strings.Split(a[2:], ",")...)
		case strings.HasPrefix(a, "-"):
			x.errf("systemctl: unrecognized option '%s'\n", a)
			return 1
		case verb == "":
			verb = a
		default:
			units = append(units, unitName(a))
		}
	}
	needUnits := func() bool {
		if len(units) == 0 {
			x.errf("Too few arguments.\n")
			return false
		}
		return true
	}
	switch verb {
	case "is-active", "is-failed":
		if !needUnits() {
			return 1
		}
		code := 3
		if verb == "is-failed" {
			code = 1
		}
		for _, u := range units {
			state := "inactive"
			if un := x.unit(u); un != nil {
				state = un.Active
			}
			if !quiet {
				x.outf("%s\n", state)
			}
			if (verb == "is-active" && state == "active") || (verb == "is-failed" && state == "failed") {
				code = 0
			}
		}
		return code
	case "is-enabled":
		if !needUnits() {
			return 1
		}
		code := 1
		for _, u := range units {
			un := x.unit(u)
			if un == nil {
				x.errf("Failed to get unit file state for %s: No such file or directory\n", u)
				continue
			}
			if !quiet {
				x.outf("%s\n", un.Enabled)
			}
			if slices.Contains(unitEnabledOK, un.Enabled) {
				code = 0
			}
		}
		return code
	case "start", "stop", "restart", "try-restart", "reload-or-restart", "try-reload-or-restart", "force-reload":
		if !needUnits() {
			return 1
		}
		for _, u := range units {
			un := x.unit(u)
			switch {
			case !x.root:
				x.errf("Failed to %s %s: Access denied\n", verb, u)
				return 4
			case un == nil:
				x.errf("Failed to %s %s: Unit %s not found.\n", verb, u, u)
				return 5
			case un.Enabled == "masked" && verb != "stop":
				x.errf("Failed to %s %s: Unit %s is masked.\n", verb, u, u)
				return 1
			}
		}
		x.changed = true
		x.realCephJobs(verb, units)
		for _, u := range units {
			un := x.unit(u)
			if verb != "stop" && x.unitHookFor(u) == nil && x.s.execState(x.node).needDaemonReload(u, un) {
				x.errf("Warning: The unit file, source configuration file or drop-ins of %s changed on disk. Run 'systemctl daemon-reload' to reload units.\n", u)
			}
			wasActive := un.Active == "active"
			switch verb {
			case "stop":
				un.Active = "inactive"
			case "try-restart", "try-reload-or-restart", "force-reload":
				// restart (or reload) only what runs
			default:
				un.Active = "active"
			}
			if un.Active == "active" && (!wasActive || verb != "start") {
				un.Since = time.Now().UnixMicro()
			}
			x.setUnit(u, un, verb)
			// A hook reports a unit that failed to start.
			if un.Active == "failed" {
				x.errf("Job for %s failed because the control process exited with error code.\n"+
					"See \"systemctl status %s\" and \"journalctl -xeu %s\" for details.\n", u, u, u)
				return 1
			}
		}
		return 0
	case "enable", "disable":
		if !needUnits() {
			return 1
		}
		if !x.root {
			x.errf("Failed to %s unit: Access denied\n", verb)
			return 4
		}
		for _, u := range units {
			if x.unit(u) == nil {
				x.errf("Failed to %s unit: Unit file %s does not exist.\n", verb, u)
				return 1
			}
		}
		for _, u := range units {
			un := x.unit(u)
			target := "multi-user.target"
			if strings.HasSuffix(u, ".timer") {
				target = "timers.target"
			}
			linkTo := "/usr/lib/systemd/system/" + u
			if !x.s.rel.atLeast9() {
				linkTo = "/lib/systemd/system/" + u
			}
			if un.Fragment != "" {
				linkTo = un.Fragment
				if f := x.s.execState(x.node).Files[un.Fragment]; f != nil {
					if t := unitInstallTargets(f.Content); len(t) > 0 {
						target = t[0]
					}
				}
			}
			link := "/etc/systemd/system/" + target + ".wants/" + u
			switch {
			case un.Enabled == "static":
				x.errf("The unit files have no installation config (WantedBy=, RequiredBy=, UpheldBy=,\nAlso=, or Alias= settings in the [Install] section, and DefaultInstance= for\ntemplate units). This means they are not meant to be enabled or disabled using systemctl.\n")
			case verb == "enable" && un.Enabled != "enabled":
				un.Enabled = "enabled"
				if x.s.rel.atLeast9() {
					x.errf("Created symlink '%s' → '%s'.\n", link, linkTo)
				} else {
					x.errf("Created symlink %s → %s.\n", link, linkTo)
				}
			case verb == "disable" && un.Enabled == "enabled":
				un.Enabled = "disabled"
				if x.s.rel.atLeast9() {
					x.errf("Removed '%s'.\n", link)
				} else {
					x.errf("Removed \"%s\".\n", link)
				}
			}
			if now && un.Enabled != "masked" {
				if verb == "enable" {
					un.Active = "active"
				} else {
					un.Active = "inactive"
				}
			}
			x.setUnit(u, un, verb)
		}
		x.changed = true
		return 0
	case "daemon-reload":
		if !x.root {
			x.errf("Failed to reload daemon: Access denied\n")
			return 1
		}
		x.s.execState(x.node).daemonReload()
		x.changed = true
		return 0
	case "show":
		if !needUnits() {
			return 1
		}
		if len(props) == 0 {
			props = []string{"Id", "LoadState", "ActiveState", "SubState", "UnitFileState"}
		}
		for i, u := range units {
			if i > 0 {
				x.outf("\n")
			}
			un := x.unit(u)
			for _, p := range props {
				v := unitProperty(u, un, p)
				switch p {
				case "NeedDaemonReload":
					v = "no"
					if x.unitHookFor(u) == nil && x.s.execState(x.node).needDaemonReload(u, un) {
						v = "yes"
					}
				case "ActiveEnterTimestamp":
					v = x.unitTimestamp(un, tsFormat)
				}
				x.outf("%s=%s\n", p, v)
			}
		}
		return 0
	case "":
		x.errf("systemctl: pvesim does not list units; give a command verb\n")
		return 1
	default:
		x.errf("Unknown command verb '%s'.\n", verb)
		return 1
	}
}

func unitProperty(name string, un *simUnit, prop string) string {
	switch prop {
	case "Id", "Names":
		return name
	case "LoadState":
		if un == nil {
			return "not-found"
		}
		if un.Enabled == "masked" {
			return "masked"
		}
		return "loaded"
	case "ActiveState":
		if un == nil {
			return "inactive"
		}
		return un.Active
	case "SubState":
		switch {
		case un != nil && un.Sub != "":
			return un.Sub
		case un == nil || un.Active == "inactive":
			return "dead"
		case un.Active == "failed":
			return "failed"
		case strings.HasSuffix(name, ".timer"):
			return "waiting"
		case strings.HasSuffix(name, ".target"):
			return "active"
		}
		return "running"
	case "UnitFileState":
		if un == nil {
			return ""
		}
		return un.Enabled
	}
	return ""
}
