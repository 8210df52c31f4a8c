// Command pve-adopt reads a running Proxmox VE cluster and writes a
// Terraform configuration that describes it, with an import block for every
// object (issue #12): the first plan imports everything and changes
// nothing. It only reads: the API client refuses every write before it is
// sent and SSH runs only reading commands (internal/adopt).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"golang.org/x/crypto/ssh"
	"golang.org/x/term"

	"github.com/pvelab/terraform-provider-pve/internal/adopt"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The in-process provider reads PVE_* variables wherever its
	// configuration leaves a setting out. The command reads its own from a
	// copy and clears them all, so that none (PVE_INSECURE,
	// PVE_SSH_TRUST_ON_FIRST_USE, PVE_API_TOKEN beside the password, ...)
	// changes what the adoption checks; internal/adopt gives the provider
	// every setting it can explicitly as well.
	env := pveEnv()
	if env["PVE_API_TOKEN"] != "" {
		fmt.Fprintln(os.Stderr, "pve-adopt: ignoring PVE_API_TOKEN: adoption logs in as root@pam with a password")
	}
	home, _ := os.UserHomeDir()
	sys := system{
		getenv: func(k string) string {
			if strings.HasPrefix(k, "PVE_") {
				return env[k]
			}
			return os.Getenv(k)
		},
		home:   home,
		stdout: os.Stdout,
		stderr: os.Stderr,
		readPassword: func(prompt string) (string, bool, error) {
			fd := int(os.Stdin.Fd())
			if !term.IsTerminal(fd) {
				return "", false, nil
			}
			fmt.Fprint(os.Stderr, prompt)
			b, err := term.ReadPassword(fd)
			fmt.Fprintln(os.Stderr)
			return string(b), true, err
		},
	}
	os.Exit(run(ctx, os.Args[1:], sys))
}

// pveEnv returns the PVE_* variables and removes them from the process's
// environment.
func pveEnv() map[string]string {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "PVE_") {
			env[k] = v
			_ = os.Unsetenv(k)
		}
	}
	return env
}

// system is what run takes from the process, so tests can drive it.
type system struct {
	getenv func(string) string
	home   string // the home directory, for ~/.ssh defaults ("" when unknown)
	stdout io.Writer
	stderr io.Writer
	// readPassword asks for a password on the terminal; ok is false when
	// there is no terminal to ask on.
	readPassword func(prompt string) (pw string, ok bool, err error)
}

const usage = `pve-adopt reads a running Proxmox VE cluster and writes a Terraform configuration of it:
main.tf (provider and variables), one file per part of the cluster (network.tf, ceph.tf,
vms.tf, ...) with for_each maps in the shape of examples/modules/pve-ceph-cluster, imports.tf with an import
block for every object, and ADOPTION.md listing what is not in the configuration and why.

It only reads. The API client refuses every write before it is sent, and over SSH it runs
only commands that read (cat, stat, ls, lsblk, findmnt, dpkg-query, systemctl show/cat/
is-enabled/is-active/list-*, ethtool -g/-i, tuned-adm active/list, and of ceph only
"ceph config dump"); anything else is refused before it reaches the node.
The first "terraform plan" of what it writes imports everything and changes nothing.

Usage:
  PVE_PASSWORD=... pve-adopt -endpoint https://pve1.example.com:8006 -tls-fingerprint AB:CD:...

The password of -username is read from PVE_PASSWORD, or asked for on the terminal; it is
never a flag (flags show in ps) and never written to a file (main.tf declares it as a
variable: TF_VAR_password).

Flags (a variable in brackets is read when the flag is not given; -areas, -out, -force,
-no-ssh and -ssh-node are flags only). PVE_SSH_PRIVATE_KEY_FILE is a file name, unlike the
provider's PVE_SSH_PRIVATE_KEY (the PEM itself). Once read, every PVE_* variable is cleared:
none of them changes what the adoption checks.
`

