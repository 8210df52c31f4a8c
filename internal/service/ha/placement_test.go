package ha_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// twoVMs makes VMs 100 (second node) and 101 (third node) in the simulator;
// live runs need PVE_ACC_HA_VMID and skip, as they would need two VMs.
func twoVMs(t *testing.T, e *acctest.Env) {
	t.Helper()
	if e.Sim == nil {
		t.Skip("needs two VMs that may be put under HA; runs against pvesim only")
	}
	e.Sim.CreateTestVM(e.Node(t, 1), 100, "vm100")
	e.Sim.CreateTestVM(e.Node(t, 2), 101, "vm101")
}

const haResources = `
resource "pve_ha_resource" "vm100" {
  sid = "vm:100"
}
resource "pve_ha_resource" "vm101" {
  sid = "vm:101"
}
`

func checkRule(e *acctest.Env, id string, check func(*pve.HARule) error) resource.TestCheckFunc {
	return func(*terraform.State) error {
		r, err := e.Client.HARule(context.Background(), id)
		if err != nil {
			return err
		}
		return check(r)
	}
}

func TestAccHARule(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	twoVMs(t, e)
	onB := `
resource "pve_ha_rule" "on_b" {
  rule      = "vm100_on_b"
  type      = "node-affinity"
  resources = [pve_ha_resource.vm100.sid]
  nodes     = { z2g4b = 2, z2g4a = 1 }
  strict    = true
}
resource "pve_ha_rule" "apart" {
  rule      = "apart"
  type      = "resource-affinity"
  resources = [pve_ha_resource.vm100.sid, pve_ha_resource.vm101.sid]
  affinity  = "negative"
}
`
	if !isPVE9(t, e) {
		e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
			Config: e.Config(haResources, onB), PlanOnly: true, ExpectNonEmptyPlan: true,
			ExpectError: regexp.MustCompile(`(?s)HA rules need PVE 9.*pve_ha_group`),
		}}})
		return
	}
	preferB := `
resource "pve_ha_rule" "on_b" {
  rule      = "vm100_on_b"
  type      = "node-affinity"
  resources = [pve_ha_resource.vm100.sid]
  nodes     = { z2g4b = 0 }
  comment   = "prefer b"
}
resource "pve_ha_rule" "apart" {
  rule      = "apart"
  type      = "resource-affinity"
  resources = [pve_ha_resource.vm100.sid, pve_ha_resource.vm101.sid]
  affinity  = "negative"
  disable   = true
}
`
	e.Run(t, resource.TestCase{
		CheckDestroy: func(*terraform.State) error {
			rules, err := e.Client.HARules(context.Background(), "", "")
			if err != nil || len(rules) != 0 {
				return fmt.Errorf("rules after destroy: %+v %w", rules, err)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: e.Config(haResources, onB),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("pve_ha_rule.on_b", "id", "vm100_on_b"),
					resource.TestCheckResourceAttr("pve_ha_rule.on_b", "nodes.z2g4b", "2"),
					resource.TestCheckResourceAttr("pve_ha_rule.apart", "disable", "false"),
					checkRule(e, "vm100_on_b", func(r *pve.HARule) error {
						if r.Type != "node-affinity" || r.Nodes != "z2g4a:1,z2g4b:2" || !r.Strict || strings.Join(r.Resources, ",") != "vm:100" {
							return fmt.Errorf("PVE reports %+v", r)
						}
						return nil
					}),
					checkRule(e, "apart", func(r *pve.HARule) error {
						if r.Affinity != "negative" || strings.Join(r.Resources, ",") != "vm:100,vm:101" || len(r.Errors) != 0 {
							return fmt.Errorf("PVE reports %+v", r)
						}
						return nil
					}),
				),
			},
			{ResourceName: "pve_ha_rule.on_b", ImportState: true, ImportStateId: "vm100_on_b", ImportStateVerify: true},
			{ResourceName: "pve_ha_rule.apart", ImportState: true, ImportStateId: "apart", ImportStateVerify: true},
			{
				Config: e.Config(haResources, preferB),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("pve_ha_rule.on_b", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("pve_ha_rule.apart", plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkRule(e, "vm100_on_b", func(r *pve.HARule) error {
						if r.Nodes != "z2g4b" || r.Strict || r.Comment != "prefer b" {
							return fmt.Errorf("PVE reports %+v", r)
						}
						return nil
					}),
					checkRule(e, "apart", func(r *pve.HARule) error {
						if !r.Disable {
							return fmt.Errorf("PVE reports %+v", r)
						}
						return nil
					}),
				),
			},
			{
				// Drift: nodes changed in the GUI.
				PreConfig: func() {
					r, err := e.Client.HARule(context.Background(), "vm100_on_b")
					if err != nil {
						t.Fatal(err)
					}
					r.Nodes = "z2g4c"
					if err := e.Client.UpdateHARule(context.Background(), *r); err != nil {
						t.Fatal(err)
					}
				},
				Config: e.Config(haResources, preferB),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("pve_ha_rule.on_b", plancheck.ResourceActionUpdate),
				}},
				Check: checkRule(e, "vm100_on_b", func(r *pve.HARule) error {
					if r.Nodes != "z2g4b" {
						return fmt.Errorf("PVE reports %+v", r)
					}
					return nil
				}),
			},
			{
				// PVE refuses a second node-affinity rule for vm:100.
				Config: e.Config(haResources, preferB, `
resource "pve_ha_rule" "dup" {
  rule      = "dup"
  type      = "node-affinity"
  resources = [pve_ha_resource.vm100.sid]
  nodes     = { z2g4c = 1 }
}
`),
				ExpectError: regexp.MustCompile(`(?s)Unable to Create HA rule dup.*Rule 'dup' is invalid.*already used in another node\s+affinity rule`),
			},
		},
	})
}

