package pvesim

import "strings"

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
