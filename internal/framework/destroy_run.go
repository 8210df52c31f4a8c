package framework

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
)

// `terraform destroy` (and `apply -destroy`, `plan -destroy`) first runs
// a normal plan of the configuration to refresh the state (Terraform's
// pre-destroy refresh, context_plan.go), and fails the destroy when that
// plan has an error. Its req.Plan is not null, and nothing in the protocol
// tells it from a real plan. So a refused update (a disk shrink) also
// refused every destroy until the configuration was reverted or
// `-refresh=false` given. The provider process is started by the CLI, so
// its parent's command line says whether this run is a destroy; in one,
// no update is ever applied, and update-only refusals become warnings.

var (
	destroyRunOnce sync.Once
	destroyRun     bool
	// parentCmdline reads the command line of the process that started
	// the provider (Linux /proc; elsewhere the check finds nothing).
	parentCmdline = func() []string {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(os.Getppid()), "cmdline"))
		if err != nil {
			return nil
		}
		return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	}
)

// DestroyRun reports whether the provider serves a Terraform (or
// OpenTofu) destroy run, judged once per process from the CLI that
// started it. Under terraform-plugin-testing's in-process provider the
// parent is the test, so it is false.
func DestroyRun() bool {
	destroyRunOnce.Do(func() { destroyRun = isDestroyCommand(parentCmdline()) })
	return destroyRun
}

// isDestroyCommand: terraform|tofu [global flags] destroy ..., or
// apply|plan with -destroy.
func isDestroyCommand(args []string) bool {
	if len(args) < 2 {
		return false
	}
	base := filepath.Base(args[0])
	if !strings.Contains(base, "terraform") && !strings.Contains(base, "tofu") {
		return false
	}
	sub := ""
	i := 1
	for ; i < len(args); i++ {
		if !strings.HasPrefix(args[i], "-") {
			sub = args[i]
			break
		}
	}
	switch sub {
	case "destroy":
		return true
	case "apply", "plan":
		for _, a := range args[i+1:] {
			switch a {
			case "-destroy", "--destroy", "-destroy=true", "--destroy=true":
				return true
			}
		}
	}
	return false
}

// RefuseChange refuses at plan a change of the top-level attribute attr
// of an existing object that PVE cannot make in place (and that replacing
// the object would make at the cost of its data). The summary is always
// "Cannot change <attr> of <what>"; detail names the values, says why
// and what to do instead. An error, except in a destroy run, where the
// update is never applied and the error would only block the destroy (see
// DestroyRun); there it is a warning.
func RefuseChange(diags *diag.Diagnostics, attr, what, detail string) {
	addUpdateRefusal(diags, path.Root(attr), "Cannot change "+attr+" of "+what, detail)
}

// RefuseDestroy refuses at plan the destroy of an object whose destroy
// would lose data or break the cluster. The summary is always "Refusing
// to destroy <what>"; detail says why and what to do instead (the guard
// to lift and apply first, or a removed block with lifecycle { destroy =
// false } to stop managing it). attr, when not empty, is the attribute
// that guards the object. Always an error, also in a destroy run: that is
// the run it exists for.
func RefuseDestroy(diags *diag.Diagnostics, attr, what, detail string) {
	summary := "Refusing to destroy " + what
	if attr == "" {
		diags.AddError(summary, detail)
		return
	}
	diags.AddAttributeError(path.Root(attr), summary, detail)
}

// addUpdateRefusal refuses a planned update of an existing resource at
// attribute p (RefuseChange).
func addUpdateRefusal(diags *diag.Diagnostics, p path.Path, summary, detail string) {
	if DestroyRun() {
		diags.AddAttributeWarning(p, summary, detail+"\n\nIgnored in this destroy run: Terraform plans the configuration "+
			"before destroying, and a destroy applies no update.")
		return
	}
	diags.AddAttributeError(p, summary, detail)
}
