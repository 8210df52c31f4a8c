package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/pvelab/terraform-provider-pve/internal/adopt"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

// testSys is a system with the given environment, a home directory with
// ~/.ssh/id_ed25519 and ~/.ssh/known_hosts, and no terminal.
func testSys(t *testing.T, env map[string]string) (system, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(home, ".ssh", "id_ed25519"), newKey(t, ""))
	writeFile(t, filepath.Join(home, ".ssh", "known_hosts"), "")
	var out, errOut bytes.Buffer
	return system{
		getenv:       func(k string) string { return env[k] },
		home:         home,
		stdout:       &out,
		stderr:       &errOut,
		readPassword: func(string) (string, bool, error) { return "", false, nil },
	}, &out, &errOut
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// newKey is an OpenSSH ed25519 private key, encrypted with passphrase
// when not empty.
func newKey(t *testing.T, passphrase string) string {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	var b *pem.Block
	if passphrase == "" {
		b, err = ssh.MarshalPrivateKey(priv, "")
	} else {
		b, err = ssh.MarshalPrivateKeyWithPassphrase(priv, "", []byte(passphrase))
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(b))
}

const ep = "https://pve1.example.com:8006"

func TestParseEnvironmentAndFlags(t *testing.T) {
	sys, _, _ := testSys(t, map[string]string{"PVE_ENDPOINT": ep, "PVE_TLS_FINGERPRINT": "AA:BB", "PVE_SSH_USERNAME": "admin"})
	s, err := parse(nil, sys)
	if err != nil {
		t.Fatal(err)
	}
	if s.endpoint != ep || s.username != "root@pam" || s.fingerprint != "AA:BB" || s.sshUser != "admin" || s.out != "adopted" {
		t.Errorf("from the environment: endpoint %q username %q fingerprint %q ssh user %q out %q", s.endpoint, s.username, s.fingerprint, s.sshUser, s.out)
	}
	if !reflect.DeepEqual(s.areas, adopt.Areas()) {
		t.Errorf("areas %v, want all: %v", s.areas, adopt.Areas())
	}
	if want := filepath.Join(sys.home, ".ssh", "id_ed25519"); s.sshKeyFile != want {
		t.Errorf("ssh key %q, want the default %q", s.sshKeyFile, want)
	}
	if want := filepath.Join(sys.home, ".ssh", "known_hosts"); s.knownHosts != want {
		t.Errorf("known_hosts %q, want the default %q", s.knownHosts, want)
	}

	// A flag wins over the environment.
	other := filepath.Join(t.TempDir(), "key")
	writeFile(t, other, newKey(t, ""))
	s, err = parse([]string{"-endpoint", "https://pve2:8006", "-ssh-key", other, "-areas", "network, vm",
		"-ssh-node", "pve1=127.0.0.1:2201", "-ssh-node", "pve2=10.0.0.2", "-out", "x", "-force"}, sys)
	if err != nil {
		t.Fatal(err)
	}
	if s.endpoint != "https://pve2:8006" || s.sshKeyFile != other || !s.force || s.out != "x" {
		t.Errorf("flags: endpoint %q key %q force %v out %q", s.endpoint, s.sshKeyFile, s.force, s.out)
	}
	if !reflect.DeepEqual(s.areas, []string{"network", "vm"}) {
		t.Errorf("areas %v", s.areas)
	}
	if want := map[string]string{"pve1": "127.0.0.1:2201", "pve2": "10.0.0.2:22"}; !reflect.DeepEqual(s.sshNodes, want) {
		t.Errorf("ssh nodes %v, want %v", s.sshNodes, want)
	}
}

func TestParseCACert(t *testing.T) {
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	writeFile(t, ca, "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
	for _, tc := range []struct {
		name     string
		env      string
		args     []string
		wantFile string
	}{
		{"flag", "", []string{"-ca-cert", ca}, ca},
		{"env file", ca, nil, ca},
		{"env PEM", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sys, _, _ := testSys(t, map[string]string{"PVE_ENDPOINT": ep, "PVE_CA_CERT": tc.env})
			s, err := parse(tc.args, sys)
			if err != nil {
				t.Fatal(err)
			}
			if s.caCertFile != tc.wantFile || !strings.Contains(s.caCert, "BEGIN CERTIFICATE") {
				t.Errorf("ca file %q (want %q), PEM %q", s.caCertFile, tc.wantFile, s.caCert)
			}
		})
	}
}