// settings are the parsed flags and environment.
type settings struct {
	endpoint, username, password string
	fingerprint                  string
	caCert, caCertFile           string // PEM, and the file it came from ("" from PVE_CA_CERT's PEM)
	sshKeyFile, sshUser          string
	knownHosts                   string
	noSSH, force                 bool
	sshNodes                     map[string]string
	areas                        []string
	out                          string
}

// nodeFlag collects repeated -ssh-node name=host:port.
type nodeFlag map[string]string

func (n nodeFlag) String() string {
	var s []string
	for k, v := range n {
		s = append(s, k+"="+v)
	}
	sort.Strings(s)
	return strings.Join(s, ",")
}

func (n nodeFlag) Set(v string) error {
	name, hp, ok := strings.Cut(v, "=")
	if !ok || name == "" || hp == "" {
		return fmt.Errorf("want name=host:port, such as pve1=192.0.2.11:22; got %q", v)
	}
	if _, _, err := net.SplitHostPort(hp); err != nil {
		hp = net.JoinHostPort(hp, "22")
	}
	n[name] = hp
	return nil
}

// errHelp is -h: the usage was printed, nothing else to do.
var errHelp = errors.New("help requested")

// parse reads the flags over the environment (a flag wins) and checks
// what can be checked without the cluster.
func parse(args []string, sys system) (*settings, error) {
	fs := flag.NewFlagSet("pve-adopt", flag.ContinueOnError)
	fs.SetOutput(sys.stderr)
	env := func(name, def string) string {
		if v := sys.getenv(name); v != "" {
			return v
		}
		return def
	}
	home := func(p string) string {
		if sys.home == "" {
			return ""
		}
		return filepath.Join(sys.home, p)
	}
	s := &settings{sshNodes: nodeFlag{}}
	fs.StringVar(&s.endpoint, "endpoint", env("PVE_ENDPOINT", ""), "a node's API URL, such as https://pve1.example.com:8006 [PVE_ENDPOINT]")
	fs.StringVar(&s.username, "username", env("PVE_USERNAME", "root@pam"), "the PVE user; root@pam, as the OSD and cluster resources need [PVE_USERNAME]")
	fs.StringVar(&s.fingerprint, "tls-fingerprint", env("PVE_TLS_FINGERPRINT", ""), "SHA-256 fingerprint of the endpoint's certificate (node > System > Certificates) [PVE_TLS_FINGERPRINT]")
	caCert := fs.String("ca-cert", "", "file of the CA certificate (PEM) that signed the endpoint's certificate [PVE_CA_CERT: the PEM or its file]")
	fs.StringVar(&s.sshKeyFile, "ssh-key", env("PVE_SSH_PRIVATE_KEY_FILE", ""), "private key file SSH logs in to the nodes with (default ~/.ssh/id_ed25519, id_ecdsa or id_rsa) [PVE_SSH_PRIVATE_KEY_FILE]")
	fs.StringVar(&s.sshUser, "ssh-user", env("PVE_SSH_USERNAME", "root"), "the nodes' SSH user [PVE_SSH_USERNAME]")
	fs.StringVar(&s.knownHosts, "known-hosts", env("PVE_SSH_KNOWN_HOSTS", home(".ssh/known_hosts")), "known_hosts file with the nodes' host keys (checked, never trusted blindly) [PVE_SSH_KNOWN_HOSTS]")
	fs.Var(nodeFlag(s.sshNodes), "ssh-node", "name=host:port: where SSH reaches a node, when not at the address PVE reports (repeat per node)")
	fs.BoolVar(&s.noSSH, "no-ssh", false, "adopt without SSH: what only a node holds (files, units, tuned, NIC rings, ceph.conf) is listed as not adopted")
	areas := fs.String("areas", strings.Join(adopt.Areas(), ","), "comma-separated areas to adopt")
	fs.StringVar(&s.out, "out", "adopted", "directory to write the configuration into (refused when it holds one, unless -force)")
	fs.BoolVar(&s.force, "force", false, "overwrite the files of an earlier adoption in -out")
	fs.Usage = func() {
		_, _ = fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, errHelp
		}
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q: settings are flags (pve-adopt -h)", fs.Arg(0))
	}
	if s.endpoint == "" {
		return nil, errors.New("no endpoint: give -endpoint https://<node>:8006 (or set PVE_ENDPOINT)")
	}
	if u, err := url.Parse(s.endpoint); err != nil || u.Scheme != "https" || u.Hostname() == "" {
		return nil, fmt.Errorf("-endpoint (PVE_ENDPOINT) must be an https:// URL such as https://pve1.example.com:8006; got %q", s.endpoint)
	}
	if !strings.Contains(s.username, "@") {
		return nil, fmt.Errorf("-username (PVE_USERNAME) must include the realm, such as root@pam; got %q", s.username)
	}
	for _, a := range strings.Split(*areas, ",") {
		if a = strings.TrimSpace(a); a == "" {
			continue
		}
		known := false
		for _, k := range adopt.Areas() {
			known = known || k == a
		}
		if !known {
			return nil, fmt.Errorf("-areas: unknown area %q; the areas are %s", a, strings.Join(adopt.Areas(), ","))
		}
		s.areas = append(s.areas, a)
	}
	if len(s.areas) == 0 {
		return nil, fmt.Errorf("-areas is empty; the areas are %s", strings.Join(adopt.Areas(), ","))
	}

	switch ca := env("PVE_CA_CERT", ""); {
	case *caCert != "":
		s.caCertFile = *caCert
	case strings.Contains(ca, "-----BEGIN"):
		s.caCert = ca
	case ca != "":
		s.caCertFile = ca
	}
	if s.caCertFile != "" {
		b, err := os.ReadFile(s.caCertFile)
		if err != nil {
			return nil, fmt.Errorf("-ca-cert (PVE_CA_CERT): %w", err)
		}
		if !strings.Contains(string(b), "-----BEGIN CERTIFICATE") {
			return nil, fmt.Errorf("-ca-cert (PVE_CA_CERT): %s holds no PEM certificate", s.caCertFile)
		}
		s.caCert = string(b)
	}

	if s.noSSH {
		if len(s.sshNodes) > 0 {
			return nil, errors.New("-ssh-node and -no-ssh contradict each other: drop one")
		}
		return s, nil
	}
	if s.sshKeyFile == "" {
		for _, k := range []string{"id_ed25519", "id_ecdsa", "id_rsa"} {
			if p := home(filepath.Join(".ssh", k)); p != "" {
				if _, err := os.Stat(p); err == nil {
					s.sshKeyFile = p
					break
				}
			}
		}
		if s.sshKeyFile == "" {
			return nil, errors.New("no SSH key: give -ssh-key FILE (or PVE_SSH_PRIVATE_KEY_FILE), the key that logs in to the nodes as " +
				s.sshUser + "; or -no-ssh to adopt only what the API reports")
		}
	}
	b, err := os.ReadFile(s.sshKeyFile)
	if err != nil {
		return nil, fmt.Errorf("-ssh-key (PVE_SSH_PRIVATE_KEY_FILE): %w", err)
	}
	if _, err := ssh.ParsePrivateKey(b); err != nil {
		var pm *ssh.PassphraseMissingError
		if errors.As(err, &pm) {
			return nil, fmt.Errorf("-ssh-key %s is protected by a passphrase: adoption (and the generated main.tf, which reads the file) needs a key without one", s.sshKeyFile)
		}
		return nil, fmt.Errorf("-ssh-key %s (PVE_SSH_PRIVATE_KEY_FILE) is not a private key: %w", s.sshKeyFile, err)
	}
	if s.knownHosts == "" {
		return nil, errors.New("no known_hosts file: give -known-hosts FILE (or PVE_SSH_KNOWN_HOSTS) with the nodes' host keys")
	}
	if _, err := os.Stat(s.knownHosts); err != nil {
		return nil, fmt.Errorf("-known-hosts (PVE_SSH_KNOWN_HOSTS) %s: %w; it must hold the nodes' host keys (log in once with ssh %s@<node>, checking the key)",
			s.knownHosts, errors.Unwrap(err), s.sshUser)
	}
	return s, nil
}

