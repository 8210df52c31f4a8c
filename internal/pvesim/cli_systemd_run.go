package pvesim

import (
	"math"
	"path"
	"strconv"
	"strings"
	"time"
)

// systemd-run with a timer, as systemd 252 and later run it
// (src/run/run.c start_transient_trigger; the manager's
// transient_unit_from_message refuses a name in use): --on-active=SPAN
// makes the transient units NAME.timer and NAME.service; the timer fires
// after that real duration and the service runs COMMAND through the
// node's own programs. A COMMAND that is a script on the node (written by
// install) is read line by line as /bin/sh would: comments, `set -e`,
// `exit N`, and simple commands of the node's programs (mv, cp, rm,
// ifreload...); pipes, redirections and lists are refused as the nodes'
// shell refuses them. The timer waits with RemainAfterElapse=yes (the
// default): after it fired it stays active ("elapsed") until stopped;
// the service is collected after a success, or with --collect after a
// failure. systemctl stop NAME.timer disarms it, and both units are
// collected. Closing the simulator cancels every timer without running it.
//
// The timer fires exactly at its span: AccuracySec= is accepted but not
// modelled (systemd may fire up to AccuracySec late, default 1min).

// transientTimers is every node's transient units, guarded by Sim.mu.
type transientTimers struct {
	byNode map[string]map[string]*transientTimer // node -> NAME
	// changed is closed and replaced whenever a timer is armed, fires or
	// is disarmed (WaitTimersIdle).
	changed chan struct{}
}

type transientTimer struct {
	name        string // without .timer/.service
	argv        []string
	description string
	collect     bool
	after       time.Duration
	// armed: waiting; fired: elapsed (the timer stays loaded).
	fired   bool
	svc     string // the service's ActiveState: inactive, failed
	svcGone bool   // collected
	cancel  chan struct{}
	armedAt time.Time
}

func newTransientTimers() *transientTimers {
	return &transientTimers{byNode: map[string]map[string]*transientTimer{}, changed: make(chan struct{})}
}

func (tt *transientTimers) notify() {
	close(tt.changed)
	tt.changed = make(chan struct{})
}

// lookup returns the transient timer whose timer or service unit is unit.
func (tt *transientTimers) lookup(node, unit string) (*transientTimer, bool) {
	base, isTimer := strings.CutSuffix(unit, ".timer")
	if !isTimer {
		var ok bool
		if base, ok = strings.CutSuffix(unit, ".service"); !ok {
			return nil, false
		}
	}
	t := tt.byNode[node][base]
	if t == nil || (!isTimer && t.svcGone) {
		return nil, false
	}
	return t, isTimer
}

func (tt *transientTimers) drop(node string, t *transientTimer) {
	delete(tt.byNode[node], t.name)
	tt.notify()
}

// transientUnits shows the transient timers in systemctl: a unit hook
// for names some node has armed (on the other nodes the unit table
// answers).
func transientUnits(tt *transientTimers) *unitHook {
	return &unitHook{
		match: func(unit string) bool {
			for node := range tt.byNode {
				if t, _ := tt.lookup(node, unit); t != nil {
					return true
				}
			}
			return false
		},
		get: func(x *sshExec, unit string) *simUnit {
			t, isTimer := tt.lookup(x.node, unit)
			if t == nil {
				st := x.s.execState(x.node)
				if u := st.Units[unit]; u != nil {
					return u
				}
				return st.loadUnitFile(unit)
			}
			if isTimer {
				u := &simUnit{Enabled: "transient", Active: "active", Since: t.armedAt.UnixMicro()}
				if t.fired {
					u.Sub = "elapsed"
				}
				return u
			}
			return &simUnit{Enabled: "transient", Active: t.svc}
		},
		set: func(x *sshExec, unit string, u *simUnit, verb string) {
			t, isTimer := tt.lookup(x.node, unit)
			if t == nil {
				return
			}
			switch {
			case isTimer && u.Active == "inactive":
				// Stopping disarms; an inactive transient unit is collected.
				close(t.cancel)
				tt.drop(x.node, t)
			case !isTimer && u.Active == "inactive":
				t.svc, t.svcGone = "inactive", true
				tt.notify()
			case !isTimer && u.Active == "active":
				// systemctl start NAME.service runs it now.
				code := x.s.runServiceCommandLocked(x.node, t.argv)
				t.finishService(code)
				tt.notify()
				if t.svc == "failed" {
					u.Active = "failed"
				}
			}
		},
	}
}

