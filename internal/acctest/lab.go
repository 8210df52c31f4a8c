package acctest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

// A lab run is what scripts/lab.sh (make lab) does, from Go: a
// configuration directory applied by the real Terraform CLI, through the
// provider binary (dev_overrides, a child process of the CLI as for a
// user), against an in-process pvesim started from a lab file. Unlike
// Env.Run (terraform-plugin-testing, provider in-process), it sees what
// only a real run has: the CLI's command line (destroy runs), a re-run
// over state written by an earlier failed apply, and the whole homelab.

// LabOptions selects the lab of NewLab.
type LabOptions struct {
	// Lab is a shipped lab's name (examples/labs); default "reference".
	Lab string
	// Start overrides the lab's starting state ("" = the lab file's).
	Start string
	// ConfigDir is copied into the work dir, relative to the repository
	// root; default examples/homelab. "-" copies nothing (Files only).
	ConfigDir string
	// Files are written into the work dir after ConfigDir: name -> content.
	Files map[string]string
	// Sim adjusts the simulator's options (Lab is set from Lab/Start;
	// TaskDuration defaults to 10 ms).
	Sim pvesim.Options
}

// Lab is one lab run's simulator and work directory.
type Lab struct {
	Sim *pvesim.Sim
	// Dir is the work dir holding the configuration and its state.
	Dir string
	// Nodes are the lab's node names, in the lab file's order.
	Nodes []string

	t       *testing.T
	cli     string
	env     []string
	runs    int
	rootPwd string
	info    pvesim.Info
}

var (
	labProviderOnce sync.Once
	labProviderDir  string
	labProviderErr  error
)

// labProvider builds the provider binary once per test process into a
// directory that dev_overrides points at (RemoveLabProvider removes it).
func labProvider() (string, error) {
	labProviderOnce.Do(func() {
		root, err := repoRoot()
		if err != nil {
			labProviderErr = fmt.Errorf("repository root: %w", err)
			return
		}
		dir, err := os.MkdirTemp("", "pve-lab-provider")
		if err != nil {
			labProviderErr = err
			return
		}
		cmd := exec.CommandContext(context.Background(), "go", "build", "-buildvcs=false", "-o", filepath.Join(dir, "terraform-provider-pve"), ".")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			labProviderErr = &buildError{out: string(out), err: err}
			return
		}
		labProviderDir = dir
	})
	return labProviderDir, labProviderErr
}

// RemoveLabProvider removes the provider binary labProvider built; call
// it from TestMain after m.Run.
func RemoveLabProvider() {
	if labProviderDir != "" {
		_ = os.RemoveAll(labProviderDir)
	}
}

// SkipUnlessLab skips a lab run unless TF_ACC is set (make test sets
// it): it builds the provider and runs the real CLI for minutes.
func SkipUnlessLab(t *testing.T) {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("lab runs need TF_ACC=1 (make test sets it): they build the provider and run the Terraform CLI")
	}
	if Live() {
		t.Skip("lab runs start their own simulator; PVE_ENDPOINT is set")
	}
}