// password is PVE_PASSWORD or, on a terminal, asked for.
func password(s *settings, sys system) (string, error) {
	if pw := sys.getenv("PVE_PASSWORD"); pw != "" {
		return pw, nil
	}
	pw, ok, err := sys.readPassword(fmt.Sprintf("Password of %s at %s: ", s.username, s.endpoint))
	if err != nil {
		return "", fmt.Errorf("read the password: %w", err)
	}
	if !ok {
		return "", fmt.Errorf("no password: set PVE_PASSWORD to the password of %s (or run pve-adopt in a terminal to be asked); it is never a flag, flags show in ps", s.username)
	}
	if pw == "" {
		return "", errors.New("empty password")
	}
	return pw, nil
}

// tfFiles lists the Terraform files and ADOPTION.md in dir: what an
// adoption into it would overwrite or leave beside its own.
func tfFiles(dir string) []string {
	var out []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if n := e.Name(); !e.IsDir() && (strings.HasSuffix(n, ".tf") || n == "ADOPTION.md" || strings.HasPrefix(n, "terraform.tfstate")) {
			out = append(out, n)
		}
	}
	return out
}

// run is main without process globals; it returns the exit status.
func run(ctx context.Context, args []string, sys system) int {
	fail := func(err error) int {
		_, _ = fmt.Fprintln(sys.stderr, "pve-adopt:", err)
		return 1
	}
	s, err := parse(args, sys)
	if errors.Is(err, errHelp) {
		return 0
	}
	if err != nil {
		_, _ = fmt.Fprintln(sys.stderr, "pve-adopt:", err)
		return 2
	}
	// Refuse before reading the cluster, not after.
	if existing := tfFiles(s.out); len(existing) > 0 && !s.force {
		return fail(fmt.Errorf("-out %s already holds %s: adopt into a new directory, or pass -force to overwrite", s.out, strings.Join(existing, ", ")))
	}
	if s.password, err = password(s, sys); err != nil {
		return fail(err)
	}

	cfg := adopt.Config{Endpoint: s.endpoint, Username: s.username, Password: s.password, TLSFingerprint: s.fingerprint, CACert: s.caCert}
	prov := adopt.ProviderSettings{Endpoint: s.endpoint, Username: s.username, TLSFingerprint: s.fingerprint, CACertFile: s.caCertFile}
	if !s.noSSH {
		key, err := os.ReadFile(s.sshKeyFile)
		if err != nil {
			return fail(fmt.Errorf("-ssh-key: %w", err))
		}
		cfg.SSH = &adopt.SSHConfig{User: s.sshUser, PrivateKey: string(key), KnownHostsFile: s.knownHosts, Nodes: s.sshNodes}
		prov.SSHUser, prov.SSHKeyFile, prov.KnownHostsFile, prov.SSHNodes = s.sshUser, tilde(s.sshKeyFile, sys.home), tilde(s.knownHosts, sys.home), s.sshNodes
	}
	_, _ = fmt.Fprintf(sys.stdout, "pve-adopt: reading %s as %s (%s; reads only)\n", s.endpoint, s.username, strings.Join(s.areas, ", "))
	res, err := adopt.Run(ctx, cfg, adopt.Options{Areas: s.areas, Provider: prov})
	if err != nil {
		return fail(hint(err, s))
	}
	before := map[string]bool{}
	for _, n := range tfFiles(s.out) {
		before[n] = true
	}
	if err := res.WriteDir(s.out, s.force); err != nil {
		return fail(err)
	}
	if _, err := io.WriteString(sys.stdout, summary(s, res, before)); err != nil {
		return fail(err)
	}
	return 0
}

