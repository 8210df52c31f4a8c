package pvesim

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

func TestParseShellLine(t *testing.T) {
	ok := map[string][]string{
		"tuned-adm active":                           {"tuned-adm", "active"},
		"  systemctl   is-active\tssh  ":             {"systemctl", "is-active", "ssh"},
		"cat '/etc/a b'":                             {"cat", "/etc/a b"},
		`cat 'it'\''s'`:                              {"cat", "it's"},
		`cat "dq \$x \" \\ \` + "`" + `"`:            {"cat", "dq $x \" \\ `"},
		`cat a\ b`:                                   {"cat", "a b"},
		"cat 'x;y' '$(id)' '`id`' 'a|b' 'new\nline'": {"cat", "x;y", "$(id)", "`id`", "a|b", "new\nline"},
		"cat ''":  {"cat", ""},
		"cat a=b": {"cat", "a=b"},
		"cat x#y": {"cat", "x#y"},
		"":        nil,
	}
	for line, want := range ok {
		got, err := parseShellLine(line)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("parseShellLine(%q) = %q, %v; want %q", line, got, err, want)
		}
	}
	for _, line := range []string{
		"cat a; id", "cat $(id)", "cat `id`", "cat a | tee b", "cat a && id", "cat > x", "cat < x", "cat (a)",
		"cat a\nid", "cat $HOME", "cat *", "cat a?", "cat [ab]", "cat {a,b}", "cat ~", "cat #x", "FOO=1 cat x",
		"cat 'unterminated", `cat "unterminated`, `cat "$(id)"`, "cat \"`id`\"",
	} {
		if got, err := parseShellLine(line); err == nil {
			t.Errorf("parseShellLine(%q) = %q, want a refusal", line, got)
		}
	}
}

// sshTarget connects to a node's sshd like a client would.
type sshTarget struct {
	t    *testing.T
	c    *ssh.Client
	node string
}

func dialSim(t *testing.T, info Info, node, user string, auth ssh.AuthMethod) (*sshTarget, error) {
	t.Helper()
	var ni NodeInfo
	for _, n := range info.Nodes {
		if n.Name == node {
			ni = n
		}
	}
	hostKey, _, _, _, err := ssh.ParseAuthorizedKey([]byte(ni.SSHHostKey))
	if err != nil {
		t.Fatalf("host key of %s: %v", node, err)
	}
	c, err := ssh.Dial("tcp", ni.SSHEndpoint, &ssh.ClientConfig{
		User: user, Auth: []ssh.AuthMethod{auth}, HostKeyCallback: ssh.FixedHostKey(hostKey), Timeout: 5 * time.Second,
	})
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = c.Close() })
	return &sshTarget{t: t, c: c, node: node}, nil
}

func labKey(t *testing.T, info Info) ssh.AuthMethod {
	signer, err := ssh.ParsePrivateKey([]byte(info.SSHClientKey))
	if err != nil {
		t.Fatalf("client key: %v", err)
	}
	return ssh.PublicKeys(signer)
}

func sshAs(t *testing.T, info Info, node, user string) *sshTarget {
	t.Helper()
	tg, err := dialSim(t, info, node, user, labKey(t, info))
	if err != nil {
		t.Fatalf("ssh %s@%s: %v", user, node, err)
	}
	return tg
}

// run runs line and returns stdout, stderr and the exit status.
func (tg *sshTarget) run(line string, stdin []byte) (string, string, int) {
	tg.t.Helper()
	sess, err := tg.c.NewSession()
	if err != nil {
		tg.t.Fatalf("session: %v", err)
	}
	defer func() { _ = sess.Close() }()
	var out, errb bytes.Buffer
	sess.Stdout, sess.Stderr = &out, &errb
	if stdin != nil {
		sess.Stdin = bytes.NewReader(stdin)
	}
	err = sess.Run(line)
	code := 0
	var ee *ssh.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitStatus()
	} else if err != nil {
		tg.t.Fatalf("run %q: %v", line, err)
	}
	return out.String(), errb.String(), code
}

func (tg *sshTarget) ok(line string) string {
	tg.t.Helper()
	out, errs, code := tg.run(line, nil)
	if code != 0 {
		tg.t.Fatalf("%s: exit %d, stderr %q", line, code, errs)
	}
	return out
}

