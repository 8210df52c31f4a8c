package acctest

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

// HandBuilt starts the reference lab in pvesim's hand-built state (issue #12).
func HandBuilt(t *testing.T) *Env {
	t.Helper()
	return HandBuiltLab(t, "reference")
}

// HandBuiltLab starts a shipped lab (examples/labs/<name>) in pvesim's
// hand-built state.
func HandBuiltLab(t *testing.T, name string) *Env {
	t.Helper()
	return HandBuiltLabWith(t, name, pvesim.Options{})
}

// HandBuiltLabWith is HandBuiltLab with more simulator options (such as
// CephTimeScale for tests that restart or drain the hand-built OSDs).
func HandBuiltLabWith(t *testing.T, name string, opts pvesim.Options) *Env {
	t.Helper()
	if Live() {
		t.Skip("needs pvesim's hand-built lab")
	}
	lab, err := pvesim.ShippedLab(name)
	if err != nil {
		t.Fatal(err)
	}
	lab.Start = pvesim.StartHandBuilt
	// The lab's pve_release would override PVESIM_RELEASE (a lab decides
	// its release): the acceptance tests run against every release.
	if r := os.Getenv("PVESIM_RELEASE"); r != "" {
		lab.PVERelease = r
	}
	opts.Lab = lab
	return NewWithOptions(t, opts)
}

// ReadOnlyClient is a root@pam client that refuses every write before it
// is sent (pve.Config.ReadOnly), as the adoption command uses.
func (e *Env) ReadOnlyClient(t *testing.T) *pve.Client {
	t.Helper()
	if e.Sim == nil {
		t.Skip("needs the simulator")
	}
	return mustClient(t, pve.Config{Endpoint: e.endpoint, Username: "root@pam", Password: e.rootPassword, TLSFingerprint: e.fingerprint, ReadOnly: true})
}

// Endpoint, TLSFingerprint and RootPassword are how the environment
// reaches PVE as root@pam.
func (e *Env) Endpoint() string       { return e.endpoint }
func (e *Env) TLSFingerprint() string { return e.fingerprint }
func (e *Env) RootPassword() string   { return e.rootPassword }

// SSHClientKey is the simulated nodes' root key ("" without SSH) and
// SSHEndpoints each node's sshd (host:port).
func (e *Env) SSHClientKey() string { return e.sshInfo.SSHClientKey }
func (e *Env) SSHEndpoints() map[string]string {
	out := map[string]string{}
	for _, n := range e.sshInfo.Nodes {
		out[n.Name] = n.SSHEndpoint
	}
	return out
}

// ReadOnlySSH reports whether a command line only reads: adoption must not
// change a node.
func ReadOnlySSH(argv []string) bool { return readOnlySSH(argv) }

// readOnlySSH reports whether a command line only reads: adoption must not
// change a node.
func readOnlySSH(argv []string) bool {
	if len(argv) == 0 {
		return false
	}
	switch argv[0] {
	case "cat", "stat", "lsblk", "findmnt", "dpkg-query", "test", "ls", "readlink", "sha256sum", "uname", "true", "command", "ip":
		return true
	case "systemctl":
		for _, a := range argv[1:] {
			switch a {
			case "show", "is-active", "is-enabled", "status", "cat", "list-unit-files":
				return true
			}
		}
	case "ceph":
		// Exactly what adoption reads (pve_ceph_config's Read): an
		// allow-list, independent of internal/adopt's.
		a := strings.Join(argv[1:], " ")
		return a == "config dump" || a == "config dump --format json"
	case "tuned-adm":
		return len(argv) > 1 && (argv[1] == "active" || argv[1] == "list")
	case "ethtool":
		return len(argv) > 1 && (argv[1] == "-g" || argv[1] == "-i" || argv[1] == "--show-ring")
	}
	return false
}

// AdoptSteps are the steps of an adoption test: the first plan is imports
// with the given actions (noop unless listed), the apply sends no write
// request and runs no writing command, the next plan is empty.
func (e *Env) AdoptSteps(config string, addrs ...string) []resource.TestStep {
	return e.AdoptStepsUpdating(config, addrs, nil)
}

// AdoptStepsUpdating is AdoptSteps where the resources at updates plan an
// in-place update on import that must still write nothing to the nodes
// (a setting of the provider's own that import cannot read back).
func (e *Env) AdoptStepsUpdating(config string, addrs, updates []string) []resource.TestStep {
	var from, sshFrom int
	var checks []plancheck.PlanCheck
	for _, a := range addrs {
		checks = append(checks, plancheck.ExpectResourceAction(a, plancheck.ResourceActionNoop))
	}
	diff := planDiff{updates: map[string]bool{}}
	for _, a := range updates {
		checks = append(checks, plancheck.ExpectResourceAction(a, plancheck.ResourceActionUpdate))
		diff.updates[a] = true
	}
	checks = append([]plancheck.PlanCheck{diff}, checks...)
	return []resource.TestStep{
		{
			PreConfig: func() {
				from = len(e.Sim.Requests())
				sshFrom = len(e.Sim.SSHCommands())
			},
			Config:           config,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: checks},
			Check: func(*terraform.State) error {
				for _, r := range e.Sim.Requests()[from:] {
					if r.Method != "GET" && !strings.HasPrefix(r.Path, "/access/") {
						return fmt.Errorf("adoption wrote to the cluster: %s %s", r.Method, r.Path)
					}
				}
				for _, c := range e.Sim.SSHCommands()[sshFrom:] {
					if !readOnlySSH(c.Argv) {
						return fmt.Errorf("adoption ran a command that may write on %s: %s", c.Node, c.Line)
					}
				}
				return nil
			},
		},
		{Config: config, PlanOnly: true},
	}
}

// ForgetStep drops addrs from the state without destroying them (removed
// blocks), so that the post-test destroy leaves an adopted lab standing
// where tearing it down is refused (a member with guests or Ceph daemons).
func ForgetStep(providerBlock string, addrs ...string) resource.TestStep {
	hcl := providerBlock
	for _, a := range addrs {
		hcl += fmt.Sprintf("\nremoved {\n  from = %s\n  lifecycle {\n    destroy = false\n  }\n}\n", a)
	}
	return resource.TestStep{Config: hcl}
}

// planDiff is a plan check that fails listing, for each resource planned
// other than as expected, the attributes whose values change: the report
// of what adoption could not represent.
type planDiff struct{ updates map[string]bool }

func (p planDiff) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	var msgs []string
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Change == nil || rc.Change.Actions.NoOp() || (p.updates[rc.Address] && rc.Change.Actions.Update()) {
			continue
		}
		before, _ := rc.Change.Before.(map[string]any)
		after, _ := rc.Change.After.(map[string]any)
		unknown, _ := rc.Change.AfterUnknown.(map[string]any)
		var keys []string
		for k := range after {
			if !reflect.DeepEqual(before[k], after[k]) || unknown[k] == true {
				keys = append(keys, fmt.Sprintf("%s: %v -> %v", k, before[k], after[k]))
			}
		}
		for k := range before {
			if _, ok := after[k]; !ok {
				keys = append(keys, fmt.Sprintf("%s: %v -> (gone)", k, before[k]))
			}
		}
		sort.Strings(keys)
		msgs = append(msgs, fmt.Sprintf("%s %v: %s", rc.Address, rc.Change.Actions, strings.Join(keys, "; ")))
	}
	if len(msgs) > 0 {
		resp.Error = fmt.Errorf("adoption plans changes:\n%s", strings.Join(msgs, "\n"))
	}
}
