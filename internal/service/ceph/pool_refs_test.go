package ceph_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// A pool with more copies than hosts with OSDs (3 here) would never be
// active+clean with the default rule: refused at plan with the numbers,
// on create and on a size change; so is a node the cluster does not have,
// and a crush_rule the cluster does not have (listing its rules, read once
// per command; before, Ceph refused it in the task, and a create left a
// pool with the default rule behind). Nothing is written (issue #13).
func TestAccCephPool_refsAtPlan(t *testing.T) {
	t.Parallel()
	e, node := newCephEnv(t)
	if e.Sim == nil {
		t.Skip("counts the simulator's OSD hosts")
	}
	body := "  size = %d\n  min_size = 2\n  deletion_protection = false\n"
	var from, rulesFrom int
	e.Run(t, resource.TestCase{
		CheckDestroy: checkPoolGone(e, node),
		Steps: []resource.TestStep{
			{
				PreConfig: func() { from = len(e.Sim.Requests()) },
				Config:    e.Config(poolConfig(node, fmt.Sprintf(body, 4))),
				PlanOnly:  true,
				ExpectError: errRE(`Error: Unable to Create Ceph pool ceph`, `with pve_ceph_pool\.ceph`, words("size = 4, but 3 host(s) have OSDs"),
					words(fmt.Sprintf("(%s, %s, %s)", e.Nodes[0], e.Nodes[1], e.Nodes[2])), words("never become active+clean"),
					words("Add OSDs on 1 more host(s)"), words("or set size to at most 3")),
			},
			refusedStep(e.Config(poolConfig("z2g4x", fmt.Sprintf(body, 3))), `Unable to plan pve_ceph_pool: unknown node z2g4x`, words(`node = "z2g4x" is not a node of`)),
			func() resource.TestStep {
				st := refusedStep(e.Config(poolConfig(node, fmt.Sprintf(body, 3)+"  crush_rule = \"ssd\"\n")), `Unable to Create Ceph pool ceph`,
					`with pve_ceph_pool\.ceph`, words(`crush_rule = "ssd": the cluster's Ceph has no such CRUSH rule`),
					words(`its rules are "replicated_rule"`), words("create the rule first"))
				st.PreConfig = func() { rulesFrom = len(e.Sim.Requests()) }
				return st
			}(),
			{
				PreConfig: func() {
					requireNoWrites(t, e, from)
					reads := 0
					for _, r := range e.Sim.Requests()[rulesFrom:] {
						if r.Method == "GET" && r.Path == "/nodes/"+node+"/ceph/rules" {
							reads++
						}
					}
					if reads != 1 {
						t.Errorf("the refused plan read the CRUSH rules %d times, want 1", reads)
					}
				},
				Config: e.Config(poolConfig(node, fmt.Sprintf(body, 3)+"  crush_rule = \"replicated_rule\"\n")),
			},
			refusedStep(e.Config(poolConfig(node, fmt.Sprintf(body, 3)+"  crush_rule = \"hdd\"\n")), `Unable to Update Ceph pool ceph`,
				words(`crush_rule = "hdd"`), words(`its rules are "replicated_rule"`)),
			{
				PreConfig: func() { from = len(e.Sim.Requests()) },
				Config:    e.Config(poolConfig(node, fmt.Sprintf(body, 5))),
				PlanOnly:  true,
				ExpectError: errRE(`Unable to Update Ceph pool ceph`, words("size = 5, but 3 host(s) have OSDs"),
					words("Add OSDs on 2 more host(s)")),
			},
			{
				PreConfig: func() { requireNoWrites(t, e, from) },
				Config:    e.Config(poolConfig(node, fmt.Sprintf(body, 3))),
				PlanOnly:  true,
			},
		},
	})
}

// OSDs this plan creates count as OSD hosts for a pool that depends on
// them: with OSDs on two hosts, a size 3 pool alone is refused, together
// with an OSD on the third host it plans.
func TestAccCephPool_refsCountPlannedOSDs(t *testing.T) {
	t.Parallel()
	e := cephEnv(t, 600)
	setupCeph(t, e)
	a, b, c := e.Nodes[0], e.Nodes[1], e.Nodes[2]
	createOutside(t, e, a, "/dev/sdb")
	createOutside(t, e, b, "/dev/sdb")
	pool := poolConfig(a, "  size = 3\n  min_size = 2\n")
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		refusedStep(e.RootProviderConfig()+pool, words(fmt.Sprintf("size = 3, but 2 host(s) have OSDs (%s, %s)", a, b)), words("or set size to at most 2")),
		{
			Config: osdConfig(e, osdSpec{node: c, dev: "/dev/sdb"}) +
				poolConfig(a, fmt.Sprintf("  size = 3\n  min_size = 2\n  depends_on = [%s]\n", osdAddr(c, "/dev/sdb"))),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
		},
	}})
}