func TestSSHAuthentication(t *testing.T) {
	_, info := startSim(t, Options{ClusterName: "lab"})
	if info.SSHClientKey == "" || info.Nodes[0].SSHEndpoint == "" || !strings.HasPrefix(info.Nodes[0].SSHHostKeyFingerprint, "SHA256:") {
		t.Fatalf("Info lacks SSH fields: %+v", info.Nodes[0])
	}
	if info.Nodes[0].SSHHostKey == info.Nodes[1].SSHHostKey {
		t.Fatal("two nodes share a host key")
	}
	if got := sshAs(t, info, "z2g4b", "root").ok("cat /etc/hostname"); got != "z2g4b\n" {
		t.Errorf("hostname = %q", got)
	}
	// root@pam's password is root's system password.
	if _, err := dialSim(t, info, "z2g4a", "root", ssh.Password(info.RootPassword)); err != nil {
		t.Errorf("root password: %v", err)
	}
	if _, err := dialSim(t, info, "z2g4a", "root", ssh.Password("wrong")); err == nil {
		t.Error("a wrong password was accepted")
	}
	other, _ := newEd25519PEM("other")
	otherSigner, _ := ssh.ParsePrivateKey([]byte(other))
	if _, err := dialSim(t, info, "z2g4a", "root", ssh.PublicKeys(otherSigner)); err == nil {
		t.Error("an unknown key was accepted")
	}
	if _, err := dialSim(t, info, "z2g4a", "mallory", labKey(t, info)); err == nil {
		t.Error("an unknown user was accepted")
	}
}

func TestSSHShellRefusesUnquotedMetacharacters(t *testing.T) {
	s, info := startSim(t, Options{ClusterName: "lab"})
	root := sshAs(t, info, "z2g4a", "root")
	_, errs, code := root.run("cat /etc/hostname; tuned-adm off", nil)
	if code != 2 || !strings.Contains(errs, "refuses unquoted") {
		t.Fatalf("exit %d, %q", code, errs)
	}
	if s.TunedProfile("z2g4a") != "balanced" {
		t.Error("the refused line ran")
	}
	cmds := s.SSHCommands()
	if last := cmds[len(cmds)-1]; last.Argv != nil || last.ExitCode != 2 || last.Line != "cat /etc/hostname; tuned-adm off" {
		t.Errorf("recorded %+v", last)
	}
	_, errs, code = root.run("frobnicate --now", nil)
	if code != 127 || errs != "bash: line 1: frobnicate: command not found\n" {
		t.Errorf("unknown command: exit %d, %q", code, errs)
	}
}

func TestSSHSystemctl(t *testing.T) {
	s, info := startSim(t, Options{ClusterName: "lab"})
	root := sshAs(t, info, "z2g4a", "root")
	if out := root.ok("systemctl is-active pveproxy"); out != "active\n" {
		t.Errorf("is-active = %q", out)
	}
	out, _, code := root.run("systemctl is-active systemd-journal-upload.service", nil)
	if code != 3 || out != "inactive\n" {
		t.Errorf("inactive unit: exit %d %q", code, out)
	}
	out, _, code = root.run("systemctl is-active no-such-unit", nil)
	if code != 3 || out != "inactive\n" {
		t.Errorf("unknown unit: exit %d %q", code, out)
	}
	out, _, code = root.run("systemctl is-enabled systemd-journal-upload", nil)
	if code != 1 || out != "disabled\n" {
		t.Errorf("is-enabled disabled: exit %d %q", code, out)
	}
	_, errs, code := root.run("systemctl is-enabled no-such-unit", nil)
	if code != 1 || !strings.Contains(errs, "Failed to get unit file state for no-such-unit.service: No such file or directory") {
		t.Errorf("is-enabled unknown: exit %d %q", code, errs)
	}
	root.ok("systemctl enable --now systemd-journal-upload")
	if en, act, _ := s.UnitState("z2g4a", "systemd-journal-upload"); en != "enabled" || act != "active" {
		t.Errorf("after enable --now: %s %s", en, act)
	}
	_, errs, code = root.run("systemctl restart no-such.service", nil)
	if code != 5 || errs != "Failed to restart no-such.service: Unit no-such.service not found.\n" {
		t.Errorf("restart unknown: exit %d %q", code, errs)
	}
	root.ok("systemctl stop tuned")
	if out := root.ok("systemctl show -p ActiveState,UnitFileState tuned.service"); out != "ActiveState=inactive\nUnitFileState=enabled\n" {
		t.Errorf("show = %q", out)
	}
	// Other nodes are independent.
	if _, act, _ := s.UnitState("z2g4b", "tuned"); act != "active" {
		t.Errorf("z2g4b tuned = %s", act)
	}
}

