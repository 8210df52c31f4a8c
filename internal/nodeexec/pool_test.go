package nodeexec_test

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

type lab struct {
	sim        *pvesim.Sim
	info       pvesim.Info
	knownHosts string
}

// newLab starts a simulator and writes a known_hosts file with its
// nodes' host keys, as the acceptance harness does.
func newLab(t *testing.T) *lab {
	t.Helper()
	sim, err := pvesim.Start(pvesim.Options{ClusterName: "lab"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	l := &lab{sim: sim, info: sim.Info(), knownHosts: filepath.Join(t.TempDir(), "known_hosts")}
	var b strings.Builder
	for _, n := range l.info.Nodes {
		fmt.Fprintf(&b, "%s %s\n", knownHostsName(t, n.SSHEndpoint), n.SSHHostKey)
	}
	if err := os.WriteFile(l.knownHosts, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return l
}

func knownHostsName(t *testing.T, endpoint string) string {
	host, port, err := net.SplitHostPort(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	return "[" + host + "]:" + port
}

func (l *lab) resolve(_ context.Context, node string) (nodeexec.Address, error) {
	for _, n := range l.info.Nodes {
		if n.Name == node {
			host, port, _ := net.SplitHostPort(n.SSHEndpoint)
			p, _ := strconv.Atoi(port)
			return nodeexec.Address{Host: host, Port: p}, nil
		}
	}
	return nodeexec.Address{}, fmt.Errorf("no node %s", node)
}

func (l *lab) node(name string) pvesim.NodeInfo {
	for _, n := range l.info.Nodes {
		if n.Name == name {
			return n
		}
	}
	return pvesim.NodeInfo{}
}

// pool returns a pool logged in as root with the lab's key; mod adjusts
// the configuration.
func (l *lab) pool(t *testing.T, mod func(*nodeexec.Config)) *nodeexec.Pool {
	t.Helper()
	cfg := nodeexec.Config{
		PrivateKey:     nodeexec.Secret(l.info.SSHClientKey),
		KnownHostsFile: l.knownHosts,
		Resolve:        l.resolve,
		CommandTimeout: 20 * time.Second,
	}
	if mod != nil {
		mod(&cfg)
	}
	p, err := nodeexec.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func TestRunReturnsOutputAndExitCodes(t *testing.T) {
	l := newLab(t)
	p := l.pool(t, nil)
	ctx := context.Background()
	res, err := p.Run(ctx, "z2g4a", nodeexec.Cmd("tuned-adm", "active"))
	if err != nil || string(res.Stdout) != "Current active profile: balanced\n" || res.ExitCode != 0 {
		t.Fatalf("tuned-adm active: %v %+v", err, res)
	}
	// An exit status the caller expects is a result, not an error.
	res, err = p.Run(ctx, "z2g4a", nodeexec.Cmd("systemctl", "is-active", "systemd-journal-upload.service").AcceptExit(3))
	if err != nil || res.ExitCode != 3 || string(res.Stdout) != "inactive\n" {
		t.Fatalf("is-active: %v %+v", err, res)
	}
	// Any other is an *Error with the command, status and stderr.
	res, err = p.Run(ctx, "z2g4b", nodeexec.Cmd("systemctl", "restart", "no-such.service"))
	var e *nodeexec.Error
	if !errors.As(err, &e) || e.ExitCode != 5 || e.Node != "z2g4b" || res == nil || res.ExitCode != 5 {
		t.Fatalf("restart unknown: %v", err)
	}
	for _, want := range []string{"node z2g4b", "systemctl restart no-such.service", "exit status 5", "Unit no-such.service not found."} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %s", want, err)
		}
	}
	if code, ok := nodeexec.ExitCode(err); !ok || code != 5 {
		t.Errorf("ExitCode = %d, %v", code, ok)
	}
}

// Hostile values reach the program as exactly one literal argument each:
// the simulator's shell refuses unquoted metacharacters, so a missing or
// wrong quote fails this test instead of passing silently.
func TestHostileArgumentsArriveLiterally(t *testing.T) {
	l := newLab(t)
	p := l.pool(t, nil)
	values := []string{
		"two words", "it's", `"quoted"`, "a;b", "; tuned-adm off", "$(tuned-adm off)", "`tuned-adm off`", "${HOME}",
		"line1\nline2", "a|b", "a&&b", "> /etc/x", "*", "~root", "#c", "{a,b}", "back\\slash", "", "-n", "\t",
	}
	for _, user := range []string{"root", pvesim.SSHSudoUser} {
		l.sim.ResetSSHCommands()
		p := l.pool(t, func(c *nodeexec.Config) { c.User = user })
		_, err := p.Run(context.Background(), "z2g4a", nodeexec.Cmd("cat", "--").Arg(values...))
		if code, ok := nodeexec.ExitCode(err); !ok || code != 1 {
			t.Fatalf("%s: cat of missing files: %v", user, err)
		}
		cmds := l.sim.SSHCommands()
		if len(cmds) != 1 {
			t.Fatalf("%s: %d commands recorded", user, len(cmds))
		}
		want := append([]string{"cat", "--"}, values...)
		if user != "root" {
			want = append([]string{"sudo", "-n", "--"}, want...)
		}
		if !reflect.DeepEqual(cmds[0].Argv, want) {
			t.Errorf("%s: argv\n%q\nwant\n%q\n(line %q)", user, cmds[0].Argv, want, cmds[0].Line)
		}
	}
	if l.sim.TunedProfile("z2g4a") != "balanced" {
		t.Error("a value was executed")
	}
	// Standard input is binary-safe and never part of the command line.
	input := []byte("$(tuned-adm off)\n'\x00\xff`;|\n")
	res, err := p.Run(context.Background(), "z2g4a", nodeexec.Cmd("cat").Input(input))
	if err != nil || string(res.Stdout) != string(input) {
		t.Fatalf("stdin echo: %v %q", err, res.Stdout)
	}
	// A NUL cannot be an argument; nothing is sent.
	l.sim.ResetSSHCommands()
	if _, err := p.Run(context.Background(), "z2g4a", nodeexec.Cmd("cat", "a\x00b")); err == nil || !strings.Contains(err.Error(), "NUL") {
		t.Errorf("NUL: %v", err)
	}
	if n := len(l.sim.SSHCommands()); n != 0 {
		t.Errorf("%d commands sent for a refused argument", n)
	}
}

func TestAllowListIsEnforcedBeforeConnecting(t *testing.T) {
	l := newLab(t)
	p := l.pool(t, nil)
	_, err := p.Run(context.Background(), "z2g4a", nodeexec.Cmd("bash", "-c", "tuned-adm off"))
	if err == nil || !strings.Contains(err.Error(), `program "bash" is not allowed`) {
		t.Fatalf("bash: %v", err)
	}
	if len(l.sim.SSHCommands()) != 0 || l.sim.SSHConnections("z2g4a") != 0 {
		t.Error("a refused program reached the node")
	}
}

func TestHostKeyVerification(t *testing.T) {
	l := newLab(t)
	ctx := context.Background()
	a := l.node("z2g4a")
	empty := filepath.Join(t.TempDir(), "ssh", "known_hosts")

	// Unknown: refused, naming the node and the key it presented; the
	// file is not created.
	p := l.pool(t, func(c *nodeexec.Config) { c.KnownHostsFile = empty })
	_, err := p.Run(ctx, "z2g4a", nodeexec.Cmd("tuned-adm", "active"))
	var unknown *nodeexec.HostKeyUnknownError
	if !errors.As(err, &unknown) || unknown.Node != "z2g4a" || unknown.Presented != a.SSHHostKeyFingerprint {
		t.Fatalf("unknown host: %v", err)
	}
	for _, want := range []string{"node z2g4a", a.SSHHostKeyFingerprint, "trust-on-first-use", "ssh-keyscan"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("unknown-key error lacks %q: %s", want, err)
		}
	}
	if _, err := os.Stat(empty); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("known_hosts created without trust-on-first-use: %v", err)
	}
	if len(l.sim.SSHCommands()) != 0 {
		t.Error("a command ran on an unverified node")
	}

	// Trust on first use records the key (file 0600) and connects.
	var logged []string
	var logMu sync.Mutex
	p = l.pool(t, func(c *nodeexec.Config) {
		c.KnownHostsFile, c.TrustOnFirstUse = empty, true
		c.Logf = func(msg string, kv ...any) {
			logMu.Lock()
			logged = append(logged, fmt.Sprint(msg, kv))
			logMu.Unlock()
		}
	})
	if _, err := p.Run(ctx, "z2g4a", nodeexec.Cmd("tuned-adm", "active")); err != nil {
		t.Fatalf("TOFU: %v", err)
	}
	b, err := os.ReadFile(empty)
	if err != nil {
		t.Fatal(err)
	}
	if want := knownHostsName(t, a.SSHEndpoint) + " " + a.SSHHostKey + "\n"; string(b) != want {
		t.Errorf("recorded %q, want %q", b, want)
	}
	if st, _ := os.Stat(empty); st.Mode().Perm() != 0o600 {
		t.Errorf("known_hosts mode %o", st.Mode().Perm())
	}
	if !strings.Contains(strings.Join(logged, "\n"), a.SSHHostKeyFingerprint) {
		t.Errorf("TOFU not logged with the fingerprint: %q", logged)
	}
	// The recorded key now verifies without trust-on-first-use.
	if _, err := l.pool(t, func(c *nodeexec.Config) { c.KnownHostsFile = empty }).Run(ctx, "z2g4a", nodeexec.Cmd("tuned-adm", "active")); err != nil {
		t.Fatalf("after TOFU: %v", err)
	}

	// A changed key is refused, with trust-on-first-use too, naming the
	// node and both fingerprints; the file keeps the old key.
	if err := l.sim.RotateSSHHostKey("z2g4a"); err != nil {
		t.Fatal(err)
	}
	newFP := l.sim.Info().Nodes[0].SSHHostKeyFingerprint
	for _, tofu := range []bool{false, true} {
		p := l.pool(t, func(c *nodeexec.Config) { c.KnownHostsFile, c.TrustOnFirstUse = empty, tofu })
		_, err := p.Run(ctx, "z2g4a", nodeexec.Cmd("tuned-adm", "active"))
		var changed *nodeexec.HostKeyChangedError
		if !errors.As(err, &changed) {
			t.Fatalf("tofu=%v: changed key accepted or wrong error: %v", tofu, err)
		}
		for _, want := range []string{"node z2g4a", "has changed", a.SSHHostKeyFingerprint, newFP, "ssh-keygen -R '" + knownHostsName(t, a.SSHEndpoint) + "'"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("changed-key error lacks %q: %s", want, err)
			}
		}
	}
	if b2, _ := os.ReadFile(empty); string(b2) != string(b) {
		t.Errorf("known_hosts changed after a refused key: %q", b2)
	}
	// Other nodes are unaffected.
	if _, err := l.pool(t, nil).Run(ctx, "z2g4b", nodeexec.Cmd("tuned-adm", "active")); err != nil {
		t.Errorf("z2g4b: %v", err)
	}
}

