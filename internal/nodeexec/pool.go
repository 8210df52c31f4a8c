package nodeexec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// Address is where a node's sshd listens.
type Address struct {
	Host string
	Port int // 0 means 22
}

// Config configures a Pool.
type Config struct {
	// User is the login; "" means root. Any other user runs every command
	// through `sudo -n --` and needs a password-less sudo rule.
	User string
	// PrivateKey is a PEM private key, PrivateKeyPassphrase its passphrase
	// when encrypted.
	PrivateKey, PrivateKeyPassphrase Secret
	// Password is tried after keys, also for keyboard-interactive prompts.
	Password Secret
	// Agent uses the SSH agent at AgentSocket (default $SSH_AUTH_SOCK).
	Agent       bool
	AgentSocket string
	// KnownHostsFile holds the trusted host keys (OpenSSH format). Required.
	KnownHostsFile string
	// TrustOnFirstUse accepts and records the key of a node the file does
	// not know yet. A changed key is refused regardless.
	TrustOnFirstUse bool
	// Resolve returns a node's address. Required.
	Resolve func(ctx context.Context, node string) (Address, error)
	// ConnectTimeout bounds dialing and the SSH handshake (default 15s).
	ConnectTimeout time.Duration
	// CommandTimeout bounds a command without its own timeout (default
	// 10 minutes).
	CommandTimeout time.Duration
	// MaxSessionsPerNode caps concurrent commands on one node (default 8,
	// below OpenSSH's MaxSessions of 10 per connection).
	MaxSessionsPerNode int
	// Allow, when set, judges every command before it runs (its argv,
	// secrets redacted); an error refuses it. The adoption command uses it
	// to run only commands that read.
	Allow func(argv []string) error
	// Logf receives debug events with key/value pairs; never secrets or
	// standard input.
	Logf func(msg string, kv ...any)
}

// Result is what a command printed and how it exited.
type Result struct {
	Stdout, Stderr []byte
	ExitCode       int
	// Truncated is set when output beyond maxOutput was dropped.
	Truncated bool
}

// maxOutput caps what one stream of one command may hold in memory.
const maxOutput = 16 << 20

// closeGrace is how long an interrupted command's session may take to
// close before the whole connection is dropped.
const closeGrace = 2 * time.Second

// Pool runs commands on nodes, with one SSH connection per node reused
// for every command (a session each) and re-established when it broke.
type Pool struct {
	cfg        Config
	user       string
	sudo       bool
	auth       []ssh.AuthMethod
	closeAgent func()
	hk         *hostKeys
	locks      *keyedMutex

	mu     sync.Mutex
	nodes  map[string]*nodeConn
	closed bool
}

type nodeConn struct {
	mu     sync.Mutex // held while connecting
	client *ssh.Client
	sem    chan struct{}
}

// New checks cfg and prepares a pool. It connects to nothing yet: a node
// is contacted when a command first runs on it.
func New(cfg Config) (*Pool, error) {
	if cfg.KnownHostsFile == "" {
		return nil, errors.New("no known_hosts file: host keys must be verified")
	}
	if cfg.Resolve == nil {
		return nil, errors.New("no node address resolver (provider bug)")
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = 15 * time.Second
	}
	if cfg.CommandTimeout <= 0 {
		cfg.CommandTimeout = 10 * time.Minute
	}
	if cfg.MaxSessionsPerNode <= 0 {
		cfg.MaxSessionsPerNode = 8
	}
	user := cfg.User
	if user == "" {
		user = "root"
	}
	auth, closeAgent, err := authMethods(&cfg)
	if err != nil {
		return nil, err
	}
	return &Pool{
		cfg: cfg, user: user, sudo: user != "root", auth: auth, closeAgent: closeAgent,
		hk:    &hostKeys{file: cfg.KnownHostsFile, tofu: cfg.TrustOnFirstUse, logf: cfg.Logf},
		locks: newKeyedMutex(), nodes: map[string]*nodeConn{},
	}, nil
}

// User is the login name.
func (p *Pool) User() string { return p.user }

// Lock serialises work on node across the provider (such as a restart
// sequence); commands themselves do not take it. It returns the unlock
// function, or the context's error while waiting.
func (p *Pool) Lock(ctx context.Context, node string) (func(), error) {
	return p.locks.lock(ctx, node)
}

// Close ends all connections.
func (p *Pool) Close() error {
	p.mu.Lock()
	p.closed = true
	nodes := p.nodes
	p.nodes = map[string]*nodeConn{}
	p.mu.Unlock()
	for _, nc := range nodes {
		nc.mu.Lock()
		if nc.client != nil {
			_ = nc.client.Close()
			nc.client = nil
		}
		nc.mu.Unlock()
	}
	if p.closeAgent != nil {
		p.closeAgent()
	}
	return nil
}