func (t *transientTimer) finishService(code int) {
	t.svc = "inactive"
	if code != 0 {
		t.svc = "failed"
	}
	t.svcGone = code == 0 || t.collect
}

func sshSystemdRun(x *sshExec) int {
	var unit, onActive, desc string
	collect, quiet, haveTimer := false, false, false
	args := x.argv[1:]
	value := func(i *int, a, long, short string) (string, bool, bool) {
		switch {
		case strings.HasPrefix(a, long+"="):
			return strings.TrimPrefix(a, long+"="), true, true
		case a == long || (short != "" && a == short):
			if *i+1 >= len(args) {
				return "", true, false
			}
			*i++
			return args[*i], true, true
		case short != "" && strings.HasPrefix(a, short) && len(a) > 2 && !strings.HasPrefix(a, "--"):
			return a[2:], true, true
		}
		return "", false, true
	}
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			break
		}
		if a == "--" {
			i++
			break
		}
		matched := false
		for _, o := range []struct {
			long, short string
			dst         *string
		}{
			{"--unit", "-u", &unit}, {"--on-active", "", &onActive}, {"--description", "", &desc},
			{"--timer-property", "", nil}, {"--property", "-p", nil}, {"--setenv", "-E", nil},
			{"--service-type", "", nil}, {"--uid", "", nil}, {"--gid", "", nil}, {"--slice", "", nil},
		} {
			v, ok, has := value(&i, a, o.long, o.short)
			if !ok {
				continue
			}
			matched = true
			if !has {
				x.errf("systemd-run: option '%s' requires an argument\n", a)
				return 1
			}
			if o.dst != nil {
				*o.dst = v
			}
			if o.long == "--on-active" {
				haveTimer = true
			}
		}
		if matched {
			continue
		}
		switch a {
		case "-G", "--collect":
			collect = true
		case "-q", "--quiet":
			quiet = true
		case "--no-block", "--no-ask-password", "--system", "-r", "--remain-after-exit":
		default:
			x.errf("systemd-run: unrecognized option '%s'\n", a)
			return 1
		}
	}
	cmd := args[i:]
	if len(cmd) == 0 {
		x.errf("Command line to execute required.\n")
		return 1
	}
	var after time.Duration
	if haveTimer {
		d, ok := parseTimeSpan(onActive)
		if !ok {
			x.errf("Failed to parse OnActiveSec=%s: Invalid argument\n", onActive)
			return 1
		}
		after = d
	}
	if !x.root {
		x.errf("Failed to start transient %s unit: Interactive authentication required.\n", map[bool]string{true: "timer", false: "service"}[haveTimer])
		return 1
	}
	if unit == "" {
		unit = "run-r" + randHex(16)
	}
	unit = strings.TrimSuffix(strings.TrimSuffix(unit, ".service"), ".timer")
	// systemd-run makes the executable absolute before it asks the manager.
	if _, err := x.s.resolveExecutable(x, cmd[0]); err != "" {
		x.errf("Failed to find executable %s: %s\n", cmd[0], err)
		return 1
	}
	tt := x.s.nodeOS.timers
	kind := "service"
	if haveTimer {
		kind = "timer"
	}
	names := []string{unit + ".service"}
	if haveTimer {
		names = []string{unit + ".timer", unit + ".service"}
	}
	for _, n := range names {
		if tt.byNode[x.node][unit] != nil || x.unit(n) != nil {
			x.errf("Failed to start transient %s unit: Unit %s was already loaded or has a fragment file.\n", kind, n)
			return 1
		}
	}
	if !haveTimer {
		if !quiet {
			x.errf("Running as unit: %s.service\n", unit)
		}
		x.s.runServiceCommandLocked(x.node, cmd)
		return 0
	}
	t := &transientTimer{name: unit, argv: append([]string(nil), cmd...), description: desc, collect: collect,
		after: after, svc: "inactive", cancel: make(chan struct{}), armedAt: time.Now()}
	if tt.byNode[x.node] == nil {
		tt.byNode[x.node] = map[string]*transientTimer{}
	}
	tt.byNode[x.node][unit] = t
	tt.notify()
	x.s.armTransientTimer(x.node, t)
	if !quiet {
		x.errf("Running timer as unit: %s.timer\nWill run service as unit: %s.service\n", unit, unit)
	}
	return 0
}