// A connection that was open when the key changed keeps working until it
// breaks; the reconnect then verifies the new key and refuses it.
func TestReconnectVerifiesHostKeyAgain(t *testing.T) {
	l := newLab(t)
	p := l.pool(t, nil)
	ctx := context.Background()
	if _, err := p.Run(ctx, "z2g4c", nodeexec.Cmd("tuned-adm", "active")); err != nil {
		t.Fatal(err)
	}
	if err := l.sim.RotateSSHHostKey("z2g4c"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Run(ctx, "z2g4c", nodeexec.Cmd("tuned-adm", "active")); err != nil {
		t.Fatalf("existing connection: %v", err)
	}
	l.sim.DropSSHConnections("z2g4c")
	_, err := p.Run(ctx, "z2g4c", nodeexec.Cmd("tuned-adm", "active"))
	var changed *nodeexec.HostKeyChangedError
	if !errors.As(err, &changed) {
		t.Fatalf("reconnect after a key change: %v", err)
	}
}

func TestConnectionReuseAndReconnect(t *testing.T) {
	l := newLab(t)
	p := l.pool(t, nil)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 12)
	for i := 0; i < 12; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := p.Run(ctx, "z2g4a", nodeexec.Cmd("systemctl", "is-active", "pveproxy.service"))
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := l.sim.SSHConnections("z2g4a"); n != 1 {
		t.Errorf("%d connections for 12 commands, want one shared", n)
	}
	// The node drops the connection (sshd restart, NAT timeout): the next
	// command opens a new one.
	l.sim.DropSSHConnections("z2g4a")
	waitFor(t, func() bool { return l.sim.SSHConnections("z2g4a") == 0 })
	if _, err := p.Run(ctx, "z2g4a", nodeexec.Cmd("tuned-adm", "active")); err != nil {
		t.Fatalf("after drop: %v", err)
	}
	if n := l.sim.SSHConnections("z2g4a"); n != 1 {
		t.Errorf("%d connections after reconnect", n)
	}
	// A connection that breaks while a command runs is not retried: the
	// command may have run.
	l.sim.InjectSSHFault(pvesim.SSHFault{Node: "z2g4a", Program: "systemctl", Drop: true, Count: 1})
	_, err := p.Run(ctx, "z2g4a", nodeexec.Cmd("systemctl", "restart", "tuned.service"))
	if err == nil || !strings.Contains(err.Error(), "may or may not have run") {
		t.Fatalf("dropped mid-command: %v", err)
	}
	if _, err := p.Run(ctx, "z2g4a", nodeexec.Cmd("tuned-adm", "active")); err != nil {
		t.Fatalf("after a mid-command drop: %v", err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached within 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestTimeoutAndCancellationInterruptTheCommand(t *testing.T) {
	l := newLab(t)
	p := l.pool(t, nil)
	l.sim.InjectSSHFault(pvesim.SSHFault{Program: "tuned-adm", Delay: time.Minute})

	start := time.Now()
	_, err := p.Run(context.Background(), "z2g4a", nodeexec.Cmd("tuned-adm", "profile", "powersave").WithTimeout(300*time.Millisecond))
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timed out after 300ms") {
		t.Fatalf("timeout: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("timeout took %s", d)
	}
	waitFor(t, func() bool {
		cmds := l.sim.SSHCommands()
		return len(cmds) == 1 && cmds[0].Interrupted
	})
	if l.sim.TunedProfile("z2g4a") != "balanced" {
		t.Error("the interrupted command took effect")
	}

	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	_, err = p.Run(ctx, "z2g4a", nodeexec.Cmd("tuned-adm", "active"))
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("cancel: %v", err)
	}
	waitFor(t, func() bool { return len(l.sim.SSHCommands()) == 2 && l.sim.SSHCommands()[1].Interrupted })

	// The connection survives an interrupted command.
	l.sim.ClearSSHFaults()
	if _, err := p.Run(context.Background(), "z2g4a", nodeexec.Cmd("tuned-adm", "active")); err != nil {
		t.Fatalf("after interruptions: %v", err)
	}
	if n := l.sim.SSHConnections("z2g4a"); n != 1 {
		t.Errorf("%d connections", n)
	}
}

func TestSecretsStayOutOfErrorsAndLogs(t *testing.T) {
	l := newLab(t)
	var logged strings.Builder
	var mu sync.Mutex
	p := l.pool(t, func(c *nodeexec.Config) {
		c.Logf = func(msg string, kv ...any) { mu.Lock(); fmt.Fprintln(&logged, msg, kv); mu.Unlock() }
	})
	ctx := context.Background()
	// cat echoes the missing file's name - the secret - on stderr.
	_, err := p.Run(ctx, "z2g4a", nodeexec.Cmd("cat", "--").Secret("s3cr3t-token-value"))
	if err == nil {
		t.Fatal("cat of a missing file succeeded")
	}
	if strings.Contains(err.Error(), "s3cr3t") || !strings.Contains(err.Error(), "<redacted>: No such file or directory") {
		t.Errorf("error: %s", err)
	}
	// Secret content written to a file that cannot be created.
	key := "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC\n-----END PRIVATE KEY-----\n"
	err = p.WriteFile(ctx, "z2g4a", nodeexec.File{Path: "/opt/lab/key.pem", Content: []byte(key), Secret: true, Mode: 0o600})
	if err == nil || !strings.Contains(err.Error(), "Read-only file system") {
		t.Fatalf("write outside the modelled trees: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, s := range []string{"s3cr3t", "MIIEvQ"} {
		if strings.Contains(err.Error(), s) || strings.Contains(logged.String(), s) {
			t.Errorf("%q leaked: error %q, log %q", s, err, logged.String())
		}
	}
	if !strings.Contains(logged.String(), "<redacted>") {
		t.Errorf("the log does not show the redacted command: %q", logged.String())
	}
}

func TestSudoForNonRootUsers(t *testing.T) {
	l := newLab(t)
	ctx := context.Background()
	p := l.pool(t, func(c *nodeexec.Config) { c.User = pvesim.SSHSudoUser })
	if _, err := p.Run(ctx, "z2g4b", nodeexec.Cmd("tuned-adm", "profile", "latency-performance")); err != nil {
		t.Fatal(err)
	}
	if got := l.sim.TunedProfile("z2g4b"); got != "latency-performance" {
		t.Errorf("profile %q", got)
	}
	cmds := l.sim.SSHCommands()
	if got := cmds[len(cmds)-1]; got.User != pvesim.SSHSudoUser || got.Line != "sudo -n -- tuned-adm profile latency-performance" {
		t.Errorf("recorded %+v", got)
	}
	// Without a sudo rule the error says what to configure.
	p = l.pool(t, func(c *nodeexec.Config) { c.User = pvesim.SSHNoSudoUser })
	_, err := p.Run(ctx, "z2g4b", nodeexec.Cmd("tuned-adm", "profile", "balanced"))
	for _, want := range []string{"sudo: a password is required", "NOPASSWD", pvesim.SSHNoSudoUser} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("no sudo rule: error lacks %q: %v", want, err)
		}
	}
}

func TestAuthentication(t *testing.T) {
	l := newLab(t)
	ctx := context.Background()
	run := func(p *nodeexec.Pool) error {
		_, err := p.Run(ctx, "z2g4a", nodeexec.Cmd("tuned-adm", "active"))
		return err
	}
	// root@pam's password.
	if err := run(l.pool(t, func(c *nodeexec.Config) { c.PrivateKey, c.Password = "", nodeexec.Secret(l.info.RootPassword) })); err != nil {
		t.Errorf("password: %v", err)
	}
	err := run(l.pool(t, func(c *nodeexec.Config) { c.PrivateKey, c.Password = "", "wrong-password" }))
	if err == nil || !strings.Contains(err.Error(), "refused the credentials") || strings.Contains(err.Error(), "wrong-password") {
		t.Errorf("wrong password: %v", err)
	}
	// An encrypted key needs its passphrase.
	raw, err := ssh.ParseRawPrivateKey([]byte(l.info.SSHClientKey))
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKeyWithPassphrase(raw, "lab", []byte("correct horse"))
	if err != nil {
		t.Fatal(err)
	}
	encrypted := nodeexec.Secret(pem.EncodeToMemory(block))
	_, err = nodeexec.New(nodeexec.Config{PrivateKey: encrypted, KnownHostsFile: l.knownHosts, Resolve: l.resolve})
	if err == nil || !strings.Contains(err.Error(), "encrypted: give its passphrase") {
		t.Errorf("no passphrase: %v", err)
	}
	_, err = nodeexec.New(nodeexec.Config{PrivateKey: encrypted, PrivateKeyPassphrase: "wrong", KnownHostsFile: l.knownHosts, Resolve: l.resolve})
	if err == nil || !strings.Contains(err.Error(), "passphrase is wrong") {
		t.Errorf("wrong passphrase: %v", err)
	}
	if err := run(l.pool(t, func(c *nodeexec.Config) { c.PrivateKey, c.PrivateKeyPassphrase = encrypted, "correct horse" })); err != nil {
		t.Errorf("encrypted key: %v", err)
	}
	// The SSH agent.
	sock := filepath.Join(t.TempDir(), "agent.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	keyring := agent.NewKeyring()
	if err := keyring.Add(agent.AddedKey{PrivateKey: raw}); err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _ = agent.ServeAgent(keyring, c) }()
		}
	}()
	if err := run(l.pool(t, func(c *nodeexec.Config) { c.PrivateKey, c.Agent, c.AgentSocket = "", true, sock })); err != nil {
		t.Errorf("agent: %v", err)
	}
	t.Setenv("SSH_AUTH_SOCK", "")
	if _, err := nodeexec.New(nodeexec.Config{Agent: true, KnownHostsFile: l.knownHosts, Resolve: l.resolve}); err == nil || !strings.Contains(err.Error(), "SSH_AUTH_SOCK") {
		t.Errorf("agent without a socket: %v", err)
	}
	if _, err := nodeexec.New(nodeexec.Config{KnownHostsFile: l.knownHosts, Resolve: l.resolve}); err == nil || !strings.Contains(err.Error(), "no SSH credentials") {
		t.Errorf("no credentials: %v", err)
	}
	if _, err := nodeexec.New(nodeexec.Config{Password: "x", Resolve: l.resolve}); err == nil || !strings.Contains(err.Error(), "known_hosts") {
		t.Errorf("no known_hosts: %v", err)
	}
}

