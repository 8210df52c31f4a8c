package ceph_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

// Ceph resources on a node the cluster does not have are refused at plan,
// listing the nodes it has; nothing is written (issue #13: today PVE's
// refusal comes at apply).
func TestAccCephNodes_refsAtPlan(t *testing.T) {
	t.Parallel()
	e := installEnv(t, pvesim.Options{})
	nodes := fmt.Sprintf(`%s, %s, %s`, e.Nodes[0], e.Nodes[1], e.Nodes[2])
	var from int
	step := func(typ, extra string) resource.TestStep {
		cfg := e.RootProviderConfig() + fmt.Sprintf("resource %q \"x\" {\n  node = \"z2g4x\"\n%s}\n", typ, extra)
		return refusedStep(cfg, `Error: Unable to plan `+typ+`: unknown node z2g4x`, `with `+typ+`\.x`, words(`node = "z2g4x" is not a node of`),
			words("GET /nodes lists "+nodes), words("standalone_nodes"))
	}
	first := step("pve_ceph_install", "")
	first.PreConfig = func() { from = len(e.Sim.Requests()) }
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		first,
		step("pve_ceph_cluster", "  network = \"172.27.2.0/24\"\n"),
		step("pve_ceph_monitor", ""),
		step("pve_ceph_manager", ""),
		{
			PreConfig:          func() { requireNoWrites(t, e, from) },
			Config:             e.RootProviderConfig() + fmt.Sprintf("resource \"pve_ceph_manager\" \"x\" {\n  node = %q\n}\n", e.Nodes[0]),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
		},
	}})
}