// tilde writes a path under the home directory as ~/..., so that the
// generated main.tf works for the same user on another machine.
func tilde(p, home string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if home != "" {
		if rel, err := filepath.Rel(home, p); err == nil && !strings.HasPrefix(rel, "..") {
			return "~/" + filepath.ToSlash(rel)
		}
	}
	return p
}

// hint adds the way out to the errors a first run meets.
func hint(err error, s *settings) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "x509") || strings.Contains(msg, "certificate") && !strings.Contains(msg, "host key"):
		return fmt.Errorf("%w\nPin the endpoint's certificate with -tls-fingerprint (PVE_TLS_FINGERPRINT; node > System > Certificates, "+
			"or: openssl s_client -connect <host>:8006 </dev/null | openssl x509 -noout -fingerprint -sha256), or give its CA with -ca-cert", err)
	case strings.Contains(msg, "401") || strings.Contains(strings.ToLower(msg), "authentication failure"):
		return fmt.Errorf("%w\nCheck PVE_PASSWORD: it must be the password of %s", err, s.username)
	case strings.Contains(msg, "knownhosts") || strings.Contains(msg, "host key"):
		return fmt.Errorf("%w\nThe nodes' host keys must be in %s (-known-hosts); or use -no-ssh", err, s.knownHosts)
	case strings.Contains(msg, "ssh:") || strings.Contains(msg, "dial tcp") && strings.Contains(msg, ":22"):
		return fmt.Errorf("%w\nCheck -ssh-key, -ssh-user and, for nodes SSH reaches elsewhere than at the address PVE reports, -ssh-node name=host:port; or use -no-ssh", err)
	}
	return err
}