func TestWriteAndReadFiles(t *testing.T) {
	l := newLab(t)
	p := l.pool(t, nil)
	ctx := context.Background()
	path := "/etc/systemd/system/systemd-journal-upload.service.d/override.conf"
	content := []byte("[Service]\nRestart=always\n# '$(x)' `y`; z\n")
	if err := p.WriteFile(ctx, "z2g4a", nodeexec.File{Path: path, Content: content, Mode: 0o600, MakeDirs: true}); err != nil {
		t.Fatal(err)
	}
	got, err := p.ReadFile(ctx, "z2g4a", path)
	if err != nil || string(got) != string(content) {
		t.Fatalf("ReadFile: %v %q", err, got)
	}
	info, err := p.StatFile(ctx, "z2g4a", path)
	if err != nil || *info != (nodeexec.FileInfo{Mode: 0o600, Owner: "root", Group: "root", Size: int64(len(content))}) {
		t.Fatalf("StatFile: %v %+v", err, info)
	}
	// The content went through install's stdin into a temporary file that
	// mv renamed over the target: nothing is left behind.
	var progs []string
	for _, c := range l.sim.SSHCommands() {
		progs = append(progs, c.Argv[0])
		if c.Argv[0] == "install" && c.Argv[1] != "-d" && string(c.Stdin) != string(content) {
			t.Errorf("install read %q", c.Stdin)
		}
		if strings.Contains(c.Line, "Restart=always") {
			t.Errorf("content on a command line: %q", c.Line)
		}
	}
	if want := []string{"stat", "install", "install", "mv", "cat", "stat"}; !reflect.DeepEqual(progs, want) {
		t.Errorf("commands %v, want %v", progs, want)
	}
	// The directory exists now: install -d, which would reset its mode
	// and owner, does not run again.
	l.sim.ResetSSHCommands()
	if err := p.WriteFile(ctx, "z2g4a", nodeexec.File{Path: path, Content: content, MakeDirs: true}); err != nil {
		t.Fatal(err)
	}
	for _, c := range l.sim.SSHCommands() {
		if c.Argv[0] == "install" && c.Argv[1] == "-d" {
			t.Errorf("install -d on an existing directory: %q", c.Line)
		}
	}
	if err := p.WriteFile(ctx, "z2g4a", nodeexec.File{Path: path + "/x", Content: content, MakeDirs: true}); err == nil ||
		!strings.Contains(err.Error(), "is a regular file, not a directory") {
		t.Errorf("a file as parent directory: %v", err)
	}
	if _, err := p.ReadFile(ctx, "z2g4a", "/etc/nope.conf"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := p.StatFile(ctx, "z2g4a", "/etc/nope.conf"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stat missing file: %v", err)
	}
	if err := p.RemoveFile(ctx, "z2g4a", path); err != nil {
		t.Fatal(err)
	}
	if err := p.RemoveFile(ctx, "z2g4a", path); err != nil {
		t.Errorf("removing a missing file: %v", err)
	}
	if _, ok := l.sim.NodeFile("z2g4a", path); ok {
		t.Error("file still there")
	}
	if err := p.WriteFile(ctx, "z2g4a", nodeexec.File{Path: "etc/relative"}); err == nil {
		t.Error("relative path accepted")
	}
}

func TestLockSerialisesPerNode(t *testing.T) {
	l := newLab(t)
	p := l.pool(t, nil)
	ctx := context.Background()
	unlock, err := p.Lock(ctx, "z2g4a")
	if err != nil {
		t.Fatal(err)
	}
	// Another node is independent.
	unlockB, err := p.Lock(ctx, "z2g4b")
	if err != nil {
		t.Fatal(err)
	}
	unlockB()
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := p.Lock(short, "z2g4a"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second lock: %v", err)
	}
	unlock()
	unlock() // idempotent
	again, err := p.Lock(ctx, "z2g4a")
	if err != nil {
		t.Fatal(err)
	}
	again()
}
