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
	// realJobs are the results of the real Ceph daemon operations this
	// command already ran (realCephJobs), by daemon name.
	realJobs map[string]error
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
	// elsewhere runs the command without s.mu when something outside the
	// simulator answers it (ok true): the real lab's `ceph`, whose ~1 s
	// per call would otherwise hold every API request up.
	elsewhere func(x *sshExec) (code int, ok bool)
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
	if prog.elsewhere != nil {
		if code, ok := prog.elsewhere(x); ok {
			return code
		}
	}
	x.s.mu.Lock()
	defer x.s.mu.Unlock()
	code := prog.run(x)
	if x.changed {
		x.s.saveLocked()
	}
	return code
}