// Each error names the flag or variable and the way out.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		env   map[string]string
		args  []string
		setup func(t *testing.T, sys system) []string
		want  []string
	}{
		{name: "no endpoint", want: []string{"-endpoint", "PVE_ENDPOINT"}},
		{name: "http endpoint", args: []string{"-endpoint", "http://pve1:8006"}, want: []string{"-endpoint", "https://"}},
		{name: "user without realm", env: map[string]string{"PVE_USERNAME": "root"}, want: []string{"-username", "PVE_USERNAME", "root@pam"}},
		{name: "password is no flag", args: []string{"-password", "x"}, want: []string{"-password"}},
		{name: "unknown area", args: []string{"-areas", "network,disks"}, want: []string{"-areas", `"disks"`, "ceph"}},
		{name: "bad ssh node", args: []string{"-ssh-node", "pve1"}, want: []string{"-ssh-node", "name=host:port"}},
		{name: "argument", args: []string{"adopt"}, want: []string{`"adopt"`}},
		{name: "ssh node without ssh", args: []string{"-no-ssh", "-ssh-node", "a=b:1"}, want: []string{"-no-ssh", "-ssh-node"}},
		{name: "missing key file", args: []string{"-ssh-key", "/nonexistent/key"}, want: []string{"-ssh-key", "PVE_SSH_PRIVATE_KEY_FILE", "/nonexistent/key"}},
		{name: "no default key", setup: func(t *testing.T, sys system) []string {
			if err := os.Remove(filepath.Join(sys.home, ".ssh", "id_ed25519")); err != nil {
				t.Fatal(err)
			}
			return nil
		}, want: []string{"-ssh-key", "PVE_SSH_PRIVATE_KEY_FILE", "-no-ssh"}},
		{name: "key with passphrase", setup: func(t *testing.T, sys system) []string {
			p := filepath.Join(sys.home, "enc")
			writeFile(t, p, newKey(t, "secret"))
			return []string{"-ssh-key", p}
		}, want: []string{"passphrase"}},
		{name: "not a key", setup: func(t *testing.T, sys system) []string {
			p := filepath.Join(sys.home, "id.pub")
			writeFile(t, p, "ssh-ed25519 AAAA x\n")
			return []string{"-ssh-key", p}
		}, want: []string{"-ssh-key", "not a private key"}},
		{name: "missing known_hosts", args: []string{"-known-hosts", "/nonexistent/kh"}, want: []string{"-known-hosts", "PVE_SSH_KNOWN_HOSTS", "host keys"}},
		{name: "ca cert not PEM", setup: func(t *testing.T, sys system) []string {
			p := filepath.Join(sys.home, "ca")
			writeFile(t, p, "nope")
			return []string{"-ca-cert", p}
		}, want: []string{"-ca-cert", "PEM"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"PVE_ENDPOINT": ep}
			if tc.name == "no endpoint" {
				env = map[string]string{}
			}
			for k, v := range tc.env {
				env[k] = v
			}
			sys, _, errOut := testSys(t, env)
			args := tc.args
			if tc.setup != nil {
				args = append(args, tc.setup(t, sys)...)
			}
			if code := run(context.Background(), args, sys); code != 2 {
				t.Errorf("exit status %d, want 2", code)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut.String(), w) {
					t.Errorf("error does not mention %q:\n%s", w, errOut)
				}
			}
		})
	}
}

func TestHelp(t *testing.T) {
	sys, _, errOut := testSys(t, nil)
	if code := run(context.Background(), []string{"-h"}, sys); code != 0 {
		t.Errorf("-h: exit status %d", code)
	}
	for _, w := range []string{"only reads", "PVE_PASSWORD", "-endpoint", "-ssh-node", "-areas", "-out", "imports.tf", "ADOPTION.md"} {
		if !strings.Contains(errOut.String(), w) {
			t.Errorf("usage does not mention %q:\n%s", w, errOut)
		}
	}
}