func TestSSHTunedAdm(t *testing.T) {
	s, info := startSim(t, Options{ClusterName: "lab"})
	root := sshAs(t, info, "z2g4a", "root")
	if out := root.ok("tuned-adm active"); out != "Current active profile: balanced\n" {
		t.Errorf("active = %q", out)
	}
	root.ok("tuned-adm profile latency-performance")
	if out := root.ok("tuned-adm active"); out != "Current active profile: latency-performance\n" {
		t.Errorf("after switch: %q", out)
	}
	if got, _ := s.NodeFile("z2g4a", "/etc/tuned/active_profile"); string(got) != "latency-performance\n" {
		t.Errorf("active_profile file = %q", got)
	}
	_, errs, code := root.run("tuned-adm profile latency-performanc", nil)
	if code != 1 || !strings.Contains(errs, "Unable to switch profile: Cannot load profile(s) 'latency-performanc'") {
		t.Errorf("unknown profile: exit %d %q", code, errs)
	}
	// With the daemon stopped, active says so; profile restarts it.
	root.ok("systemctl stop tuned")
	out := root.ok("tuned-adm active")
	if !strings.Contains(out, "It seems that tuned daemon is not running, preset profile is not activated.\nPreset profile: latency-performance") {
		t.Errorf("daemon stopped: %q", out)
	}
	if out := root.ok("tuned-adm profile virtual-host"); !strings.Contains(out, "TuneD (re)started.") {
		t.Errorf("profile with daemon stopped: %q", out)
	}
	if _, act, _ := s.UnitState("z2g4a", "tuned"); act != "active" || s.TunedProfile("z2g4a") != "virtual-host" {
		t.Errorf("tuned %s, profile %s", act, s.TunedProfile("z2g4a"))
	}
	list := root.ok("tuned-adm list")
	if !strings.Contains(list, "- latency-performance         - Optimize for deterministic performance") || !strings.HasSuffix(list, "Current active profile: virtual-host\n") {
		t.Errorf("list = %q", list)
	}
}

func TestSSHEthtoolRings(t *testing.T) {
	for _, rel := range []string{"9.1", "8.4"} {
		t.Run(rel, func(t *testing.T) {
			s, info := startSim(t, Options{ClusterName: "lab", PVERelease: rel})
			root := sshAs(t, info, "z2g4a", "root")
			out := root.ok("ethtool -g cx354ap1")
			want9 := "Ring parameters for cx354ap1:\nPre-set maximums:\nRX:\t\t\t8192\nRX Mini:\t\tn/a\nRX Jumbo:\t\tn/a\nTX:\t\t\t8192\nTX push buff len:\tn/a\n" +
				"Current hardware settings:\nRX:\t\t\t1024\nRX Mini:\t\tn/a\nRX Jumbo:\t\tn/a\nTX:\t\t\t1024\n" +
				"RX Buf Len:\t\tn/a\nCQE Size:\t\tn/a\nTX Push:\t\toff\nRX Push:\t\toff\nTX push buff len:\tn/a\nTCP data split:\t\tn/a\n"
			want8 := "Ring parameters for cx354ap1:\nPre-set maximums:\nRX:\t\t8192\nRX Mini:\tn/a\nRX Jumbo:\tn/a\nTX:\t\t8192\n" +
				"Current hardware settings:\nRX:\t\t1024\nRX Mini:\tn/a\nRX Jumbo:\tn/a\nTX:\t\t1024\n" +
				"RX Buf Len:\tn/a\nCQE Size:\tn/a\nTX Push:\toff\nTCP data split:\tn/a\n"
			if want := map[string]string{"9.1": want9, "8.4": want8}[rel]; out != want {
				t.Errorf("ethtool -g:\n%q\nwant\n%q", out, want)
			}
			root.ok("ethtool -G cx354ap1 rx 2048 tx 2048")
			if rx, tx, _ := s.NICRing("z2g4a", "cx354ap1"); rx != 2048 || tx != 2048 {
				t.Errorf("rings %d/%d", rx, tx)
			}
			// mlx4 rounds up to a power of two.
			root.ok("ethtool -G cx354ap1 rx 3000")
			if rx, _, _ := s.NICRing("z2g4a", "cx354ap1"); rx != 4096 {
				t.Errorf("mlx4 rx 3000 -> %d, want 4096", rx)
			}
			_, errs, code := root.run("ethtool -G bcm5720p0 rx 2048", nil)
			if code != 81 || errs != "netlink error: requested ring size exceeds maximum\nnetlink error: Invalid argument\n" {
				t.Errorf("above tg3 maximum: exit %d %q", code, errs)
			}
			root.ok("ethtool -G bcm5720p0 rx 2047 tx 511")
			_, errs, code = root.run("ethtool -g bond0x", nil)
			if code != 1 || !strings.Contains(errs, "No such device") {
				t.Errorf("unknown device: exit %d %q", code, errs)
			}
			_, errs, code = root.run("ethtool -g lo", nil)
			if code != 1 || errs != "netlink error: Operation not supported\n" {
				t.Errorf("lo: exit %d %q", code, errs)
			}
			// e1000e aligns to 8.
			root.ok("ethtool -G i219 rx 1001")
			if rx, tx, _ := s.NICRing("z2g4a", "i219"); rx != 1008 || tx != 256 {
				t.Errorf("e1000e rings %d/%d", rx, tx)
			}
		})
	}
}

