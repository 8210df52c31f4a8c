package ceph_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

// writesSince lists the requests after from that may change PVE (anything
// but GET and the login).
func writesSince(e *acctest.Env, from int) []string {
	var out []string
	for _, r := range e.Sim.Requests()[from:] {
		if r.Method == http.MethodGet || strings.HasPrefix(r.Path, "/access/ticket") {
			continue
		}
		out = append(out, r.Method+" "+r.Path)
	}
	return out
}

// Removing both OSDs of one host in the reference lab (pool size 3 on 3
// hosts): each destroy alone would drain, together the pool loses a host.
// Today the first is drained and destroyed and the second refused at
// apply; the plan must refuse both, nothing is marked out or destroyed.
func TestAccCephOSD_planRefusesDestroysThatEmptyAHost(t *testing.T) {
	t.Parallel()
	e := cephEnv(t, -1) // frozen: nothing drains behind the test's back
	setupCeph(t, e)
	a := e.Nodes[0]
	specs := withDeleteTimeout(labOSDs(e), "1m")
	without := withDeleteTimeout(labOSDs(e, a+":/dev/sdb", a+":/dev/sdc"), "1m")
	from := 0
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{Config: osdConfig(e, specs...)},
			{
				PreConfig: func() {
					createPool(t, e, "ceph", 3, 2, 64, 4<<30)
					from = len(e.Sim.Requests())
				},
				Config: osdConfig(e, without...),
				ExpectError: errRE(words("Unable to Destroy Ceph OSDs osd."), words("This plan destroys 2 OSD resources together"),
					words(`Pool "ceph" keeps size = 3 copies on distinct hosts`), words("only 2 host(s) have OSDs that are in"),
					words(a+" would lose its last OSDs"), words("nothing is changed")),
			},
			{
				// Nothing was marked out or destroyed; the plan is empty.
				PreConfig: func() {
					if w := writesSince(e, from); len(w) != 0 {
						t.Fatalf("the refused plan wrote to PVE: %v", w)
					}
					for _, dev := range []string{"/dev/sdb", "/dev/sdc"} {
						id := osdOn(t, e, a, dev)
						if o := tree(t, e).OSD(id); o == nil || !o.In {
							t.Fatalf("OSD on %s %s after the refused plan: %+v", a, dev, o)
						}
					}
				},
				Config:   osdConfig(e, specs...),
				PlanOnly: true,
			},
			{
				// One OSD of the host alone is not refused at plan (its
				// drain decides at apply).
				Config:             osdConfig(e, withDeleteTimeout(labOSDs(e, a+":/dev/sdb"), "1m")...),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				// Without the pool the OSDs go (post-test destroy).
				PreConfig: func() { deletePool(t, e, "ceph") },
				Config:    osdConfig(e, specs...),
			},
		},
	})
}