func (p *Pool) node(name string) (*nodeConn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errors.New("the SSH pool is closed")
	}
	nc := p.nodes[name]
	if nc == nil {
		nc = &nodeConn{sem: make(chan struct{}, p.cfg.MaxSessionsPerNode)}
		p.nodes[name] = nc
	}
	return nc, nil
}

func (p *Pool) logf(msg string, kv ...any) {
	if p.cfg.Logf != nil {
		p.cfg.Logf(msg, kv...)
	}
}

// Run runs c on node and returns its output. A non-zero exit status (not
// accepted with AcceptExit) is an *Error, as is a command that could not
// run or finish; the Result is returned with the error when the command
// ran. When ctx ends or the timeout passes, the command gets SIGTERM and
// its session is closed.
func (p *Pool) Run(ctx context.Context, node string, c *Command) (*Result, error) {
	fail := func(err error) *Error {
		return &Error{Node: node, Command: c.String(), ExitCode: -1, Err: err, sudo: p.sudo, user: p.user}
	}
	if err := c.validate(); err != nil {
		return nil, fail(err)
	}
	if p.cfg.Allow != nil {
		if err := p.cfg.Allow(c.Argv()); err != nil {
			return nil, fail(err)
		}
	}
	timeout := c.timeout
	if timeout <= 0 {
		timeout = p.cfg.CommandTimeout
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ctxErr := func() error {
		if parent.Err() != nil {
			return fmt.Errorf("interrupted: %w", parent.Err())
		}
		return fmt.Errorf("timed out after %s: %w", timeout, context.DeadlineExceeded)
	}

	nc, err := p.node(node)
	if err != nil {
		return nil, fail(err)
	}
	select {
	case nc.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, fail(ctxErr())
	}
	defer func() { <-nc.sem }()

	start := time.Now()
	client, sess, err := p.session(ctx, node, nc)
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", ctxErr(), err)
		}
		return nil, fail(err)
	}
	defer func() { _ = sess.Close() }()

	stdout, stderr := &capBuffer{}, &capBuffer{}
	sess.Stdout, sess.Stderr = stdout, stderr
	if c.stdin != nil {
		sess.Stdin = bytes.NewReader(c.stdin)
	}
	done := make(chan error, 1)
	line := commandLine(c, p.sudo)
	go func() { done <- sess.Run(line) }()

	var runErr error
	interrupted := false
	select {
	case runErr = <-done:
	case <-ctx.Done():
		interrupted = true
		_ = sess.Signal(ssh.SIGTERM)
		_ = sess.Close()
		select {
		case runErr = <-done:
		case <-time.After(closeGrace):
			// The node does not answer: drop the connection, which ends
			// the session for sure.
			p.drop(nc, client)
			runErr = <-done
		}
	}

	secrets := c.secrets()
	res := &Result{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), ExitCode: -1, Truncated: stdout.truncated || stderr.truncated}
	e := &Error{Node: node, Command: c.String(), ExitCode: -1, sudo: p.sudo, user: p.user,
		Stdout: shorten(scrub(string(res.Stdout), secrets)), Stderr: shorten(scrub(string(res.Stderr), secrets))}
	var exitErr *ssh.ExitError
	var missing *ssh.ExitMissingError
	switch {
	case interrupted:
		e.Err = ctxErr()
	case runErr == nil:
		res.ExitCode = 0
	case errors.As(runErr, &exitErr):
		res.ExitCode = exitErr.ExitStatus()
		e.ExitCode = res.ExitCode
		if exitErr.Signal() != "" {
			e.Err = fmt.Errorf("killed by signal %s", exitErr.Signal())
		}
	case errors.As(runErr, &missing):
		e.Err = errors.New("the connection ended before the command reported an exit status; it may or may not have run")
		p.drop(nc, client)
	default:
		e.Err = fmt.Errorf("connection failed while the command ran; it may or may not have run: %w", runErr)
		p.drop(nc, client)
	}
	p.logf("ssh: command finished", "node", node, "command", e.Command, "exit_code", res.ExitCode,
		"duration_ms", time.Since(start).Milliseconds(), "interrupted", interrupted)
	if e.Err == nil && (res.ExitCode == 0 || c.acceptExit[res.ExitCode]) {
		return res, nil
	}
	e.ExitCode = res.ExitCode
	return res, e
}

// session opens a session on node's connection, connecting first when
// there is none. A connection that broke since its last use fails to open
// a session before any command started, so it is safe to reconnect once.
func (p *Pool) session(ctx context.Context, node string, nc *nodeConn) (*ssh.Client, *ssh.Session, error) {
	var lastErr error
	for attempt := 0; attempt < 2; attempt++ {
		client, err := p.client(ctx, node, nc)
		if err != nil {
			return nil, nil, err
		}
		sess, err := newSession(ctx, client)
		if err == nil {
			return client, sess, nil
		}
		var refused *ssh.OpenChannelError
		if errors.As(err, &refused) {
			return nil, nil, fmt.Errorf("the node refused a new SSH session: %w", err)
		}
		p.drop(nc, client)
		if ctx.Err() != nil {
			return nil, nil, err
		}
		p.logf("ssh: connection broken; reconnecting", "node", node, "error", err.Error())
		lastErr = err
	}
	return nil, nil, fmt.Errorf("open an SSH session after reconnecting: %w", lastErr)
}

