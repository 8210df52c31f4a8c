package pvesim

import (
	"regexp"
	"time"
)

// SSHCommands returns the commands the nodes' sshds received, oldest
// first.
func (s *Sim) SSHCommands() []SSHCommand {
	if s.sshd == nil {
		return nil
	}
	s.sshd.mu.Lock()
	defer s.sshd.mu.Unlock()
	return append([]SSHCommand(nil), s.sshd.log...)
}

// ResetSSHCommands forgets the recorded commands.
func (s *Sim) ResetSSHCommands() {
	if s.sshd == nil {
		return
	}
	s.sshd.mu.Lock()
	s.sshd.log = nil
	s.sshd.mu.Unlock()
}

// InjectSSHFault adds a fault. An invalid Program regexp matches nothing.
func (s *Sim) InjectSSHFault(f SSHFault) {
	re, err := regexp.Compile("^(?:" + f.Program + ")$")
	if f.Program == "" {
		re, err = regexp.Compile("")
	}
	if err != nil {
		re = regexp.MustCompile(`a\A`)
	}
	f.re = re
	if f.Args != "" {
		if f.argsRE, err = regexp.Compile("^(?:" + f.Args + ")$"); err != nil {
			f.argsRE = regexp.MustCompile(`a\A`)
		}
	}
	if s.sshd == nil {
		return
	}
	s.sshd.mu.Lock()
	s.sshd.faults = append(s.sshd.faults, &f)
	s.sshd.mu.Unlock()
}

// ClearSSHFaults removes all SSH faults.
func (s *Sim) ClearSSHFaults() {
	if s.sshd == nil {
		return
	}
	s.sshd.mu.Lock()
	s.sshd.faults = nil
	s.sshd.mu.Unlock()
}

// DropSSHConnections closes every open SSH connection to node, as a
// restarted sshd or a NAT timeout would.
func (s *Sim) DropSSHConnections(node string) {
	if s.sshd == nil {
		return
	}
	s.sshd.mu.Lock()
	defer s.sshd.mu.Unlock()
	for _, nl := range s.sshd.listeners {
		if nl.node != node {
			continue
		}
		for c := range nl.conns {
			_ = c.Close()
		}
	}
}

// SSHConnections counts node's open SSH connections.
func (s *Sim) SSHConnections(node string) int {
	if s.sshd == nil {
		return 0
	}
	s.sshd.mu.Lock()
	defer s.sshd.mu.Unlock()
	for _, nl := range s.sshd.listeners {
		if nl.node == node {
			return len(nl.conns)
		}
	}
	return 0
}

// SSHClientKeyPEM is the lab's private key (OpenSSH PEM) that every node
// authorizes for root, SSHSudoUser and SSHNoSudoUser.
func (s *Sim) SSHClientKeyPEM() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.SSHClientKey
}

// RotateSSHHostKey gives node a new host key, as a reinstall would; new
// connections see it.
func (s *Sim) RotateSSHHostKey(node string) error {
	k, err := newEd25519PEM("root@" + node)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.Nodes[node].SSHHostKey = k
	s.saveLocked()
	return nil
}

// SSHCommand is one exec request a node's sshd received.
type SSHCommand struct {
	Node string
	User string
	Line string   // the command line as sent
	Argv []string // as the simulated shell split it; nil when refused
	// Stdin is what the command read from standard input.
	Stdin    []byte
	ExitCode int
	// Interrupted is set when the client closed the session or sent a
	// signal before the command finished.
	Interrupted bool
	// Fault is "ssh-down" when a FaultSSHDown dropped the connection
	// instead, "ssh-fault" when an SSHFault acted; "" otherwise.
	Fault string
}

// SSHFault is an injected misbehaviour of a node's sshd for commands whose
// program (after sudo) matches.
type SSHFault struct {
	Node    string // "" matches any node
	Program string // regexp on argv[0] after sudo; "" matches any
	// Args is a regexp on the arguments after the program, joined by
	// single spaces ("-i cx354ap1"); "" matches any.
	Args string
	// Delay holds the command this long before it runs (a slow command);
	// a client that gives up interrupts it.
	Delay time.Duration
	// Drop closes the whole SSH connection instead of running the command.
	Drop bool
	// Answer, when set, is printed and returned instead of running the
	// command: a tool that claims success without effect (tuned-adm
	// without its daemon) or fails in a way the simulator does not model.
	Answer *SSHAnswer
	Count  int // 0 = unlimited, else fire N times

	re, argsRE *regexp.Regexp
}

// SSHAnswer is the output and exit status of a faked command.
type SSHAnswer struct {
	Stdout, Stderr string
	ExitCode       int
}
