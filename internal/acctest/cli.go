package acctest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	cliOnce sync.Once
	cliErr  string
)

// SetupCLI makes terraform-plugin-testing find a CLI: TF_ACC_TERRAFORM_PATH,
// else terraform on PATH, else OpenTofu built from tools/tofu into .bin.
// It also points TF_CLI_CONFIG_FILE at an existing file, since a missing one
// breaks some CLI versions. Environment is process-wide, so this runs once.
func SetupCLI(t *testing.T) {
	t.Helper()
	cliOnce.Do(prepareCLI)
	if cliErr != "" {
		t.Fatal(cliErr)
	}
}

// prepareCLI sets the process-wide variables once; t.Setenv cannot serve,
// as parallel tests share them.
func prepareCLI() {
	_ = os.Setenv("CHECKPOINT_DISABLE", "1")
	if f := os.Getenv("TF_CLI_CONFIG_FILE"); f == "" || !fileExists(f) {
		// Not t.TempDir: the file must outlive the first test, since
		// the variable stays set for the whole process.
		dir, err := os.MkdirTemp("", "pve-acctest-cli")
		if err != nil {
			cliErr = err.Error()
			return
		}
		cfg := filepath.Join(dir, "cli.tfrc")
		if err := os.WriteFile(cfg, nil, 0o600); err != nil {
			cliErr = err.Error()
			return
		}
		_ = os.Setenv("TF_CLI_CONFIG_FILE", cfg)
	}
	bin := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if bin == "" {
		if p, err := exec.LookPath("terraform"); err == nil {
			bin = p
		} else if p, err := buildTofu(); err == nil {
			bin = p
		} else {
			cliErr = "no Terraform CLI: set TF_ACC_TERRAFORM_PATH, put terraform on PATH, or run `make tools` (" + err.Error() + ")"
			return
		}
		_ = os.Setenv("TF_ACC_TERRAFORM_PATH", bin)
	}
	// Test configurations carry no required_providers, so OpenTofu
	// resolves "pve" as registry.opentofu.org/hashicorp/pve.
	if strings.Contains(filepath.Base(bin), "tofu") {
		if os.Getenv("TF_ACC_PROVIDER_HOST") == "" {
			_ = os.Setenv("TF_ACC_PROVIDER_HOST", "registry.opentofu.org")
		}
		if os.Getenv("TF_ACC_PROVIDER_NAMESPACE") == "" {
			_ = os.Setenv("TF_ACC_PROVIDER_NAMESPACE", "hashicorp")
		}
	}
}

// buildTofu returns .bin/tofu at the repository root, building it from the
// pinned tools module when it is missing (a few minutes, once).
func buildTofu() (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(root, ".bin", "tofu")
	if fileExists(bin) {
		return bin, nil
	}
	cmd := exec.CommandContext(context.Background(), "go", "install", "-C", filepath.Join(root, "tools", "tofu"),
		"-ldflags", "-X github.com/opentofu/opentofu/version.dev=no", "tool")
	cmd.Env = append(os.Environ(), "GOBIN="+filepath.Join(root, ".bin"))
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", &buildError{out: string(out), err: err}
	}
	return bin, nil
}

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string {
	return "building OpenTofu failed: " + e.err.Error() + "\n" + e.out
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if fileExists(filepath.Join(dir, "go.mod")) && fileExists(filepath.Join(dir, "tools")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
