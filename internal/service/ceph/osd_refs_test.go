package ceph_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

// requireNoWrites fails t when the simulator served a write (anything but
// GET, logins aside) since the request log held from entries.
func requireNoWrites(t *testing.T, e *acctest.Env, from int) {
	t.Helper()
	for _, r := range e.Sim.Requests()[from:] {
		if r.Method != "GET" && !strings.HasPrefix(r.Path, "/access/") {
			t.Errorf("a refused plan sent a write: %s %s", r.Method, r.Path)
		}
	}
}

// refusedStep is a plan that must fail with the fragments, before anything
// is sent to PVE.
func refusedStep(cfg string, fragments ...string) resource.TestStep {
	return resource.TestStep{Config: cfg, PlanOnly: true, ExpectError: errRE(fragments...)}
}

// An OSD on a disk the node does not have, on its boot disk, on a disk that
// is already an OSD or holds LVM, with a DB device that does not exist, or
// on a node the cluster does not have: refused at plan naming the attribute
// and the disks that would do, and nothing is written (issue #13). Today
// such a plan says "1 to add" and the apply fails.
func TestAccCephOSD_refsAtPlan(t *testing.T) {
	t.Parallel()
	e := cephEnv(t, 600)
	setupCeph(t, e)
	a := e.Nodes[0]
	taken := createOutside(t, e, a, "/dev/sdc")
	ctx := context.Background()
	upid, err := e.RootClient(t).CreateThinPool(ctx, a, "fast", "/dev/nvme0n1", false)
	if _, err := e.Client.Await(ctx, upid, err); err != nil {
		t.Fatal(err)
	}
	one := func(node, dev, extra string) string {
		return osdConfig(e, osdSpec{node: node, dev: dev, extra: extra})
	}
	var from int
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		func() resource.TestStep {
			s := refusedStep(one(a, "/dev/sdz", ""), `Error: Unable to Create Ceph OSD`, `with pve_ceph_osd\.`, words(`device = "/dev/sdz": node `+a+` has no such disk`),
				words("PVE lists /dev/nvme0n1, /dev/sda, /dev/sdb, /dev/sdc"), words("Free disks: /dev/sdb."))
			s.PreConfig = func() { from = len(e.Sim.Requests()) }
			return s
		}(),
		refusedStep(one(a, "/dev/sda", ""), words(`device = "/dev/sda" is the boot disk of `+a), words("Free disks: /dev/sdb.")),
		refusedStep(one(a, "/dev/sdc", ""), words(fmt.Sprintf(`device = "/dev/sdc" on %s already holds osd.%d`, a, taken)),
			words(fmt.Sprintf("terraform import <address> %s/%d", a, taken))),
		refusedStep(one(a, "/dev/nvme0n1", ""), words(`device = "/dev/nvme0n1" on `+a+` is in use (PVE reports: LVM)`), words("Wipe Disk")),
		refusedStep(one(a, "/dev/sdb", "  db_device = \"/dev/nvme9n1\"\n"), words(`db_device = "/dev/nvme9n1": node `+a+` has no such disk`)),
		refusedStep(one(a, "/dev/sdb", "  db_device = \"/dev/sdc\"\n"), words(`db_device = "/dev/sdc" on `+a+` is the data disk of an OSD`)),
		refusedStep(one("z2g4x", "/dev/sdb", ""), words(`Unable to plan pve_ceph_osd: unknown node z2g4x`),
			words(fmt.Sprintf(`GET /nodes lists %s, %s, %s`, e.Nodes[0], e.Nodes[1], e.Nodes[2]))),
		{
			// A free disk plans as before.
			PreConfig:          func() { requireNoWrites(t, e, from) },
			Config:             one(a, "/dev/sdb", ""),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
		},
	}})
}