func TestPassword(t *testing.T) {
	s := &settings{username: "root@pam", endpoint: ep}
	sys, _, _ := testSys(t, map[string]string{"PVE_PASSWORD": "from-env"})
	if pw, err := password(s, sys); err != nil || pw != "from-env" {
		t.Errorf("PVE_PASSWORD: %q, %v", pw, err)
	}

	sys, _, _ = testSys(t, nil)
	_, err := password(s, sys)
	if err == nil || !strings.Contains(err.Error(), "PVE_PASSWORD") || !strings.Contains(err.Error(), "terminal") {
		t.Errorf("without PVE_PASSWORD and terminal: %v, want an error naming PVE_PASSWORD", err)
	}

	var prompt string
	sys.readPassword = func(p string) (string, bool, error) { prompt = p; return "typed", true, nil }
	if pw, err := password(s, sys); err != nil || pw != "typed" {
		t.Errorf("terminal: %q, %v", pw, err)
	}
	if !strings.Contains(prompt, "root@pam") || !strings.Contains(prompt, ep) {
		t.Errorf("prompt %q names neither user nor endpoint", prompt)
	}
}

// An earlier adoption in -out is refused before the cluster is contacted
// (the endpoint here does not exist).
func TestOutRefusedWithoutForce(t *testing.T) {
	sys, _, errOut := testSys(t, map[string]string{"PVE_ENDPOINT": "https://127.0.0.1:1", "PVE_PASSWORD": "x"})
	out := t.TempDir()
	writeFile(t, filepath.Join(out, "main.tf"), "# mine\n")
	if code := run(context.Background(), []string{"-out", out}, sys); code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	if !strings.Contains(errOut.String(), "main.tf") || !strings.Contains(errOut.String(), "-force") {
		t.Errorf("error: %s", errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "main.tf")); string(b) != "# mine\n" {
		t.Errorf("main.tf was overwritten: %s", b)
	}
}

// The command against pvesim's hand-built reference lab: it writes the
// configuration, prints the summary and sends no write.
func TestAdoptHandBuiltLab(t *testing.T) {
	lab, err := pvesim.ShippedLab("reference")
	if err != nil {
		t.Fatal(err)
	}
	lab.Start = pvesim.StartHandBuilt
	sim, err := pvesim.Start(pvesim.Options{Lab: lab})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	info := sim.Info()

	// known_hosts and the key as a user has them; nodes at their sshd.
	sys, out, errOut := testSys(t, map[string]string{"PVE_ENDPOINT": info.Endpoint, "PVE_PASSWORD": info.RootPassword})
	var kh strings.Builder
	args := []string{"-tls-fingerprint", info.TLSFingerprint}
	for _, n := range info.Nodes {
		host, port, err := net.SplitHostPort(n.SSHEndpoint)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&kh, "[%s]:%s %s\n", host, port, n.SSHHostKey)
		args = append(args, "-ssh-node", n.Name+"="+n.SSHEndpoint)
	}
	writeFile(t, filepath.Join(sys.home, ".ssh", "known_hosts"), kh.String())
	writeFile(t, filepath.Join(sys.home, ".ssh", "id_ed25519"), info.SSHClientKey)
	dir := filepath.Join(t.TempDir(), "adopted")
	args = append(args, "-out", dir)

	from := len(sim.Requests())
	if code := run(context.Background(), args, sys); code != 0 {
		t.Fatalf("exit status %d:\n%s\n%s", code, out, errOut)
	}
	t.Log(out.String())
	for _, r := range sim.Requests()[from:] {
		if r.Method != "GET" && !strings.HasPrefix(r.Path, "/access/") {
			t.Errorf("the adoption wrote: %s %s", r.Method, r.Path)
		}
	}

	for _, f := range []string{"main.tf", "imports.tf", "ADOPTION.md"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	main, _ := os.ReadFile(filepath.Join(dir, "main.tf"))
	for _, w := range []string{info.Endpoint, info.TLSFingerprint, `"~/.ssh/id_ed25519"`, `"~/.ssh/known_hosts"`, "var.ssh_nodes", info.Nodes[0].Name} {
		if !bytes.Contains(main, []byte(w)) {
			t.Errorf("main.tf does not hold %q:\n%s", w, main)
		}
	}
	if bytes.Contains(main, []byte(info.RootPassword)) {
		t.Error("main.tf holds the password")
	}
	summary := out.String()
	for _, w := range []string{"Adopted", "Wrote " + dir, "main.tf", "imports.tf", "ADOPTION.md", "TF_VAR_password", "terraform init", "terraform plan", "0 to change"} {
		if !strings.Contains(summary, w) {
			t.Errorf("summary does not mention %q", w)
		}
	}

	// Again into the same directory: refused, then overwritten with -force.
	out.Reset()
	errOut.Reset()
	if code := run(context.Background(), args, sys); code != 1 || !strings.Contains(errOut.String(), "-force") {
		t.Errorf("second run: exit status %d, %s", code, errOut)
	}
	if code := run(context.Background(), append(args, "-force"), sys); code != 0 {
		t.Errorf("-force: exit status %d: %s", code, errOut)
	}
}

