package pvesim

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/subtle"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// SSH users of every simulated node besides root: SSHSudoUser may run any
// command through `sudo -n` without a password; SSHNoSudoUser may log in
// but is in no sudoers rule. Both authorize the lab's client key.
const (
	SSHSudoUser   = "terraform"
	SSHNoSudoUser = "auditor"
)

// sshSide is the simulator's SSH servers: one listener per node.
type sshSide struct {
	listeners []*sshListener
	clientPub ssh.PublicKey

	mu     sync.Mutex // guards log, faults and each listener's conns
	log    []SSHCommand
	faults []*SSHFault
	wg     sync.WaitGroup
}

type sshListener struct {
	node  string
	ln    net.Listener
	addr  string
	conns map[*ssh.ServerConn]bool
}

// newEd25519PEM returns a new ed25519 key in OpenSSH PEM form.
func newEd25519PEM(comment string) (string, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", err
	}
	b, err := ssh.MarshalPrivateKey(priv, comment)
	if err != nil {
		return "", err
	}
	return string(pem.EncodeToMemory(b)), nil
}

// ensureSSHKeys gives the lab a client key and every node a host key
// (states saved before SSH existed get theirs here). Caller holds s.mu.
func (s *Sim) ensureSSHKeys() error {
	if s.st.SSHClientKey == "" {
		k, err := newEd25519PEM("pvesim-lab")
		if err != nil {
			return err
		}
		s.st.SSHClientKey = k
	}
	for _, name := range s.st.NodeOrder {
		ns := s.st.Nodes[name]
		if ns.SSHHostKey == "" {
			k, err := newEd25519PEM("root@" + name)
			if err != nil {
				return err
			}
			ns.SSHHostKey = k
		}
	}
	return nil
}

// startSSH opens one SSH listener per node on listen's host, at listen's
// port + i when that port is not 0.
func (s *Sim) startSSH(listen string) error {
	s.mu.Lock()
	err := s.ensureSSHKeys()
	s.saveLocked()
	clientKey := s.st.SSHClientKey
	s.mu.Unlock()
	if err != nil {
		return err
	}
	signer, err := ssh.ParsePrivateKey([]byte(clientKey))
	if err != nil {
		return fmt.Errorf("lab ssh client key: %w", err)
	}
	side := &sshSide{clientPub: signer.PublicKey()}
	s.sshd = side
	host, portStr, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Errorf("ssh listen %q: %w", listen, err)
	}
	basePort, err := strconv.Atoi(portStr)
	if err != nil {
		return fmt.Errorf("ssh listen %q: bad port", listen)
	}
	for i, name := range s.st.NodeOrder {
		port := 0
		if basePort > 0 {
			port = basePort + i
		}
		ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			return fmt.Errorf("node %s ssh: %w", name, err)
		}
		epHost := host
		if epHost == "" || epHost == "0.0.0.0" || epHost == "::" {
			epHost = "127.0.0.1"
		}
		_, boundPort, _ := net.SplitHostPort(ln.Addr().String())
		ln = s.gateListener(name, ln)
		nl := &sshListener{node: name, ln: ln, addr: net.JoinHostPort(epHost, boundPort), conns: map[*ssh.ServerConn]bool{}}
		side.listeners = append(side.listeners, nl)
		side.wg.Add(1)
		go func() {
			defer side.wg.Done()
			s.acceptSSH(nl)
		}()
	}
	return nil
}

// sshServerConfig authenticates like the lab's sshd: root and the two
// test users with the lab's key, root also with root@pam's password (PVE
// sets PermitRootLogin yes; root@pam is the system's root).
func (s *Sim) sshServerConfig(node string) *ssh.ServerConfig {
	version := "SSH-2.0-OpenSSH_10.0p2 Debian-7"
	if !s.rel.atLeast9() {
		version = "SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u5"
	}
	checkPassword := func(user string, pw []byte) bool {
		if user != "root" {
			return false
		}
		s.mu.Lock()
		want := s.st.Domains[s.st.Nodes[node].Domain].RootPassword
		s.mu.Unlock()
		return subtle.ConstantTimeCompare(pw, []byte(want)) == 1
	}
	perms := func(user string) *ssh.Permissions {
		return &ssh.Permissions{Extensions: map[string]string{"user": user}}
	}
	return &ssh.ServerConfig{
		ServerVersion: version,
		PublicKeyCallback: func(c ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			switch c.User() {
			case "root", SSHSudoUser, SSHNoSudoUser:
				if bytes.Equal(key.Marshal(), s.sshd.clientPub.Marshal()) {
					return perms(c.User()), nil
				}
			}
			return nil, errors.New("public key not authorized")
		},
		PasswordCallback: func(c ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
			if checkPassword(c.User(), pw) {
				return perms(c.User()), nil
			}
			return nil, errors.New("wrong password")
		},
		KeyboardInteractiveCallback: func(c ssh.ConnMetadata, challenge ssh.KeyboardInteractiveChallenge) (*ssh.Permissions, error) {
			answers, err := challenge("", "", []string{"Password: "}, []bool{false})
			if err != nil {
				return nil, err
			}
			if len(answers) == 1 && checkPassword(c.User(), []byte(answers[0])) {
				return perms(c.User()), nil
			}
			return nil, errors.New("wrong password")
		},
	}
}