// dropTransientTimersLocked forgets node's transient units without
// running them, as a reboot does. Caller holds s.mu.
func (s *Sim) dropTransientTimersLocked(node string) {
	tt := s.nodeOS.timers
	for _, t := range tt.byNode[node] {
		close(t.cancel)
	}
	delete(tt.byNode, node)
	tt.notify()
}

// armTransientTimer starts t's clock. Caller holds s.mu.
func (s *Sim) armTransientTimer(node string, t *transientTimer) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		clock := time.NewTimer(t.after)
		defer clock.Stop()
		select {
		case <-clock.C:
		case <-t.cancel:
			return
		case <-s.closing:
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		select {
		case <-t.cancel:
			return // disarmed while the clock ran out
		default:
		}
		tt := s.nodeOS.timers
		if tt.byNode[node][t.name] != t {
			return
		}
		t.fired = true
		t.svcGone = false
		code := s.runServiceCommandLocked(node, t.argv)
		t.finishService(code)
		tt.notify()
		s.saveLocked()
	}()
}

// shells are the interpreters a service's script may name.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true}

// binDirs are where the nodes' programs live.
var binDirs = []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}

// resolveExecutable finds argv0 as systemd does: a path must be an
// executable file on the node (one of its programs or a script), a bare
// name is looked up in PATH. It returns the script's content for scripts
// ("" for programs) or why not.
func (s *Sim) resolveExecutable(x *sshExec, argv0 string) (string, string) {
	if !strings.Contains(argv0, "/") {
		if s.nodeOS.programs[argv0] != nil || shells[argv0] {
			return "", ""
		}
		for _, d := range binDirs {
			if f := s.execState(x.node).Files[d+"/"+argv0]; f != nil && f.Mode&0o111 != 0 {
				return string(f.Content), ""
			}
		}
		return "", "No such file or directory"
	}
	p := path.Clean(argv0)
	if f, err := x.lookupFile(p); err == nil {
		if f.Mode&0o111 == 0 {
			return "", "Permission denied"
		}
		return string(f.Content), ""
	}
	base := path.Base(p)
	for _, d := range binDirs[2:] {
		if path.Dir(p) == d && (s.nodeOS.programs[base] != nil || shells[base]) {
			return "", ""
		}
	}
	return "", "No such file or directory"
}

// runServiceCommandLocked runs a service's command line as root on node
// and returns its exit status. Caller holds s.mu.
func (s *Sim) runServiceCommandLocked(node string, argv []string) int {
	x := &sshExec{s: s, node: node, user: "root", root: true}
	script, why := s.resolveExecutable(x, argv[0])
	if why != "" {
		return 203 // EXIT_EXEC
	}
	base := path.Base(argv[0])
	switch {
	case shells[base] && len(argv) >= 3 && argv[1] == "-c":
		return s.runScriptLocked(node, argv[2])
	case shells[base] && len(argv) >= 2:
		f, err := x.lookupFile(argv[1])
		if err != nil {
			return 127
		}
		return s.runScriptLocked(node, string(f.Content))
	case shells[base]:
		return 0 // a shell reading /dev/null
	case s.nodeOS.programs[base] == nil:
		return s.runScriptLocked(node, script)
	}
	return s.runLineLocked(node, argv)
}