// NewLab starts pvesim from the lab and prepares a work dir with the
// configuration, the CLI configuration (dev_overrides for both registry
// addresses) and the variables lab.sh gives (TF_VAR_nodes, TF_VAR_ssh).
func NewLab(t *testing.T, opts LabOptions) *Lab {
	t.Helper()
	SkipUnlessLab(t)
	SetupCLI(t)
	plugins, err := labProvider()
	if err != nil {
		t.Fatalf("build the provider: %v", err)
	}
	name := opts.Lab
	if name == "" {
		name = "reference"
	}
	lab, err := pvesim.ShippedLab(name)
	if err != nil {
		t.Fatal(err)
	}
	if opts.Start != "" {
		lab.Start = opts.Start
		if opts.Start != pvesim.StartFreshInstall && lab.ClusterName == "" {
			lab.ClusterName = pvesim.DefaultLabClusterName
		}
	}
	so := opts.Sim
	so.Lab = lab
	if so.TaskDuration == 0 {
		so.TaskDuration = 10 * time.Millisecond
	}
	sim, err := pvesim.Start(so)
	if err != nil {
		t.Fatalf("start pvesim: %v", err)
	}
	t.Cleanup(func() { _ = sim.Close() })

	tmp := t.TempDir()
	l := &Lab{Sim: sim, Dir: filepath.Join(tmp, "work"), t: t, cli: os.Getenv("TF_ACC_TERRAFORM_PATH"), info: sim.Info()}
	l.rootPwd = l.info.Nodes[0].RootPassword
	dir := opts.ConfigDir
	if dir == "" {
		dir = "examples/homelab"
	}
	modules := false
	if dir != "-" {
		// The configuration keeps its place beside examples/modules, so
		// that its module sources (../modules/...) resolve in the copy.
		root, err := repoRoot()
		if err != nil {
			t.Fatal(err)
		}
		l.Dir = filepath.Join(tmp, "repo", filepath.FromSlash(dir))
		if err := copyTree(filepath.Join(root, "examples", "modules"), filepath.Join(tmp, "repo", "examples", "modules")); err != nil {
			t.Fatal(err)
		}
		if err := copyConfig(filepath.Join(root, dir), l.Dir); err != nil {
			t.Fatal(err)
		}
		modules = true
	}
	if err := os.MkdirAll(l.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for n, c := range opts.Files {
		if err := os.WriteFile(filepath.Join(l.Dir, n), []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tfrc := filepath.Join(tmp, "dev.tfrc")
	if err := os.WriteFile(tfrc, []byte(devOverrides(plugins)), 0o600); err != nil {
		t.Fatal(err)
	}
	nodes, ssh := l.clientFiles(tmp)
	l.env = append(labEnviron(),
		"TF_CLI_CONFIG_FILE="+tfrc, "TOFU_CLI_CONFIG_FILE="+tfrc, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1",
		"TF_VAR_nodes="+nodes, "TF_VAR_ssh="+ssh)
	if modules {
		// Local modules are installed by get (init would look for the
		// provider, which dev_overrides serves).
		if r := l.Run("get"); r.ExitCode != 0 {
			t.Fatalf("get: %s", r.Output)
		}
	}
	return l
}

// labEnviron is the test's environment without what would redirect the
// CLI or the provider: its own CLI config, reattached providers, logs, a
// live cluster's PVE_* settings.
func labEnviron() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "TF_CLI_CONFIG_FILE", k == "TOFU_CLI_CONFIG_FILE", k == "TF_REATTACH_PROVIDERS",
			k == "TF_LOG", k == "TF_LOG_PATH", strings.HasPrefix(k, "TF_VAR_"), strings.HasPrefix(k, "PVE_"):
			continue
		}
		env = append(env, kv)
	}
	return env
}

// devOverrides is pvesim_dev_tfrc's CLI configuration.
func devOverrides(plugins string) string {
	return fmt.Sprintf(`provider_installation {
  dev_overrides {
    "registry.terraform.io/pvelab/pve" = %q
    "registry.opentofu.org/pvelab/pve" = %q
  }
  direct {}
}
`, plugins, plugins)
}

// clientFiles writes the lab's SSH key and known_hosts into dir and
// returns TF_VAR_nodes and TF_VAR_ssh as pvesim_client_files does.
func (l *Lab) clientFiles(dir string) (nodes, ssh string) {
	key := filepath.Join(dir, "id_lab")
	if err := os.WriteFile(key, []byte(l.info.SSHClientKey), 0o600); err != nil {
		l.t.Fatal(err)
	}
	var kh, nb, sb strings.Builder
	for _, n := range l.info.Nodes {
		l.Nodes = append(l.Nodes, n.Name)
		host, port, err := net.SplitHostPort(n.SSHEndpoint)
		if err != nil {
			l.t.Fatalf("ssh endpoint of %s: %v", n.Name, err)
		}
		fmt.Fprintf(&kh, "[%s]:%s %s\n", host, port, n.SSHHostKey)
		fmt.Fprintf(&nb, "%q = { endpoint = %q, password = %q, tls_fingerprint = %q }, ", n.Name, n.Endpoint, n.RootPassword, n.TLSFingerprint)
		fmt.Fprintf(&sb, "%q = { address = %q, port = %s }, ", n.Name, host, port)
	}
	khFile := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(khFile, []byte(kh.String()), 0o600); err != nil {
		l.t.Fatal(err)
	}
	return "{ " + nb.String() + "}", fmt.Sprintf("{ private_key_file = %q, known_hosts_file = %q, nodes = { %s} }", key, khFile, sb.String())
}