// newSession is client.NewSession bounded by ctx: on a dead connection
// opening a channel would wait for an answer that never comes.
func newSession(ctx context.Context, client *ssh.Client) (*ssh.Session, error) {
	type result struct {
		s   *ssh.Session
		err error
	}
	ch := make(chan result, 1)
	go func() {
		s, err := client.NewSession()
		ch <- result{s, err}
	}()
	select {
	case r := <-ch:
		return r.s, r.err
	case <-ctx.Done():
		_ = client.Close()
		r := <-ch
		if r.s != nil {
			_ = r.s.Close()
		}
		return nil, ctx.Err()
	}
}

// client returns node's connection, connecting when there is none.
func (p *Pool) client(ctx context.Context, node string, nc *nodeConn) (*ssh.Client, error) {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	if nc.client != nil {
		return nc.client, nil
	}
	c, err := p.dial(ctx, node)
	if err != nil {
		return nil, err
	}
	nc.client = c
	go func() {
		_ = c.Wait()
		nc.mu.Lock()
		if nc.client == c {
			nc.client = nil
		}
		nc.mu.Unlock()
	}()
	return c, nil
}

// drop forgets and closes client if it is still node's connection.
func (p *Pool) drop(nc *nodeConn, client *ssh.Client) {
	nc.mu.Lock()
	if nc.client == client {
		nc.client = nil
	}
	nc.mu.Unlock()
	_ = client.Close()
}

func (p *Pool) dial(ctx context.Context, node string) (*ssh.Client, error) {
	addr, err := p.cfg.Resolve(ctx, node)
	if err != nil {
		return nil, err
	}
	if addr.Port == 0 {
		addr.Port = 22
	}
	hostport := joinHostPort(addr.Host, addr.Port)
	target := fmt.Sprintf("ssh to %s@%s (node %s)", p.user, hostport, node)
	algos, err := p.hk.algorithms(hostport)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", target, err)
	}
	dctx, cancel := context.WithTimeout(ctx, p.cfg.ConnectTimeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(dctx, "tcp", hostport)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", target, err)
	}
	if dl, ok := dctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(dctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	cc, chans, reqs, err := ssh.NewClientConn(conn, hostport, &ssh.ClientConfig{
		User:              p.user,
		Auth:              p.auth,
		HostKeyCallback:   p.hk.callback(node, hostport),
		HostKeyAlgorithms: algos,
		Timeout:           p.cfg.ConnectTimeout,
	})
	stop()
	if err != nil {
		_ = conn.Close()
		var changed *HostKeyChangedError
		var unknown *HostKeyUnknownError
		switch {
		case errors.As(err, &changed):
			return nil, changed
		case errors.As(err, &unknown):
			return nil, unknown
		case strings.Contains(err.Error(), "unable to authenticate"):
			return nil, fmt.Errorf("%s: the node refused the credentials (%v). Check that the provider's public key is in "+
				"~%s/.ssh/authorized_keys on the node (for root on PVE that is /etc/pve/priv/authorized_keys), or the password", target, err, p.user)
		}
		if dctx.Err() != nil && ctx.Err() == nil {
			return nil, fmt.Errorf("%s: no SSH handshake within %s: %w", target, p.cfg.ConnectTimeout, err)
		}
		return nil, fmt.Errorf("%s: %w", target, err)
	}
	_ = conn.SetDeadline(time.Time{})
	p.logf("ssh: connected", "node", node, "address", hostport, "user", p.user)
	return ssh.NewClient(cc, chans, reqs), nil
}

// capBuffer keeps up to maxOutput bytes and notes whether it dropped more.
type capBuffer struct {
	buf       bytes.Buffer
	truncated bool
}

func (b *capBuffer) Write(p []byte) (int, error) {
	if room := maxOutput - b.buf.Len(); room < len(p) {
		b.truncated = true
		if room > 0 {
			b.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return b.buf.Write(p)
}

func (b *capBuffer) Bytes() []byte { return b.buf.Bytes() }

// Forget closes node's cached connection, so the next command dials
// anew. After a change to the node's network a connection that survived
// (or hung through) it proves nothing and may never answer again.
func (p *Pool) Forget(node string) {
	p.mu.Lock()
	nc := p.nodes[node]
	p.mu.Unlock()
	if nc == nil {
		return
	}
	nc.mu.Lock()
	client := nc.client
	nc.client = nil
	nc.mu.Unlock()
	if client != nil {
		_ = client.Close()
	}
}

// Address is where the pool reaches node's sshd.
func (p *Pool) Address(ctx context.Context, node string) (Address, error) {
	addr, err := p.cfg.Resolve(ctx, node)
	if err == nil && addr.Port == 0 {
		addr.Port = 22
	}
	return addr, err
}
