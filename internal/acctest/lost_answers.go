package acctest

import (
	"fmt"
	"path"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

// DropActions are the two ways a write's answer is lost: the connection
// closes before PVE acted (drop-before) or after (drop-after).
var DropActions = []string{"drop-before", "drop-after"}

// LostAnswerCase is a test where the first `METHOD PATH` write (PATH a
// pvesim glob) of the apply of config loses its answer (drop is one of
// DropActions): that apply must succeed anyway, with check holding, the
// writes having taken effect want times (EffectiveWrites: once per object
// config makes, none sent twice), and the next plan empty.
func (e *Env) LostAnswerCase(method, pathGlob, drop string, want int, config string, check resource.TestCheckFunc) resource.TestCase {
	return resource.TestCase{Steps: []resource.TestStep{{
		PreConfig: func() {
			if err := e.Sim.SetFaultSpec(method + " " + pathGlob + "=" + drop + ":1x"); err != nil {
				panic(err) // a test's own spec: a typo is the test's bug
			}
		},
		Config: config,
		Check: resource.ComposeTestCheckFunc(check, func(*terraform.State) error {
			if n := e.EffectiveWrites(method, pathGlob); n != want {
				return fmt.Errorf("%s %s took effect %d times under %s, want %d", method, pathGlob, n, drop, want)
			}
			return nil
		}),
	}, {
		PreConfig:        e.Sim.ClearFaults,
		Config:           config,
		ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
	}}}
}

// EffectiveWrites counts the logged method requests on paths matching
// pathGlob (path.Match) that took effect: answered with success, or
// dropped after PVE acted.
func (e *Env) EffectiveWrites(method, pathGlob string) int {
	n := 0
	for _, r := range e.Sim.Requests() {
		if ok, _ := path.Match(pathGlob, r.Path); !ok || r.Method != method {
			continue
		}
		if r.Fault == "drop-after" || r.Fault == "" && r.Status >= 200 && r.Status < 300 {
			n++
		}
	}
	return n
}

// EachDrop runs f in a parallel subtest for each of DropActions.
func EachDrop(t *testing.T, f func(t *testing.T, drop string)) {
	t.Helper()
	for _, drop := range DropActions {
		t.Run(drop, func(t *testing.T) {
			t.Parallel()
			f(t, drop)
		})
	}
}
