package pvesim

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"sort"
	"strings"
)

// Unit files an admin (or the provider) writes under /etc/systemd/system
// become units as systemd makes them: loaded on first reference or by
// daemon-reload, their [Install] section deciding what enable links, and
// a changed unit file or drop-in (<unit>.d/*.conf) setting
// NeedDaemonReload until the next daemon-reload. RebootNode boots a node:
// NIC rings back to their driver defaults, enabled units started, the
// ExecStart lines of enabled unit files run.

const systemdUnitDir = "/etc/systemd/system/"

// unitSuffixes are the unit types systemctl accepts by suffix.
var unitSuffixes = []string{".service", ".socket", ".target", ".timer", ".mount", ".path", ".slice", ".scope", ".device", ".swap", ".automount"}

func isUnitFileName(name string) bool {
	for _, suf := range unitSuffixes {
		if strings.HasSuffix(name, suf) && len(name) > len(suf) {
			return true
		}
	}
	return false
}

// unitDigest identifies what systemd would load for unit from /etc: its
// unit file there and its drop-ins; "" when there is neither.
func (st *nodeExecState) unitDigest(unit string) string {
	var paths []string
	for p := range st.Files {
		if p == systemdUnitDir+unit ||
			(strings.HasPrefix(p, systemdUnitDir+unit+".d/") && strings.HasSuffix(p, ".conf") && path.Dir(p) == systemdUnitDir+unit+".d") {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		return ""
	}
	sort.Strings(paths)
	h := sha256.New()
	for _, p := range paths {
		h.Write([]byte(p))
		h.Write([]byte{0})
		h.Write(st.Files[p].Content)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// unitFile returns unit's file under /etc/systemd/system.
func (st *nodeExecState) unitFile(unit string) *simFile {
	return st.Files[systemdUnitDir+unit]
}

// loadUnitFile makes the unit file of unit a unit of the node, as systemd
// loads a unit on first reference; nil when there is no such file.
func (st *nodeExecState) loadUnitFile(unit string) *simUnit {
	f := st.unitFile(unit)
	if f == nil {
		return nil
	}
	u := &simUnit{Enabled: "disabled", Active: "inactive", Fragment: systemdUnitDir + unit, Loaded: st.unitDigest(unit)}
	if !unitInstallable(f.Content) {
		u.Enabled = "static"
	}
	if st.Units == nil {
		st.Units = map[string]*simUnit{}
	}
	st.Units[unit] = u
	return u
}

// daemonReload reloads every unit from disk: unit files new under
// /etc/systemd/system become units, units whose file is gone are dropped
// unless they run, and NeedDaemonReload clears.
func (st *nodeExecState) daemonReload() {
	for name, u := range st.Units {
		if u.Fragment != "" && st.Files[u.Fragment] == nil && u.Active != "active" {
			delete(st.Units, name)
			continue
		}
		u.Loaded = st.unitDigest(name)
	}
	for p := range st.Files {
		name := strings.TrimPrefix(p, systemdUnitDir)
		if !strings.HasPrefix(p, systemdUnitDir) || strings.Contains(name, "/") || !isUnitFileName(name) || st.Units[name] != nil {
			continue
		}
		st.loadUnitFile(name)
	}
}

// needDaemonReload reports whether unit's files changed since systemd
// loaded it.
func (st *nodeExecState) needDaemonReload(unit string, u *simUnit) bool {
	return u != nil && st.unitDigest(unit) != u.Loaded
}

// unitSections returns the key=value lines of an INI-style unit file by
// section, values in order (systemd's syntax: '#' and ';' comments,
// trailing backslash continuations).
func unitSections(content []byte) map[string][][2]string {
	out := map[string][][2]string{}
	section := ""
	lines := strings.Split(string(content), "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		for strings.HasSuffix(line, "\\") && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, "\\") + " " + strings.TrimSpace(lines[i])
		}
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[' && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
		default:
			k, v, ok := strings.Cut(line, "=")
			if ok {
				out[section] = append(out[section], [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
			}
		}
	}
	return out
}

// unitInstallTargets are the units whose .wants/ or .requires/ directory
// enable links the unit into ([Install] WantedBy=, RequiredBy=, UpheldBy=).
func unitInstallTargets(content []byte) []string {
	var out []string
	for _, kv := range unitSections(content)["Install"] {
		switch kv[0] {
		case "WantedBy", "RequiredBy", "UpheldBy":
			out = append(out, strings.Fields(kv[1])...)
		}
	}
	return out
}

// unitInstallable reports whether enable has anything to do for a unit
// file: an [Install] section with WantedBy=, RequiredBy=, UpheldBy=,
// Alias= or Also=; other units are "static".
func unitInstallable(content []byte) bool {
	for _, kv := range unitSections(content)["Install"] {
		switch kv[0] {
		case "WantedBy", "RequiredBy", "UpheldBy", "Alias", "Also":
			if kv[1] != "" {
				return true
			}
		}
	}
	return false
}

// unitExecStart returns the commands of a unit's ExecStart lines, with
// systemd's prefixes (-, @, +, !, :) stripped.
func unitExecStart(content []byte) []string {
	var out []string
	for _, kv := range unitSections(content)["Service"] {
		if kv[0] != "ExecStart" {
			continue
		}
		if kv[1] == "" {
			out = nil // an empty assignment resets the list
			continue
		}
		out = append(out, strings.TrimLeft(kv[1], "-@+!:"))
	}
	return out
}

// bootUnits is what a boot does to node's units: everything is loaded
// from disk, enabled units run (their ExecStart commands, through the
// simulated programs), disabled ones do not. Caller holds s.mu.
func (s *Sim) bootUnits(node string) {
	st := s.execState(node)
	for _, u := range st.Units {
		switch u.Enabled {
		case "enabled":
			u.Active = "active"
		case "disabled", "masked":
			u.Active = "inactive"
		}
		if u.Active == "failed" {
			u.Active = "inactive"
		}
	}
	// Units of deleted files are gone after a boot, running or not.
	for name, u := range st.Units {
		if u.Fragment != "" && st.Files[u.Fragment] == nil {
			delete(st.Units, name)
		}
	}
	st.daemonReload()
	names := make([]string, 0, len(st.Units))
	for name := range st.Units {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		u := st.Units[name]
		if u.Fragment == "" || u.Enabled != "enabled" {
			continue
		}
		u.Active = "active"
		for _, line := range unitExecStart(st.Files[u.Fragment].Content) {
			argv, err := parseShellLine(line)
			if err != nil || len(argv) == 0 {
				u.Active = "failed"
				break
			}
			argv[0] = path.Base(argv[0])
			prog := s.nodeOS.programs[argv[0]]
			if prog == nil {
				u.Active = "failed"
				break
			}
			x := &sshExec{s: s, node: node, user: "root", root: true, argv: argv}
			if prog.run(x) != 0 {
				u.Active = "failed"
				break
			}
		}
	}
}