func TestAccHARule_invalidAtPlan(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	for _, tc := range []struct{ body, want string }{
		{`type = "node-affinity"` + "\n" + `resources = ["vm:100"]`, `(?s)Missing nodes`},
		{`type = "node-affinity"` + "\n" + `resources = ["vm:100"]` + "\n" + `nodes = { z2g4a = 1 }` + "\n" + `affinity = "positive"`, `(?s)affinity is for resource-affinity rules`},
		{`type = "resource-affinity"` + "\n" + `resources = ["vm:100", "vm:101"]`, `(?s)Missing affinity`},
		{`type = "resource-affinity"` + "\n" + `resources = ["vm:100"]` + "\n" + `affinity = "positive"`, `(?s)at least two resources`},
		{`type = "resource-affinity"` + "\n" + `resources = ["vm:100", "vm:101"]` + "\n" + `affinity = "positive"` + "\n" + `nodes = { z2g4a = 1 }`, `(?s)nodes is for node-affinity rules`},
		{`type = "node-affinity"` + "\n" + `resources = ["100"]` + "\n" + `nodes = { z2g4a = 1 }`, `(?s)HA resource id such as vm:100`},
		{`type = "node-affinity"` + "\n" + `resources = ["vm:100"]` + "\n" + `nodes = { z2g4a = -1 }`, `(?s)at least 0`},
	} {
		e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
			Config:      e.Config("resource \"pve_ha_rule\" \"r\" {\n  rule = \"r1\"\n  " + tc.body + "\n}\n"),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(tc.want),
		}}})
	}
}

func TestAccHAGroup(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	twoVMs(t, e)
	group := func(body string) string {
		return `
resource "pve_ha_group" "prefer_b" {
  group = "prefer_b"
` + body + `
}
resource "pve_ha_resource" "vm100" {
  sid   = "vm:100"
  group = pve_ha_group.prefer_b.group
}
`
	}
	first := group(`  nodes = { z2g4b = 2, z2g4a = 0 }
  restricted = true`)
	if isPVE9(t, e) {
		e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
			Config: e.Config(first), PlanOnly: true, ExpectNonEmptyPlan: true,
			ExpectError: regexp.MustCompile(`(?s)HA groups were migrated to rules.*pve_ha_rule`),
		}}})
		return
	}
	second := group(`  nodes = { z2g4b = 1, z2g4c = 1 }
  nofailback = true
  comment = "b or c"`)
	checkGroup := func(check func(*pve.HAGroup) error) resource.TestCheckFunc {
		return func(*terraform.State) error {
			g, err := e.Client.HAGroup(context.Background(), "prefer_b")
			if err != nil {
				return err
			}
			return check(g)
		}
	}
	e.Run(t, resource.TestCase{
		CheckDestroy: func(*terraform.State) error {
			if _, err := e.Client.HAGroup(context.Background(), "prefer_b"); !pve.IsHANotFound(err) {
				return fmt.Errorf("group after destroy: %w", err)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: e.Config(first),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("pve_ha_group.prefer_b", "nofailback", "false"),
					checkGroup(func(g *pve.HAGroup) error {
						if g.Nodes != "z2g4a,z2g4b:2" || !g.Restricted || g.NoFailback {
							return fmt.Errorf("PVE reports %+v", g)
						}
						return nil
					}),
					checkPVE(e, "vm:100", func(r *pve.HAResource, _ string) error {
						if r.Group != "prefer_b" {
							return fmt.Errorf("resource %+v", r)
						}
						return nil
					}),
				),
			},
			{ResourceName: "pve_ha_group.prefer_b", ImportState: true, ImportStateId: "prefer_b", ImportStateVerify: true},
			{
				Config: e.Config(second),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("pve_ha_group.prefer_b", plancheck.ResourceActionUpdate),
				}},
				Check: checkGroup(func(g *pve.HAGroup) error {
					if g.Nodes != "z2g4b:1,z2g4c:1" || g.Restricted || !g.NoFailback || g.Comment != "b or c" {
						return fmt.Errorf("PVE reports %+v", g)
					}
					return nil
				}),
			},
			{
				// Drift: restricted in the GUI.
				PreConfig: func() {
					g, err := e.Client.HAGroup(context.Background(), "prefer_b")
					if err != nil {
						t.Fatal(err)
					}
					g.Restricted = true
					if err := e.Client.UpdateHAGroup(context.Background(), *g); err != nil {
						t.Fatal(err)
					}
				},
				Config: e.Config(second),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("pve_ha_group.prefer_b", plancheck.ResourceActionUpdate),
				}},
				Check: checkGroup(func(g *pve.HAGroup) error {
					if g.Restricted {
						return fmt.Errorf("PVE reports %+v", g)
					}
					return nil
				}),
			},
		},
	})
}
