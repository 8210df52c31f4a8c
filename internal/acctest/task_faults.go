package acctest

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
)

// adoptedRE is the summary of framework.WarnAdopted, or of a VM power
// change whose task failed after the change.
var adoptedRE = regexp.MustCompile(`Adopted .* left by its failed create task|VM \d+ (runs|is stopped) although its task failed`)

// TaskFaultCase is a test where a PVE task fails on the first apply of
// config: spec (a pvesim fault spec, e.g. "task qmcreate=fail-late:1x") is
// set before it. With wantErr that apply fails with it (the worker left
// nothing, or the provider cleans it up next time); with nil it succeeds
// and warns that it adopted what the failed worker left (or, for a VM's
// start or shutdown, that the VM is as planned). The faults are
// then cleared and the next apply of the same config must converge: check
// holds after it, and resource.Test checks that the plan after each apply
// is empty. After an adopting first apply the second plans nothing at all.
func (e *Env) TaskFaultCase(spec, config string, wantErr *regexp.Regexp, check resource.TestCheckFunc) resource.TestCase {
	tc := resource.TestCase{}
	rec := RecordDiagnostics(&tc)
	first := resource.TestStep{
		PreConfig: func() {
			if err := e.Sim.SetFaultSpec(spec); err != nil {
				panic(err) // a test's own spec: a typo is the test's bug
			}
		},
		Config:      config,
		ExpectError: wantErr,
	}
	second := resource.TestStep{PreConfig: e.Sim.ClearFaults, Config: config, Check: check}
	if wantErr == nil {
		first.Check = resource.ComposeTestCheckFunc(rec.CheckApplyWarning(adoptedRE), check)
		second.ConfigPlanChecks.PreApply = []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}
	}
	tc.Steps = []resource.TestStep{first, second}
	return tc
}

// TaskActions are the two ways a PVE worker fails: before its work (fail)
// and after it (fail-late: the worker dies, what it made stays).
var TaskActions = []string{"fail", "fail-late"}

// ErrUnlessAdopted is TaskFaultCase's wantErr for a create: the error
// (pattern) when the worker failed before its work, nil after it, when
// the create adopts what the worker left.
func ErrUnlessAdopted(action, pattern string) *regexp.Regexp {
	if action == "fail-late" {
		return nil
	}
	return regexp.MustCompile(pattern)
}

// EachTaskFault runs f in a parallel subtest "<type>-<action>" for each
// task type and each of TaskActions.
func EachTaskFault(t *testing.T, types []string, f func(t *testing.T, typ, action string)) {
	t.Helper()
	for _, typ := range types {
		for _, action := range TaskActions {
			t.Run(typ+"-"+action, func(t *testing.T) {
				t.Parallel()
				f(t, typ, action)
			})
		}
	}
}
