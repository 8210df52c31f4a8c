package adopt_test

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/adopt"
)

// adopted is one adoption of a hand-built lab: the environment, what the
// adoption produced and the configuration a test applies (the generated
// files but main.tf, after the test environment's provider block).
type adopted struct {
	env    *acctest.Env
	res    *adopt.Result
	files  map[string][]byte
	config string
}

// adoptLab starts the shipped lab in its hand-built state, runs the
// adoption of areas (all when none) and checks that the adoption itself
// sent no write and ran no writing command.
func adoptLab(t *testing.T, lab string, areas ...string) *adopted {
	t.Helper()
	return adoptEnv(t, acctest.HandBuiltLab(t, lab), areas...)
}

// adoptEnv is adoptLab on an environment already started (a standalone
// node, for example).
func adoptEnv(t *testing.T, e *acctest.Env, areas ...string) *adopted {
	t.Helper()
	return adoptedFrom(e, runAdoption(t, e, true, areas...))
}

// runAdoption runs the adoption of areas (all when none) on e, with or
// without SSH, checks that it sent no write and ran no writing command
// (none at all without SSH), and logs how many requests and SSH commands (by command) it took.
func runAdoption(t *testing.T, e *acctest.Env, withSSH bool, areas ...string) *adopt.Result {
	t.Helper()
	from, sshFrom := len(e.Sim.Requests()), len(e.Sim.SSHCommands())
	cfg := adopt.Config{Endpoint: e.Endpoint(), Password: e.RootPassword(), TLSFingerprint: e.TLSFingerprint()}
	if withSSH {
		cfg.SSH = &adopt.SSHConfig{PrivateKey: e.SSHClientKey(), KnownHostsFile: e.KnownHosts, Nodes: e.SSHEndpoints()}
	}
	res, err := adopt.Run(context.Background(), cfg,
		adopt.Options{Areas: areas, Provider: adopt.ProviderSettings{Endpoint: e.Endpoint(), TLSFingerprint: e.TLSFingerprint()}})
	if err != nil {
		t.Fatalf("adopt: %v", err)
	}
	checkNoWrites(t, e, from, sshFrom, "the adoption")
	cmds := e.Sim.SSHCommands()[sshFrom:]
	if !withSSH && len(cmds) > 0 {
		t.Errorf("the adoption ran %d SSH commands without SSH: %v", len(cmds), cmds)
	}
	tally := map[string]int{}
	for _, c := range cmds {
		if f := strings.Fields(c.Line); len(f) > 1 {
			tally[f[0]+" "+f[1]]++
		}
	}
	t.Logf("the adoption sent %d API requests and ran %d SSH commands: %v", len(e.Sim.Requests())-from, len(cmds), tally)
	return res
}