// hostSigner is node's current host key. Caller holds s.mu.
func (s *Sim) hostSigner(node string) (ssh.Signer, error) {
	signer, err := ssh.ParsePrivateKey([]byte(s.st.Nodes[node].SSHHostKey))
	if err != nil {
		return nil, fmt.Errorf("node %s ssh host key: %w", node, err)
	}
	return signer, nil
}

func (s *Sim) acceptSSH(nl *sshListener) {
	for {
		conn, err := nl.ln.Accept()
		if err != nil {
			return
		}
		s.sshd.wg.Add(1)
		go func() {
			defer s.sshd.wg.Done()
			s.serveSSHConn(nl, conn)
		}()
	}
}

func (s *Sim) serveSSHConn(nl *sshListener, conn net.Conn) {
	if s.isOffline(nl.node) || s.sshDown(nl.node) {
		_ = conn.Close() // a powered-off node (or a stopped sshd) answers nothing useful
		return
	}
	// The host key is read per connection, so RotateSSHHostKey takes
	// effect for the next client.
	s.mu.Lock()
	signer, err := s.hostSigner(nl.node)
	s.mu.Unlock()
	if err != nil {
		_ = conn.Close()
		return
	}
	cfg := s.sshServerConfig(nl.node)
	cfg.AddHostKey(signer)
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	sc, chans, reqs, err := ssh.NewServerConn(conn, cfg)
	if err != nil {
		_ = conn.Close()
		return
	}
	_ = conn.SetDeadline(time.Time{})
	side := s.sshd
	side.mu.Lock()
	nl.conns[sc] = true
	side.mu.Unlock()
	defer func() {
		side.mu.Lock()
		delete(nl.conns, sc)
		side.mu.Unlock()
		_ = sc.Close()
	}()
	go ssh.DiscardRequests(reqs)
	user := sc.Permissions.Extensions["user"]
	var sessions sync.WaitGroup
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "unknown channel type")
			continue
		}
		ch, chReqs, err := nc.Accept()
		if err != nil {
			continue
		}
		sessions.Add(1)
		go func() {
			defer sessions.Done()
			s.serveSSHSession(nl.node, user, sc, ch, chReqs)
		}()
	}
	sessions.Wait()
}

// serveSSHSession handles one session channel: env requests, one exec,
// and signals or a close that interrupt the running command.
func (s *Sim) serveSSHSession(node, user string, sc *ssh.ServerConn, ch ssh.Channel, reqs <-chan *ssh.Request) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var running sync.WaitGroup
	defer running.Wait()
	started := false
	for req := range reqs {
		switch req.Type {
		case "env":
			var kv struct{ Name, Value string }
			ok := ssh.Unmarshal(req.Payload, &kv) == nil && (kv.Name == "LANG" || strings.HasPrefix(kv.Name, "LC_"))
			_ = req.Reply(ok, nil) // Debian's sshd: AcceptEnv LANG LC_*
		case "exec":
			var p struct{ Command string }
			if started || ssh.Unmarshal(req.Payload, &p) != nil {
				_ = req.Reply(false, nil)
				continue
			}
			started = true
			_ = req.Reply(true, nil)
			running.Add(1)
			go func() {
				defer running.Done()
				code, ok := s.runSSHCommand(ctx, node, user, p.Command, ch, sc)
				if ok {
					_, _ = ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{uint32(code)}))
				}
				_ = ch.Close()
			}()
		case "signal":
			cancel()
		default:
			// shell, pty-req, subsystem: the simulator runs commands only.
			if req.WantReply {
				_ = req.Reply(false, nil)
			}
		}
	}
	cancel() // the client closed the channel
}

