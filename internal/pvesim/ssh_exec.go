package pvesim

import (
	"bytes"
	"fmt"
	"strings"
)

// sshExec is one command run by a node's sshd: its argv after the shell
// and sudo, who runs it, and what it prints.
type sshExec struct {
	s    *Sim
	node string
	user string // login name
	// root is set for root logins and commands run through sudo.
	root    bool
	viaSudo bool
	argv    []string
	stdin   []byte

	stdout, stderr bytes.Buffer
	// changed asks for the state to be saved after the command.
	changed bool
}

func (x *sshExec) outf(format string, args ...any) { fmt.Fprintf(&x.stdout, format, args...) }
func (x *sshExec) errf(format string, args ...any) { fmt.Fprintf(&x.stderr, format, args...) }

// sshProgram is a program the simulated nodes have. run executes with
// s.mu held, so it may read and change the simulator's state (the same
// state the API serves) and returns the exit status. readsStdin reports
// whether the program reads standard input for these arguments; the
// input is read before the lock is taken.
type sshProgram struct {
	readsStdin func(argv []string) bool
	run        func(x *sshExec) int
}

// sudo strips a leading `sudo [-n] [--]` and makes the command root's, as
// the lab's sudoers allows SSHSudoUser without a password and nobody else.
// It returns the exit status and false when sudo refuses.
func (x *sshExec) sudo() (int, bool) {
	args := x.argv[1:]
	nonInteractive := false
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		a := args[0]
		args = args[1:]
		if a == "--" {
			break
		}
		switch a {
		case "-n", "--non-interactive":
			nonInteractive = true
		default:
			x.errf("sudo: pvesim simulates only the options -n and --, not %s\n", a)
			return 1, false
		}
	}
	if len(args) == 0 {
		x.errf("usage: sudo -h | -K | -k | -V\nusage: sudo [-AbEHknPS] [-C num] [-D directory] [-g group] [-h host] [-p prompt] [-R directory] [-T timeout] [-u user] [VAR=value] [-i | -s] [command [arg ...]]\n")
		return 1, false
	}
	switch x.user {
	case "root", SSHSudoUser:
	default:
		if !nonInteractive {
			x.errf("sudo: a terminal is required to read the password; either use the -S option to read from standard input or configure an askpass helper\n")
		}
		x.errf("sudo: a password is required\n")
		return 1, false
	}
	x.argv, x.root, x.viaSudo = args, true, true
	return 0, true
}

// run executes the command under s.mu.
func (x *sshExec) run(prog *sshProgram) int {
	if len(x.argv) == 0 {
		return 0
	}
	if prog == nil {
		if x.viaSudo {
			x.errf("sudo: %s: command not found\n", x.argv[0])
			return 1
		}
		x.errf("bash: line 1: %s: command not found\n", x.argv[0])
		return 127
	}
	x.s.mu.Lock()
	defer x.s.mu.Unlock()
	code := prog.run(x)
	if x.changed {
		x.s.saveLocked()
	}
	return code
}

// Test hooks: what a node's SSH side holds, and changes made behind the
// provider's back (drift).

// TunedProfile returns node's active tuned profile ("" when off).
func (s *Sim) TunedProfile(node string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.execState(node).Tuned
}

// SetTunedProfile changes node's tuned profile, as an admin would.
func (s *Sim) SetTunedProfile(node, profile string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.execState(node).Tuned = profile
	s.saveLocked()
}

// NICRing returns iface's current ring sizes on node.
func (s *Sim) NICRing(node, iface string) (rx, tx int, ok bool) {
	m, ok := nicModelOf(iface)
	if !ok {
		return 0, 0, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.execState(node).ring(iface, m)
	return r.RX, r.TX, true
}

// SetNICRing changes iface's ring sizes on node without checks.
func (s *Sim) SetNICRing(node, iface string, rx, tx int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.execState(node)
	if st.Rings == nil {
		st.Rings = map[string]*nicRing{}
	}
	st.Rings[iface] = &nicRing{RX: rx, TX: tx}
	s.saveLocked()
}

// UnitState returns a unit's UnitFileState and ActiveState on node; ok is
// false for a unit the node does not have.
func (s *Sim) UnitState(node, unit string) (enabled, active string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.execState(node).Units[unitName(unit)]
	if u == nil {
		return "", "", false
	}
	return u.Enabled, u.Active, true
}

// SetUnitState sets (or adds) a unit on node.
func (s *Sim) SetUnitState(node, unit, enabled, active string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.execState(node).Units[unitName(unit)] = &simUnit{Enabled: enabled, Active: active}
	s.saveLocked()
}

// NodeFile returns a file as node sees it.
func (s *Sim) NodeFile(node, path string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := (&sshExec{s: s, node: node, root: true}).lookupFile(path)
	if err != nil {
		return nil, false
	}
	return append([]byte(nil), f.Content...), true
}

// SetNodeFile writes a file on node (mode 0644 root:root outside
// /etc/pve), as an admin would.
func (s *Sim) SetNodeFile(node, path string, content []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	x := &sshExec{s: s, node: node, root: true}
	_ = x.storeFile(path, &simFile{Content: append([]byte(nil), content...), Mode: 0o644, Owner: "root", Group: "root"})
	s.saveLocked()
}

// TrustedCAs lists the files under /usr/local/share/ca-certificates the
// node's trust store holds since its last update-ca-certificates.
func (s *Sim) TrustedCAs(node string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.execState(node).CATrusted...)
}