func TestSSHFilesAndSudo(t *testing.T) {
	s, info := startSim(t, Options{ClusterName: "lab"})
	root := sshAs(t, info, "z2g4a", "root")
	content := []byte("[Upload]\nURL=https://logs.lab:19532/insert/journald\n# $(not run) `nor this`; 'quotes'\n")
	_, errs, code := root.run("install -m 0644 -o root -g root -T /dev/stdin /etc/systemd/journal-upload.conf", content)
	if code != 0 {
		t.Fatalf("install: %d %q", code, errs)
	}
	if got := root.ok("cat -- /etc/systemd/journal-upload.conf"); got != string(content) {
		t.Errorf("cat = %q", got)
	}
	if got, want := root.ok("stat -c '%a %U %G %s' -- /etc/systemd/journal-upload.conf"), fmt.Sprintf("644 root root %d\n", len(content)); got != want {
		t.Errorf("stat = %q", got)
	}
	// A drop-in needs its directory first.
	_, errs, code = root.run("install -m 0644 -T /dev/stdin /etc/systemd/system/x.service.d/override.conf", []byte("[Service]\n"))
	if code != 1 || !strings.Contains(errs, "No such file or directory") {
		t.Errorf("missing directory: %d %q", code, errs)
	}
	root.ok("install -d -m 0755 /etc/systemd/system/x.service.d")
	root.run("install -m 0600 -T /dev/stdin /etc/systemd/system/x.service.d/.tmp1", []byte("[Service]\nRestart=always\n"))
	root.ok("mv -f -T -- /etc/systemd/system/x.service.d/.tmp1 /etc/systemd/system/x.service.d/override.conf")
	if got := root.ok("stat -c %a /etc/systemd/system/x.service.d/override.conf"); got != "600\n" {
		t.Errorf("moved mode = %q", got)
	}
	if _, _, code := root.run("cat /etc/systemd/system/x.service.d/.tmp1", nil); code != 1 {
		t.Error("mv left its source")
	}
	// /etc/pve is one file system for the cluster, with fixed attributes.
	root.run("install -m 0640 -o root -g www-data -T /dev/stdin /etc/pve/x.cfg", []byte("shared\n"))
	if got := sshAs(t, info, "z2g4c", "root").ok("cat /etc/pve/x.cfg"); got != "shared\n" {
		t.Errorf("z2g4c sees %q", got)
	}
	_, errs, code = root.run("install -m 0644 -T /dev/stdin /etc/pve/y.cfg", []byte("y"))
	if code != 1 || !strings.Contains(errs, "cannot change permissions of '/etc/pve/y.cfg': Operation not permitted") {
		t.Errorf("pmxcfs chmod: %d %q", code, errs)
	}
	_, errs, code = root.run("install -m 0644 -T /dev/stdin /opt/x", []byte("y"))
	if code != 1 || !strings.Contains(errs, "Read-only file system") {
		t.Errorf("outside the modelled trees: %d %q", code, errs)
	}

	// A user with password-less sudo: refused without it, root with it.
	ops := sshAs(t, info, "z2g4a", SSHSudoUser)
	_, errs, code = ops.run("tuned-adm profile powersave", nil)
	if code != 1 || errs != "Unable to switch profile: Unauthorized\n" || s.TunedProfile("z2g4a") != "balanced" {
		t.Errorf("non-root tuned-adm: %d %q", code, errs)
	}
	ops.ok("sudo -n -- tuned-adm profile powersave")
	if s.TunedProfile("z2g4a") != "powersave" {
		t.Error("sudo did not run the command as root")
	}
	_, errs, code = ops.run("sudo -n -- frobnicate", nil)
	if code != 1 || errs != "sudo: frobnicate: command not found\n" {
		t.Errorf("sudo unknown: %d %q", code, errs)
	}
	// A user without a sudo rule.
	_, errs, code = sshAs(t, info, "z2g4a", SSHNoSudoUser).run("sudo -n -- tuned-adm profile balanced", nil)
	if code != 1 || errs != "sudo: a password is required\n" || s.TunedProfile("z2g4a") != "powersave" {
		t.Errorf("no sudo rule: %d %q", code, errs)
	}
}