// copyConfig copies the configuration in src (its *.tf files and what
// they read, such as a certificate; not state, plans, .terraform or the
// lab file) into dst.
func copyConfig(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	n := 0
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "terraform.tfstate") ||
			strings.HasSuffix(name, ".tfplan") || name == "lab.json" {
			continue
		}
		if strings.HasSuffix(name, ".tf") {
			n++
		}
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, name), b, 0o600); err != nil {
			return err
		}
	}
	if n == 0 {
		return fmt.Errorf("%s holds no *.tf files", src)
	}
	return nil
}

// copyTree copies the configurations under src (modules) into dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() || d.Name() == ".terraform" {
			if err == nil && d.IsDir() {
				return filepath.SkipDir
			}
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		files, err := filepath.Glob(filepath.Join(p, "*.tf"))
		if err != nil || len(files) == 0 {
			return err
		}
		return copyConfig(p, filepath.Join(dst, rel))
	})
}

// LabRun is one CLI command's outcome.
type LabRun struct {
	Args     []string
	ExitCode int
	Output   string // stdout and stderr
	Duration time.Duration
}

// Errors are the run's "Error:" diagnostics (-no-color output), each on
// one line: the summary and the detail, without the configuration excerpt.
func (r *LabRun) Errors() string {
	var out, cur []string
	flush := func() {
		if cur != nil {
			out = append(out, strings.Join(cur, " "))
		}
		cur = nil
	}
	for _, ln := range strings.Split(r.Output, "\n") {
		s := strings.TrimSpace(ln)
		switch {
		case strings.HasPrefix(ln, "Error: "):
			flush()
			cur = []string{s}
		case strings.HasPrefix(ln, "Warning: "):
			flush()
		case cur == nil, s == "", configLineRE.MatchString(s), strings.HasPrefix(s, "with "), strings.HasPrefix(s, "on "):
		default:
			cur = append(cur, s)
		}
	}
	flush()
	return strings.Join(out, "\n")
}

// configLineRE matches the excerpt lines of a diagnostic ("61: resource ...").
var configLineRE = regexp.MustCompile(`^\d+: `)

// Run runs the CLI with args in the work dir (-chdir, -no-color added);
// the output is kept in the work dir's parent as run-<n>-<command>.log.
func (l *Lab) Run(args ...string) *LabRun {
	l.t.Helper()
	full := append([]string{"-chdir=" + l.Dir, args[0], "-no-color"}, args[1:]...)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, l.cli, full...)
	cmd.Env = l.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	r := &LabRun{Args: args, Output: out.String(), Duration: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.ExitCode = ee.ExitCode()
	default:
		l.t.Fatalf("%s %s: %v", l.cli, strings.Join(args, " "), err)
	}
	l.runs++
	_ = os.WriteFile(filepath.Join(filepath.Dir(l.Dir), fmt.Sprintf("run-%d-%s.log", l.runs, args[0])), out.Bytes(), 0o600)
	return r
}

// WriteFile writes a file into the work dir, such as a tfvars file
// holding the simulator's endpoint.
func (l *Lab) WriteFile(name, content string) {
	l.t.Helper()
	if err := os.WriteFile(filepath.Join(l.Dir, name), []byte(content), 0o600); err != nil {
		l.t.Fatal(err)
	}
}

// Apply runs apply -auto-approve (extra args appended).
func (l *Lab) Apply(args ...string) *LabRun {
	l.t.Helper()
	return l.Run(append([]string{"apply", "-auto-approve", "-input=false"}, args...)...)
}

// Plan runs plan -detailed-exitcode: 0 empty, 2 changes, 1 error.
func (l *Lab) Plan(args ...string) *LabRun {
	l.t.Helper()
	return l.Run(append([]string{"plan", "-detailed-exitcode", "-input=false"}, args...)...)
}

var planChangeRE = regexp.MustCompile(`(?m)^\s+# (\S+) (will be|must be) .*$`)

// PlannedChanges lists the "# <address> will be ..." lines of a plan.
func (r *LabRun) PlannedChanges() string {
	return strings.Join(planChangeRE.FindAllString(r.Output, -1), "\n")
}