// adoptedFrom is the adoption res of e with the configuration a test
// applies: the generated files but main.tf, in name order, after the test
// environment's provider block.
func adoptedFrom(e *acctest.Env, res *adopt.Result) *adopted {
	files := res.Render()
	names := make([]string, 0, len(files))
	for n := range files {
		if strings.HasSuffix(n, ".tf") && n != "main.tf" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var hcl strings.Builder
	for _, n := range names {
		fmt.Fprintf(&hcl, "# --- %s\n%s\n", n, files[n])
	}
	return &adopted{env: e, res: res, files: files, config: e.Config(hcl.String())}
}

// checkImports fails for each import of want (address -> ID, "" for an
// address that must not be imported) the adoption did not write so.
func checkImports(t *testing.T, res *adopt.Result, want map[string]string) {
	t.Helper()
	got := map[string]string{}
	for _, im := range res.Imports {
		got[im.To] = im.ID
	}
	for to, id := range want {
		if got[to] != id {
			t.Errorf("import to %s: id %q, want %q (imports:\n%s)", to, got[to], id, importLines(res))
		}
	}
}

// checkImportCount fails unless the adoption wrote n import blocks. With
// checkImports of n addresses, the imports are exactly those.
func checkImportCount(t *testing.T, res *adopt.Result, n int) {
	t.Helper()
	if len(res.Imports) != n {
		t.Errorf("%d imports, want %d:\n%s", len(res.Imports), n, importLines(res))
	}
}

// checkImportsExactly fails unless the adoption's imports are exactly
// want (address -> ID).
func checkImportsExactly(t *testing.T, res *adopt.Result, want map[string]string) {
	t.Helper()
	checkImports(t, res, want)
	checkImportCount(t, res, len(want))
}

// importLines are the adoption's imports, "address = ID" a line, sorted.
func importLines(res *adopt.Result) string {
	lines := make([]string, 0, len(res.Imports))
	for _, im := range res.Imports {
		lines = append(lines, im.To+" = "+im.ID)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// checkSkipped fails unless n objects not adopted have object in their
// name and a reason that mentions about (any reason when about is "").
func checkSkipped(t *testing.T, res *adopt.Result, object, about string, n int) {
	t.Helper()
	c := 0
	for _, s := range res.Skipped {
		if strings.Contains(s.Object, object) && s.Reason != "" && strings.Contains(s.Reason, about) {
			c++
		}
	}
	if c != n {
		t.Errorf("%d objects not adopted mention %q with a reason about %q, want %d: %v", c, object, about, n, res.Skipped)
	}
}

// checkNoWrites fails the test for any API request but a read (and the
// login) and any SSH command that may write since the given log positions.
func checkNoWrites(t *testing.T, e *acctest.Env, from, sshFrom int, during string) {
	t.Helper()
	for _, r := range e.Sim.Requests()[from:] {
		if r.Method != "GET" && !strings.HasPrefix(r.Path, "/access/") {
			t.Errorf("%s wrote to the cluster: %s %s", during, r.Method, r.Path)
		}
	}
	for _, c := range e.Sim.SSHCommands()[sshFrom:] {
		if !acctest.ReadOnlySSH(c.Argv) {
			t.Errorf("%s ran a command that may write on %s: %s", during, c.Node, c.Line)
		}
	}
}

var resourceAddr = regexp.MustCompile(`^([a-z0-9_]+\.[a-z0-9_]+)(\[.*\])?$`)

// steps are the adoption's test steps: the first plan imports exactly the
// import blocks and plans nothing else (every other change is listed with
// its attributes), the apply writes nothing, the next plan is empty, and
// a last step forgets everything (removed blocks: an adopted lab is not
// torn down, and terraform-plugin-testing cannot read for_each state).
func (a *adopted) steps(t *testing.T) []resource.TestStep {
	t.Helper()
	var from, sshFrom int
	if len(a.res.Imports) == 0 {
		t.Fatal("the adoption produced no import block")
	}
	resources := map[string]bool{}
	for _, im := range a.res.Imports {
		m := resourceAddr.FindStringSubmatch(im.To)
		if m == nil {
			t.Fatalf("import to %q is not a resource address", im.To)
		}
		resources[m[1]] = true
	}
	var forget []string
	for r := range resources {
		forget = append(forget, r)
	}
	sort.Strings(forget)
	return []resource.TestStep{
		{
			PreConfig: func() { from, sshFrom = len(a.env.Sim.Requests()), len(a.env.Sim.SSHCommands()) },
			Config:    a.config,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				onlyImports{want: len(a.res.Imports)},
			}},
		},
		{
			PreConfig: func() { checkNoWrites(t, a.env, from, sshFrom, "applying the adoption") },
			Config:    a.config,
			PlanOnly:  true,
		},
		acctest.ForgetStep(a.env.ProviderConfig(), forget...),
	}
}

// onlyImports is a plan check: every resource change is a no-op import,
// there are want of them, and nothing else is planned. On failure it lists
// each other change with the attributes that differ: what adoption did not
// represent.
type onlyImports struct{ want int }

func (o onlyImports) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	var msgs []string
	imports := 0
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Change == nil {
			continue
		}
		if rc.Change.Importing != nil {
			imports++
		}
		if rc.Change.Actions.NoOp() {
			continue
		}
		before, _ := rc.Change.Before.(map[string]any)
		after, _ := rc.Change.After.(map[string]any)
		var keys []string
		for k, v := range after {
			if fmt.Sprint(before[k]) != fmt.Sprint(v) {
				keys = append(keys, fmt.Sprintf("%s: %v -> %v", k, before[k], v))
			}
		}
		sort.Strings(keys)
		msgs = append(msgs, fmt.Sprintf("%s %v: %s", rc.Address, rc.Change.Actions, strings.Join(keys, "; ")))
	}
	if imports != o.want {
		msgs = append(msgs, fmt.Sprintf("%d imports planned, want %d (one per import block)", imports, o.want))
	}
	if len(msgs) > 0 {
		resp.Error = fmt.Errorf("the adopted configuration plans more than imports:\n%s", strings.Join(msgs, "\n"))
	}
}
