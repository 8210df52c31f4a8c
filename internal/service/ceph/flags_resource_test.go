package ceph_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

const flagsAddr = "pve_ceph_flags.this"

// checkFlags asserts the flags PVE reports: each named flag must have the
// given value.
func checkFlags(e *acctest.Env, want map[string]bool) resource.TestCheckFunc {
	return func(*terraform.State) error {
		got, err := e.Client.CephFlags(context.Background())
		if err != nil {
			return err
		}
		for f, v := range want {
			if got[f] != v {
				return fmt.Errorf("PVE reports %s = %v, want %v (all: %v)", f, got[f], v, got)
			}
		}
		return nil
	}
}

// setFlag changes a flag behind Terraform's back, as `ceph osd set` would.
func setFlag(t *testing.T, e *acctest.Env, flag string, v bool) {
	t.Helper()
	if err := e.Client.SetCephFlag(context.Background(), flag, v); err != nil {
		t.Fatalf("set %s = %v outside Terraform: %v", flag, v, err)
	}
}

// The maintenance use: noout and nobackfill set, shown as OSDMAP_FLAGS,
// drift repaired, released flags cleared; a flag set by someone else
// survives every step and the destroy.
func TestAccCephFlags_lifecycle(t *testing.T) {
	t.Parallel()
	e, _ := newCephEnv(t)
	maintenance := e.Config(`
resource "pve_ceph_flags" "this" {
  noout      = true
  nobackfill = true
  noscrub    = false
}
`)
	e.Run(t, resource.TestCase{
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			checkFlags(e, map[string]bool{"noout": false, "nobackfill": false, "nodeep-scrub": true}),
		),
		Steps: []resource.TestStep{
			{
				PreConfig: func() { setFlag(t, e, "nodeep-scrub", true) }, // not managed by Terraform
				Config:    maintenance,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(flagsAddr, "id", "cluster"),
					resource.TestCheckResourceAttr(flagsAddr, "noout", "true"),
					resource.TestCheckNoResourceAttr(flagsAddr, "nodeep_scrub"),
					resource.TestCheckResourceAttr(flagsAddr, "flags_set.#", "3"),
					checkFlags(e, map[string]bool{"noout": true, "nobackfill": true, "noscrub": false, "nodeep-scrub": true, "norecover": false}),
					func(*terraform.State) error {
						st, err := e.Client.CephClusterStatus(context.Background())
						if err != nil {
							return err
						}
						if c, ok := st.Checks["OSDMAP_FLAGS"]; !ok || st.Health != "HEALTH_WARN" {
							return fmt.Errorf("health %s checks %v: want HEALTH_WARN with OSDMAP_FLAGS", st.Health, st.Checks)
						} else if c.Message == "" {
							return fmt.Errorf("OSDMAP_FLAGS without message")
						}
						return nil
					},
				),
			},
			{
				// Import adopts every flag that is set, including the one
				// Terraform did not manage; flags that are clear stay
				// unmanaged.
				ResourceName:  flagsAddr,
				ImportState:   true,
				ImportStateId: "cluster",
				ImportStateCheck: func(states []*terraform.InstanceState) error {
					if len(states) != 1 {
						return fmt.Errorf("%d states", len(states))
					}
					a := states[0].Attributes
					for k, want := range map[string]string{"noout": "true", "nobackfill": "true", "nodeep_scrub": "true"} {
						if a[k] != want {
							return fmt.Errorf("imported %s = %q, want %q (%v)", k, a[k], want, a)
						}
					}
					if _, ok := a["noscrub"]; ok && a["noscrub"] != "" {
						return fmt.Errorf("a clear flag was adopted: noscrub = %q", a["noscrub"])
					}
					return nil
				},
			},
			{
				// Drift: noout cleared by hand shows in the next plan.
				PreConfig:          func() { setFlag(t, e, "noout", false) },
				Config:             maintenance,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				Config: maintenance,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(flagsAddr, plancheck.ResourceActionUpdate),
				}},
				Check: checkFlags(e, map[string]bool{"noout": true, "nobackfill": true, "nodeep-scrub": true}),
			},
			{
				// Unmanaged flags changed outside are no drift.
				PreConfig: func() { setFlag(t, e, "noin", true) },
				Config:    maintenance,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
				Check: checkFlags(e, map[string]bool{"noin": true}),
			},
			{
				// Maintenance over: nobackfill released (cleared), noscrub
				// no longer managed (left as it is), noout explicitly false.
				PreConfig: func() { setFlag(t, e, "noin", false) },
				Config: e.Config(`
resource "pve_ceph_flags" "this" {
  noout = false
}
`),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckNoResourceAttr(flagsAddr, "nobackfill"),
					resource.TestCheckResourceAttr(flagsAddr, "noout", "false"),
					checkFlags(e, map[string]bool{"noout": false, "nobackfill": false, "nodeep-scrub": true}),
				),
			},
			{
				Config: maintenance,
				Check:  checkFlags(e, map[string]bool{"noout": true, "nobackfill": true}),
			},
		},
	})
}

// Flags set with the answer lost, before PVE acted or after: the PUT sets
// them absolutely, so it is sent again and the apply converges (PVE took
// it twice when the first one took effect).
func TestAccCephFlags_answerLost(t *testing.T) {
	t.Parallel()
	acctest.EachDrop(t, func(t *testing.T, drop string) {
		e, _ := newCephEnv(t)
		puts := 1
		if drop == "drop-after" {
			puts = 2
		}
		e.Run(t, e.LostAnswerCase("PUT", "/cluster/ceph/flags", drop, puts, e.Config(`
resource "pve_ceph_flags" "this" {
  noout = true
}
`), checkFlags(e, map[string]bool{"noout": true})))
	})
}