func TestSSHUpdateCACertificates(t *testing.T) {
	s, info := startSim(t, Options{ClusterName: "lab"})
	root := sshAs(t, info, "z2g4b", "root")
	root.run("install -m 0644 -T /dev/stdin /usr/local/share/ca-certificates/root-ca-a.crt", testCertPEM(t))
	out := root.ok("update-ca-certificates")
	if !strings.Contains(out, "1 added, 0 removed; done.") {
		t.Errorf("update = %q", out)
	}
	if got := s.TrustedCAs("z2g4b"); !reflect.DeepEqual(got, []string{"root-ca-a.crt"}) {
		t.Errorf("trusted = %v", got)
	}
	if _, ok := s.NodeFile("z2g4b", "/etc/ssl/certs/root-ca-a.pem"); !ok {
		t.Error("no /etc/ssl/certs/root-ca-a.pem")
	}
	root.ok("rm -f -- /usr/local/share/ca-certificates/root-ca-a.crt")
	if out := root.ok("update-ca-certificates"); !strings.Contains(out, "0 added, 1 removed; done.") {
		t.Errorf("after removal: %q", out)
	}
	if len(s.TrustedCAs("z2g4b")) != 0 || len(s.TrustedCAs("z2g4a")) != 0 {
		t.Error("trust store not emptied")
	}
}

func testCertPEM(t *testing.T) []byte {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Lab Root CA A"}, IsCA: true,
		BasicConstraintsValid: true, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// Host keys and the lab key survive a restart with StatePath, so a
// known_hosts file written against one run stays valid.
func TestSSHKeysPersistWithState(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s1, err := Start(Options{StatePath: path})
	if err != nil {
		t.Fatal(err)
	}
	i1 := s1.Info()
	root := sshAs(t, i1, "z2g4a", "root")
	root.ok("tuned-adm profile latency-performance")
	_ = s1.Close()
	s2, err := Start(Options{StatePath: path})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s2.Close() }()
	i2 := s2.Info()
	if i1.SSHClientKey != i2.SSHClientKey || i1.Nodes[0].SSHHostKey != i2.Nodes[0].SSHHostKey {
		t.Error("SSH keys changed across a restart")
	}
	if s2.TunedProfile("z2g4a") != "latency-performance" {
		t.Error("tuned profile not persisted")
	}
}

func TestSSHPoweredOffNodeRefuses(t *testing.T) {
	s, info := startSim(t, Options{ClusterName: "lab"})
	s.PowerOff("z2g4c")
	if _, err := dialSim(t, info, "z2g4c", "root", labKey(t, info)); err == nil {
		t.Error("a powered-off node accepted SSH")
	}
	s.PowerOn("z2g4c")
	sshAs(t, info, "z2g4c", "root").ok("tuned-adm active")
}

// Units can be views of simulator state (as Ceph's daemons will be): a
// hook answers for them and hears every change.
func TestSSHUnitHooks(t *testing.T) {
	var calls []string
	active := map[string]string{"demo@1.service": "active"}
	s, info := startSim(t, Options{ClusterName: "lab"})
	s.nodeOS.units = append(s.nodeOS.units, &unitHook{
		match: func(u string) bool { return strings.HasPrefix(u, "demo@") },
		get: func(_ *sshExec, u string) *simUnit {
			if a, ok := active[u]; ok {
				return &simUnit{Enabled: "enabled", Active: a}
			}
			return nil
		},
		set: func(x *sshExec, u string, un *simUnit, verb string) {
			calls = append(calls, x.node+" "+verb+" "+u)
			active[u] = un.Active
		},
	})
	root := sshAs(t, info, "z2g4b", "root")
	root.ok("systemctl stop demo@1")
	if out, _, code := root.run("systemctl is-active demo@1.service", nil); code != 3 || out != "inactive\n" {
		t.Errorf("after stop: %d %q", code, out)
	}
	if _, errs, code := root.run("systemctl restart demo@2", nil); code != 5 || !strings.Contains(errs, "Unit demo@2.service not found.") {
		t.Errorf("unknown hooked unit: %d %q", code, errs)
	}
	root.ok("systemctl restart demo@1")
	if want := []string{"z2g4b stop demo@1.service", "z2g4b restart demo@1.service"}; !reflect.DeepEqual(calls, want) {
		t.Errorf("hook calls %q, want %q", calls, want)
	}
}