// runLineLocked runs one simple command of the node's programs as root.
func (s *Sim) runLineLocked(node string, argv []string) int {
	prog := s.nodeOS.programs[path.Base(argv[0])]
	if prog == nil {
		return 127
	}
	x := &sshExec{s: s, node: node, user: "root", root: true, argv: append([]string{path.Base(argv[0])}, argv[1:]...)}
	code := prog.run(x)
	if x.changed {
		s.saveLocked()
	}
	return code
}

// runScriptLocked interprets a /bin/sh script of simple commands.
func (s *Sim) runScriptLocked(node, script string) int {
	errexit := false
	code := 0
	for _, line := range strings.Split(script, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		argv, err := parseShellLine(line)
		if err != nil {
			return 2 // sh: a syntax pvesim does not interpret
		}
		switch argv[0] {
		case "set":
			for _, a := range argv[1:] {
				if strings.HasPrefix(a, "-") && strings.Contains(a, "e") || a == "errexit" {
					errexit = true
				}
			}
			continue
		case "exit":
			if len(argv) > 1 {
				n, _ := strconv.Atoi(argv[1])
				return n
			}
			return code
		case "true", ":":
			code = 0
			continue
		case "false":
			code = 1
		default:
			code = s.runLineLocked(node, argv)
		}
		if code != 0 && errexit {
			return code
		}
	}
	return code
}

// parseTimeSpan parses a systemd time span (systemd.time(7)): "90",
// "90s", "2min", "1min 30s", "1m30s", "1.5h". A bare number is seconds.
func parseTimeSpan(s string) (time.Duration, bool) {
	units := []struct {
		name string
		d    time.Duration
	}{
		{"seconds", time.Second}, {"second", time.Second}, {"sec", time.Second}, {"s", time.Second},
		{"minutes", time.Minute}, {"minute", time.Minute}, {"min", time.Minute}, {"months", 2629800 * time.Second},
		{"month", 2629800 * time.Second}, {"msec", time.Millisecond}, {"ms", time.Millisecond}, {"m", time.Minute},
		{"hours", time.Hour}, {"hour", time.Hour}, {"hr", time.Hour}, {"h", time.Hour},
		{"days", 24 * time.Hour}, {"day", 24 * time.Hour}, {"d", 24 * time.Hour},
		{"weeks", 7 * 24 * time.Hour}, {"week", 7 * 24 * time.Hour}, {"w", 7 * 24 * time.Hour},
		{"years", 31557600 * time.Second}, {"year", 31557600 * time.Second}, {"y", 31557600 * time.Second},
		{"usec", time.Microsecond}, {"us", time.Microsecond}, {"µs", time.Microsecond}, {"M", 2629800 * time.Second},
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	var total time.Duration
	for s != "" {
		j := 0
		for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.') {
			j++
		}
		if j == 0 {
			return 0, false
		}
		n, err := strconv.ParseFloat(s[:j], 64)
		if err != nil {
			return 0, false
		}
		s = strings.TrimLeft(s[j:], " ")
		unit := time.Second
		for _, u := range units {
			if strings.HasPrefix(s, u.name) {
				rest := s[len(u.name):]
				if rest == "" || rest[0] == ' ' || rest[0] >= '0' && rest[0] <= '9' {
					unit, s = u.d, rest
					break
				}
			}
		}
		if s != "" && s[0] != ' ' && (s[0] < '0' || s[0] > '9') {
			return 0, false
		}
		// systemd refuses a span beyond its 64-bit microseconds (ERANGE);
		// converted as is, it would wrap to a negative duration.
		if part := n * float64(unit); part >= math.MaxInt64 || float64(total)+part >= math.MaxInt64 {
			return 0, false
		}
		total += time.Duration(n * float64(unit))
		s = strings.TrimLeft(s, " ")
	}
	return total, true
}