// runSSHCommand parses and runs one command line. It reports false when
// the command was interrupted or its connection dropped, so that no exit
// status is sent.
func (s *Sim) runSSHCommand(ctx context.Context, node, user, line string, ch ssh.Channel, sc *ssh.ServerConn) (int, bool) {
	rec := SSHCommand{Node: node, User: user, Line: line}
	defer func() { s.recordSSH(rec) }()
	argv, err := parseShellLine(line)
	if err != nil {
		_, _ = io.WriteString(ch.Stderr(), err.Error()+"\n")
		rec.ExitCode = 2
		return 2, true
	}
	rec.Argv = argv
	x := &sshExec{s: s, node: node, user: user, root: user == "root", argv: argv}
	// sudo is the shell's first word when the login is not root.
	if len(argv) > 0 && argv[0] == "sudo" {
		if code, ok := x.sudo(); !ok {
			_, _ = ch.Stderr().Write(x.stderr.Bytes())
			rec.ExitCode = code
			return code, true
		}
	}
	var prog *sshProgram
	if len(x.argv) > 0 {
		prog = s.nodeOS.programs[x.argv[0]]
	}
	if prog != nil && prog.readsStdin != nil && prog.readsStdin(x.argv) {
		in, err := readAllCtx(ctx, ch)
		if err != nil {
			rec.Interrupted = true
			return 0, false
		}
		x.stdin, rec.Stdin = in, in
	}
	if s.sshDown(node) {
		_ = sc.Close()
		rec.Interrupted, rec.ExitCode, rec.Fault = true, -1, FaultSSHDown.String()
		return 0, false
	}
	if f := s.sshFault(node, x.argv); f != nil {
		rec.Fault = "ssh-fault"
		if f.Drop {
			_ = sc.Close()
			rec.Interrupted, rec.ExitCode = true, -1
			return 0, false
		}
		select {
		case <-time.After(f.Delay):
		case <-ctx.Done():
			rec.Interrupted, rec.ExitCode = true, -1
			return 0, false
		}
		if f.Answer != nil {
			_, _ = io.WriteString(ch, f.Answer.Stdout)
			_, _ = io.WriteString(ch.Stderr(), f.Answer.Stderr)
			rec.ExitCode = f.Answer.ExitCode
			return f.Answer.ExitCode, true
		}
	}
	if prog != nil && !s.runProgramTime(ctx, node, x.argv) {
		rec.Interrupted, rec.ExitCode = true, -1
		return 0, false
	}
	code := x.run(prog)
	rec.ExitCode = code
	_, _ = ch.Write(x.stdout.Bytes())
	_, _ = ch.Stderr().Write(x.stderr.Bytes())
	return code, true
}

// readAllCtx reads r to EOF unless ctx ends first.
func readAllCtx(ctx context.Context, r io.Reader) ([]byte, error) {
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(r)
		done <- result{b, err}
	}()
	select {
	case res := <-done:
		return res.b, res.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *Sim) recordSSH(rec SSHCommand) {
	s.sshd.mu.Lock()
	s.sshd.log = append(s.sshd.log, rec)
	s.sshd.mu.Unlock()
}

func (s *Sim) sshFault(node string, argv []string) *SSHFault {
	prog := ""
	if len(argv) > 0 {
		prog = argv[0]
	}
	s.sshd.mu.Lock()
	defer s.sshd.mu.Unlock()
	for i, f := range s.sshd.faults {
		if (f.Node != "" && f.Node != node) || !f.re.MatchString(prog) {
			continue
		}
		if f.argsRE != nil && (len(argv) == 0 || !f.argsRE.MatchString(strings.Join(argv[1:], " "))) {
			continue
		}
		if f.Count > 0 {
			f.Count--
			if f.Count == 0 {
				s.sshd.faults = append(s.sshd.faults[:i:i], s.sshd.faults[i+1:]...)
			}
		}
		return f
	}
	return nil
}

func (s *Sim) closeSSH() {
	if s.sshd == nil {
		return
	}
	s.sshd.mu.Lock()
	for _, nl := range s.sshd.listeners {
		_ = nl.ln.Close()
		for c := range nl.conns {
			_ = c.Close()
		}
	}
	s.sshd.mu.Unlock()
	s.sshd.wg.Wait()
}

// sshInfo fills node's SSH fields of NodeInfo. Caller holds s.mu.
func (s *Sim) sshInfo(node string, ni *NodeInfo) {
	if s.sshd == nil {
		return
	}
	for _, nl := range s.sshd.listeners {
		if nl.node != node {
			continue
		}
		ni.SSHEndpoint = nl.addr
		if signer, err := s.hostSigner(node); err == nil {
			ni.SSHHostKey = strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey())))
			ni.SSHHostKeyFingerprint = ssh.FingerprintSHA256(signer.PublicKey())
		}
	}
}