// The summary lists at most maxSkipLines objects not adopted; ADOPTION.md
// has them all.
func TestSummarySkipped(t *testing.T) {
	s := &settings{username: "root@pam", out: "adopted"}
	for _, tc := range []struct{ skipped, listed int }{{0, 0}, {maxSkipLines + 1, maxSkipLines + 1}, {30, maxSkipLines}} {
		res := &adopt.Result{}
		for i := range tc.skipped {
			res.Skipped = append(res.Skipped, adopt.Skip{Object: fmt.Sprintf("object-%02d", i), Reason: "why"})
		}
		out := summary(s, res, nil)
		if got := strings.Count(out, "  object-"); got != tc.listed {
			t.Errorf("%d skipped: %d listed, want %d:\n%s", tc.skipped, got, tc.listed, out)
		}
		if more := tc.skipped - tc.listed; more > 0 && !strings.Contains(out, fmt.Sprintf("... and %d more", more)) {
			t.Errorf("%d skipped: no \"and %d more\":\n%s", tc.skipped, more, out)
		}
		if tc.skipped == 0 && !strings.Contains(out, "Everything found") {
			t.Errorf("nothing skipped:\n%s", out)
		}
	}
}

// A wrong password fails before anything is written, naming PVE_PASSWORD.
func TestAdoptWrongPassword(t *testing.T) {
	sim, err := pvesim.Start(pvesim.Options{NoSSH: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	info := sim.Info()
	sys, _, errOut := testSys(t, map[string]string{"PVE_ENDPOINT": info.Endpoint, "PVE_PASSWORD": "wrong", "PVE_TLS_FINGERPRINT": info.TLSFingerprint})
	dir := filepath.Join(t.TempDir(), "adopted")
	if code := run(context.Background(), []string{"-no-ssh", "-out", dir}, sys); code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	if !strings.Contains(errOut.String(), "PVE_PASSWORD") {
		t.Errorf("error does not name PVE_PASSWORD:\n%s", errOut)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("%s was created", dir)
	}
}

// PVE's self-signed certificate without a pin: the error says how to pin it.
func TestAdoptUntrustedCertificate(t *testing.T) {
	sim, err := pvesim.Start(pvesim.Options{NoSSH: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	info := sim.Info()
	sys, _, errOut := testSys(t, map[string]string{"PVE_ENDPOINT": info.Endpoint, "PVE_PASSWORD": info.RootPassword})
	if code := run(context.Background(), []string{"-no-ssh", "-out", filepath.Join(t.TempDir(), "a")}, sys); code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	for _, w := range []string{"-tls-fingerprint", "PVE_TLS_FINGERPRINT", "-ca-cert"} {
		if !strings.Contains(errOut.String(), w) {
			t.Errorf("error does not mention %s:\n%s", w, errOut)
		}
	}
}
