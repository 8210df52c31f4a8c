package apt_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

// An unknown handle, a missing entry and an unknown node are refused at
// plan (not at apply): the plan step fails and nothing but reads reaches
// PVE.
func TestAccAPTRepository_planRefusesMissingReferences(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	if e.Sim == nil {
		t.Skip("asserts the simulator's request log")
	}
	node := e.Node(t, 0)
	for _, tc := range []struct{ name, body, want string }{
		{"handle", fmt.Sprintf("node = %q\n  handle = \"ceph-pacific-no-subscription\"", node),
			`(?s)Error running pre-apply plan.*Unable to plan pve_apt_repository ` + node + `/ceph-pacific-no-subscription.*offers no standard repository "ceph-pacific-no-subscription".*it\s+offers:[^.]*no-subscription[^.]*ceph-squid-no-subscription`},
		{"entry", fmt.Sprintf("node = %q\n  path = \"/etc/apt/sources.list.d/ceph.sources\"\n  index = 7", node),
			`(?s)Error running pre-apply plan.*Unable to plan pve_apt_repository .*no APT entry 7 in /etc/apt/sources.list.d/ceph.sources.*it\s+has:`},
		{"node", "node = \"nosuch\"\n  handle = \"no-subscription\"",
			`(?s)Error running pre-apply plan.*Unable to plan pve_apt_repository: unknown node nosuch.*GET /nodes lists[^)]*` + node},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
				PreConfig:   func() { e.Sim.ResetRequests() },
				Config:      e.Config("resource \"pve_apt_repository\" \"x\" {\n  " + tc.body + "\n}\n"),
				ExpectError: regexp.MustCompile(tc.want),
			}}})
			for _, r := range e.Sim.Requests() {
				if r.Method != "GET" {
					t.Errorf("refused at plan, yet %s %s was sent", r.Method, r.Path)
				}
			}
		})
	}
}