// maxSkipLines is how many objects not adopted the summary lists; the
// rest are in ADOPTION.md.
const maxSkipLines = 10

// summary is what a person reads after the run: what was adopted, where
// it went, what was not and what to do next.
func summary(s *settings, res *adopt.Result, before map[string]bool) string {
	w := &strings.Builder{}
	fmt.Fprintf(w, "\nAdopted %s:\n", plural(len(res.Imports), "object"))
	for _, c := range res.Counts() {
		fmt.Fprintf(w, "  %-28s %d\n", c.Type, c.N)
	}
	files := res.Render()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(w, "\nWrote %s:\n", s.out)
	written := map[string]bool{}
	for _, n := range names {
		written[n] = true
		fmt.Fprintf(w, "  %s\n", n)
	}
	var stale []string
	for n := range before {
		if !written[n] {
			stale = append(stale, n)
		}
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		fmt.Fprintf(w, "  (also there, not written by this run: %s; remove what an earlier adoption left)\n", strings.Join(stale, ", "))
	}
	if len(res.Skipped) > 0 {
		fmt.Fprintf(w, "\nNot adopted (%d; the reasons are in ADOPTION.md):\n", len(res.Skipped))
		for i, sk := range res.Skipped {
			if i == maxSkipLines && len(res.Skipped) > maxSkipLines+1 {
				fmt.Fprintf(w, "  ... and %d more\n", len(res.Skipped)-i)
				break
			}
			fmt.Fprintf(w, "  %s\n", sk.Object)
		}
	} else {
		fmt.Fprintln(w, "\nEverything found is in the configuration.")
	}
	if s.noSSH {
		fmt.Fprintln(w, "Without SSH (-no-ssh): what only a node holds was not read.")
	}
	fmt.Fprintln(w, "\nSet before terraform runs (never written to a file):")
	fmt.Fprintf(w, "  export TF_VAR_password=...   # the password of %s\n", s.username)
	for _, v := range res.Variables {
		fmt.Fprintf(w, "  export TF_VAR_%s=...\n", v)
	}
	if s.caCert != "" && s.caCertFile == "" {
		fmt.Fprintln(w, "  export PVE_CA_CERT=...       # the CA certificate, as for this run")
	}
	fmt.Fprintf(w, "\nNext:\n  cd %s\n  terraform init\n  terraform plan    # must show only imports: 0 to add, 0 to change, 0 to destroy\n"+
		"  terraform apply   # records them in state; changes nothing on the cluster\n", s.out)
	return w.String()
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
