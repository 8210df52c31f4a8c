package pvesim

import (
	"crypto/x509"
	"encoding/pem"
	"slices"
	"sort"
	"strconv"
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

// --- tuned-adm ---

const tunedNoDBus = "Cannot talk to TuneD daemon via DBus. Is TuneD daemon running?\n"

func sshTunedAdm(x *sshExec) int {
	var args []string
	for _, a := range x.argv[1:] {
		if a != "--async" {
			args = append(args, a)
		}
	}
	actions := "'list', 'active', 'off', 'profile', 'profile_info', 'recommend', 'verify', 'auto_profile', 'profile_mode'"
	if len(args) == 0 {
		x.errf("usage: tuned-adm [-h] [--version] [--debug] [--async] [--timeout TIMEOUT] [--loglevel LOGLEVEL] {list,active,off,profile,profile_info,recommend,verify,auto_profile,profile_mode} ...\ntuned-adm: error: the following arguments are required: action\n")
		return 2
	}
	st := x.s.execState(x.node)
	unit := st.Units["tuned.service"]
	daemon := unit != nil && unit.Active == "active"
	printActive := func() int {
		if st.Tuned == "" {
			x.outf("No current active profile.\n")
			return 1
		}
		x.outf("Current active profile: %s\n", st.Tuned)
		return 0
	}
	switch args[0] {
	case "active":
		if !daemon {
			x.errf(tunedNoDBus)
			if st.Tuned == "" {
				x.outf("No current active profile.\n")
				return 1
			}
			x.outf("It seems that tuned daemon is not running, preset profile is not activated.\nPreset profile: %s\n", st.Tuned)
			return 0
		}
		return printActive()
	case "list":
		x.outf("Available profiles:\n")
		for _, p := range sortedTunedProfiles() {
			x.outf("%-30s- %s\n", "- "+p, tunedProfiles[p])
		}
		if !daemon {
			x.errf(tunedNoDBus)
		}
		printActive()
		return 0
	case "profile":
		if len(args) == 1 {
			return sshTunedAdm(&sshExec{s: x.s, node: x.node, argv: []string{"tuned-adm", "list"}})
		}
		name := strings.Join(args[1:], " ")
		for _, p := range args[1:] {
			if _, ok := tunedProfiles[p]; !ok {
				x.errf("Unable to switch profile: Cannot load profile(s) '%s': Cannot find profile '%s' in '['/etc/tuned/profiles', '/usr/lib/tuned/profiles']'.\n", name, p)
				return 1
			}
		}
		if !x.root {
			x.errf("Unable to switch profile: Unauthorized\n")
			return 1
		}
		if !daemon {
			// tuned-adm restarts the daemon through systemd, then switches
			// over D-Bus.
			x.errf(tunedNoDBus)
			x.outf("Trying to (re)start tuned...\n")
			if unit == nil || unit.Enabled == "masked" {
				x.errf("TuneD (re)start failed, check TuneD logs for details.\nUnable to switch profile.\n")
				return 1
			}
			x.outf("TuneD (re)started.\n")
			unit.Active = "active"
		}
		st.Tuned = name
		x.changed = true
		return 0
	case "off":
		if !daemon {
			x.errf(tunedNoDBus)
			x.outf("Not supported in no_daemon mode.\n")
			return 1
		}
		if !x.root {
			x.errf("Cannot disable active profile.\n")
			return 1
		}
		st.Tuned = ""
		x.changed = true
		return 0
	case "verify":
		if !daemon {
			x.errf(tunedNoDBus)
			x.outf("Not supported in no_daemon mode.\n")
			return 1
		}
		x.outf("Verification succeeded, current system settings match the preset profile.\nSee TuneD log file ('/var/log/tuned/tuned.log') for details.\n")
		return 0
	default:
		x.errf("usage: tuned-adm [-h] [--version] [--debug] [--async] [--timeout TIMEOUT] [--loglevel LOGLEVEL] {list,active,off,profile,profile_info,recommend,verify,auto_profile,profile_mode} ...\n"+
			"tuned-adm: error: argument action: invalid choice: '%s' (choose from %s)\n", args[0], actions)
		return 2
	}
}

// --- ethtool ---

func sshEthtool(x *sshExec) int {
	if len(x.argv) < 3 {
		x.errf("ethtool: bad command line argument(s)\nFor more information run ethtool -h\n")
		return 1
	}
	switch x.argv[1] {
	case "-g", "--show-ring":
		return x.ethtoolShowRing(x.argv[2])
	case "-G", "--set-ring":
		return x.ethtoolSetRing(x.argv[2], x.argv[3:])
	case "-i", "--driver":
		return x.ethtoolDriver(x.argv[2])
	}
	x.errf("ethtool: pvesim simulates only -g/--show-ring, -G/--set-ring and -i/--driver, not %s\n", x.argv[1])
	return 1
}

// netDeviceExists reports whether the node has a network device iface.
func (x *sshExec) netDeviceExists(iface string) bool {
	ns := x.s.st.Nodes[x.node]
	if iface == "lo" || slices.Contains(ns.Physical, iface) {
		return true
	}
	return ns.Applied != nil && ns.Applied.Ifaces[iface] != nil
}

func (x *sshExec) ethtoolShowRing(iface string) int {
	if !x.netDeviceExists(iface) {
		x.errf("netlink error: no device matches name\nnetlink error: No such device\n")
		return 1
	}
	m, ok := nicModelOf(iface)
	if !ok {
		x.errf("netlink error: Operation not supported\n")
		return 1
	}
	r := x.s.execState(x.node).ring(iface, m)
	if x.s.rel.atLeast9() {
		// ethtool 6.14 (Debian trixie)
		x.outf("Ring parameters for %s:\nPre-set maximums:\nRX:\t\t\t%d\nRX Mini:\t\tn/a\nRX Jumbo:\t\tn/a\nTX:\t\t\t%d\nTX push buff len:\tn/a\n"+
			"Current hardware settings:\nRX:\t\t\t%d\nRX Mini:\t\tn/a\nRX Jumbo:\t\tn/a\nTX:\t\t\t%d\n"+
			"RX Buf Len:\t\tn/a\nCQE Size:\t\tn/a\nTX Push:\t\toff\nRX Push:\t\toff\nTX push buff len:\tn/a\nTCP data split:\t\tn/a\n",
			iface, m.rxMax, m.txMax, r.RX, r.TX)
		return 0
	}
	// ethtool 6.1 (Debian bookworm)
	x.outf("Ring parameters for %s:\nPre-set maximums:\nRX:\t\t%d\nRX Mini:\tn/a\nRX Jumbo:\tn/a\nTX:\t\t%d\n"+
		"Current hardware settings:\nRX:\t\t%d\nRX Mini:\tn/a\nRX Jumbo:\tn/a\nTX:\t\t%d\n"+
		"RX Buf Len:\tn/a\nCQE Size:\tn/a\nTX Push:\toff\nTCP data split:\tn/a\n",
		iface, m.rxMax, m.txMax, r.RX, r.TX)
	return 0
}

func (x *sshExec) ethtoolSetRing(iface string, params []string) int {
	req := map[string]int{}
	for i := 0; i < len(params); i++ {
		p := params[i]
		switch p {
		case "rx", "tx", "rx-mini", "rx-jumbo", "rx-buf-len", "cqe-size", "tx-push-buf-len":
		case "tx-push", "rx-push", "tcp-data-split":
			x.errf("netlink error: setting %s is not supported\nnetlink error: Operation not supported\n", p)
			return 81
		default:
			x.errf("ethtool (-G): unknown parameter '%s'\n", p)
			return 1
		}
		if i+1 >= len(params) {
			x.errf("ethtool (-G): no value for parameter '%s'\n", p)
			return 1
		}
		v, err := strconv.ParseUint(params[i+1], 10, 32)
		if err != nil {
			x.errf("ethtool (-G): invalid value '%s' for parameter '%s'\n", params[i+1], p)
			return 1
		}
		req[p] = int(v)
		i++
	}
	if !x.netDeviceExists(iface) {
		x.errf("netlink error: no device matches name\nnetlink error: No such device\n")
		return 81
	}
	if !x.root {
		x.errf("netlink error: Operation not permitted\n")
		return 81
	}
	m, ok := nicModelOf(iface)
	if !ok {
		x.errf("netlink error: Operation not supported\n")
		return 81
	}
	for _, p := range []string{"rx-buf-len", "cqe-size", "tx-push-buf-len"} {
		if _, set := req[p]; set {
			x.errf("netlink error: setting %s is not supported\nnetlink error: Operation not supported\n", strings.ReplaceAll(p, "-", " "))
			return 81
		}
	}
	// The kernel checks the maxima before the driver sees the request.
	if req["rx"] > m.rxMax || req["tx"] > m.txMax || req["rx-mini"] > 0 || req["rx-jumbo"] > 0 {
		x.errf("netlink error: requested ring size exceeds maximum\nnetlink error: Invalid argument\n")
		return 81
	}
	st := x.s.execState(x.node)
	cur := st.ring(iface, m)
	next := cur
	if v, ok := req["rx"]; ok {
		next.RX = m.adjust(v, m.rxMin)
	}
	if v, ok := req["tx"]; ok {
		next.TX = m.adjust(v, m.txMin)
		if m.txMinExclusive > 0 && next.TX <= m.txMinExclusive {
			x.errf("netlink error: Invalid argument\n")
			return 81
		}
	}
	if next != cur {
		if st.Rings == nil {
			st.Rings = map[string]*nicRing{}
		}
		st.Rings[iface] = &next
		x.changed = true
	}
	return 0
}

// adjust applies what the driver does to a requested ring size.
func (m nicModel) adjust(v, lowest int) int {
	if m.roundPow2 > 0 {
		p := 1
		for p < v {
			p <<= 1
		}
		v = p
	}
	if v < lowest {
		v = lowest
	}
	if m.align > 0 && v%m.align != 0 {
		v += m.align - v%m.align
	}
	return v
}

// --- update-ca-certificates ---

const localCADir = "/usr/local/share/ca-certificates/"

func sshUpdateCACertificates(x *sshExec) int {
	fresh := false
	for _, a := range x.argv[1:] {
		switch a {
		case "-f", "--fresh":
			fresh = true
		case "-v", "--verbose":
		default:
			x.errf("update-ca-certificates: [--verbose] [--fresh]\n")
			return 1
		}
	}
	if !x.root {
		x.errf("/usr/sbin/update-ca-certificates: 94: cannot create /etc/ssl/certs/ca-certificates.crt.new: Permission denied\n")
		return 2
	}
	st := x.s.execState(x.node)
	var now []string
	for p := range st.Files {
		if strings.HasPrefix(p, localCADir) && strings.HasSuffix(p, ".crt") {
			now = append(now, strings.TrimPrefix(p, localCADir))
		}
	}
	sort.Strings(now)
	old := st.CATrusted
	if fresh {
		old = nil
	}
	added, removed := 0, 0
	for _, n := range now {
		if !slices.Contains(old, n) {
			added++
		}
	}
	for _, n := range st.CATrusted {
		if !slices.Contains(now, n) || fresh {
			removed++
			delete(st.Files, "/etc/ssl/certs/"+pemName(n))
		}
	}
	x.outf("Updating certificates in /etc/ssl/certs...\n")
	x.errf("rehash: warning: skipping ca-certificates.crt,it does not contain exactly one certificate or CRL\n")
	for _, n := range now {
		f := st.Files[localCADir+n]
		if !oneCertificate(f.Content) {
			x.errf("rehash: warning: skipping %s,it does not contain exactly one certificate or CRL\n", pemName(n))
		}
		st.Files["/etc/ssl/certs/"+pemName(n)] = &simFile{Content: f.Content, Mode: 0o644, Owner: "root", Group: "root"}
	}
	st.CATrusted = now
	x.changed = true
	x.outf("%d added, %d removed; done.\nRunning hooks in /etc/ca-certificates/update.d...\ndone.\n", added, removed)
	return 0
}

// pemName is the name update-ca-certificates links a local CA file as.
func pemName(crt string) string {
	return strings.ReplaceAll(strings.TrimSuffix(crt, ".crt"), "/", "_") + ".pem"
}

// oneCertificate reports whether b is exactly one PEM certificate.
func oneCertificate(b []byte) bool {
	block, rest := pem.Decode(b)
	if block == nil || block.Type != "CERTIFICATE" || strings.TrimSpace(string(rest)) != "" {
		return false
	}
	_, err := x509.ParseCertificate(block.Bytes)
	return err == nil
}
