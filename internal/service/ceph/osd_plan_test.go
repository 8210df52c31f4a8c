package ceph_test

import (
	"fmt"
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

// labWithPool is the OSDs of specs and the reference lab's pool (size 3 on
// 3 hosts), which depends on them as in examples/homelab.
func labWithPool(e *acctest.Env, specs []osdSpec) string {
	deps := make([]string, len(specs))
	for i, sp := range specs {
		deps[i] = osdAddr(sp.node, sp.dev)
	}
	return osdConfig(e, specs...) + fmt.Sprintf(`
resource "pve_ceph_pool" "ceph" {
  name                = "ceph"
  node                = %q
  size                = 3
  min_size            = 2
  pg_num              = 64
  deletion_protection = false
  depends_on          = [%s]
}
`, e.Nodes[0], strings.Join(deps, ", "))
}

// frozenOSDLab is a Ceph whose clock is frozen (nothing drains behind the
// test's back) and the lab's OSDs on it: specs without the first node's
// absent disks, and without those and its removed disks too. a is that
// first node.
func frozenOSDLab(t *testing.T, absent, removed []string) (e *acctest.Env, a string, specs, without []osdSpec) {
	t.Helper()
	e = cephEnv(t, -1)
	setupCeph(t, e)
	a = e.Nodes[0]
	var skip []string
	for _, d := range absent {
		skip = append(skip, a+":"+d)
	}
	specs = withDeleteTimeout(labOSDs(e, skip...))
	for _, d := range removed {
		skip = append(skip, a+":"+d)
	}
	return e, a, specs, withDeleteTimeout(labOSDs(e, skip...))
}

// Removing both OSDs of one host in the reference lab (pool size 3 on 3
// hosts): each destroy alone would drain, together the pool loses a host.
// Before, the first was drained and destroyed and the second refused at
// apply; the plan must refuse, nothing is marked out or destroyed. The
// post-test destroy of the whole lab (pool first, then every OSD) is not
// refused: only pools the plan keeps count.
func TestAccCephOSD_planRefusesDestroysThatEmptyAHost(t *testing.T) {
	t.Parallel()
	e, a, specs, without := frozenOSDLab(t, nil, labDisks)
	from := 0
	e.Run(t, resource.TestCase{
		CheckDestroy: checkNoOSDs(e),
		Steps: []resource.TestStep{
			{Config: labWithPool(e, specs)},
			{
				PreConfig: func() {
					e.Sim.SetCephPoolStored("ceph", 4<<30)
					from = len(e.Sim.Requests())
				},
				Config: labWithPool(e, without),
				ExpectError: errRE(words("Refusing to destroy Ceph OSDs osd."), words("This plan destroys 2 OSD resources together"),
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
				Config:   labWithPool(e, specs),
				PlanOnly: true,
			},
			{
				// One OSD of the host alone leaves the host its other
				// OSD: not refused.
				Config:             labWithPool(e, withDeleteTimeout(labOSDs(e, a+":/dev/sdb"))),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
		},
	})
}

// A single OSD destroy that leaves a pool with fewer hosts than copies
// (the only OSD of a host, pool size 3 on 3 hosts) is refused at plan, by
// the same rule its drain applies at apply: before, the plan said
// "1 to destroy" and only the apply refused, after the plan's other
// changes.
func TestAccCephOSD_planRefusesSingleDestroyThatEmptiesAHost(t *testing.T) {
	t.Parallel()
	e, a, specs, without := frozenOSDLab(t, []string{"/dev/sdc"}, []string{"/dev/sdb"}) // a has one OSD
	from := 0
	e.Run(t, resource.TestCase{
		CheckDestroy: checkNoOSDs(e),
		Steps: []resource.TestStep{
			{Config: labWithPool(e, specs)},
			func() resource.TestStep {
				st := refusedStep(labWithPool(e, without), words("Refusing to destroy Ceph OSD osd."), words("This plan destroys pve_ceph_osd "+a+"/"),
					words(`Pool "ceph" keeps size = 3 copies on distinct hosts`), words("only 2 host(s) have OSDs that are in"),
					words(a+" would lose its last OSDs"), words("nothing is changed"))
				st.PreConfig = func() { from = len(e.Sim.Requests()) }
				return st
			}(),
			{
				PreConfig: func() { requireNoWrites(t, e, from) },
				Config:    labWithPool(e, specs),
				PlanOnly:  true,
			},
		},
	})
}

// Pools no pve_ceph_pool manages (created by hand) count against OSD
// destroys as the drains count them: removing both OSDs of a host is
// refused at plan for a hand-made pool of size 3, and passes once the
// pool is gone.
func TestAccCephOSD_planCountsPoolsTerraformDoesNotManage(t *testing.T) {
	t.Parallel()
	e, a, specs, without := frozenOSDLab(t, nil, labDisks)
	e.Run(t, resource.TestCase{
		CheckDestroy: checkNoOSDs(e),
		Steps: []resource.TestStep{
			{Config: osdConfig(e, specs...)},
			func() resource.TestStep {
				st := refusedStep(osdConfig(e, without...), words("Refusing to destroy Ceph OSDs osd."), words("This plan destroys 2 OSD resources together"),
					words(`Pool "byhand" keeps size = 3 copies on distinct hosts`), words(a+" would lose its last OSDs"),
					words(`Pool "byhand" counts as PVE lists it now`), words("apply that first"))
				st.PreConfig = func() { createPool(t, e, "byhand", 32, 1<<30) }
				return st
			}(),
			{
				// Without the pool nothing needs the host: the plan passes.
				PreConfig:          func() { deletePool(t, e, "byhand") },
				Config:             osdConfig(e, without...),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
		},
	})
}
