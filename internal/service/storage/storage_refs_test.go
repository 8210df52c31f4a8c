package storage_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
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

func refusedStep(cfg string, fragments ...string) resource.TestStep {
	return resource.TestStep{Config: cfg, PlanOnly: true, ExpectError: errorRE("(?s)" + strings.Join(fragments, ".*"))}
}

// An rbd storage of the cluster's own Ceph on a pool that does not exist
// (named, or PVE's default rbd) is refused at plan listing the pools; one
// on a pool this plan creates, or on an existing pool, plans. A storage
// limited to a node the cluster does not have is refused too. PVE accepts
// both and the storage then never works; nothing is written (issue #13).
func TestAccStorage_refsAtPlan(t *testing.T) {
	t.Parallel()
	e := acctest.NewWithOptions(t, pvesim.Options{CephTimeScale: -1})
	if e.Sim == nil {
		t.Skip("creates a Ceph pool; runs against the simulator only")
	}
	ctx := context.Background()
	root := e.RootClient(t)
	if err := root.InitCeph(ctx, e.Nodes[0], pve.CephInitRequest{Network: "172.27.2.0/24"}); err != nil {
		t.Fatal(err)
	}
	for _, n := range e.Nodes {
		upid, err := root.CreateCephMon(ctx, n, "")
		if _, err := root.Await(ctx, upid, err); err != nil {
			t.Fatal(err)
		}
		upid, err = root.CreateCephOSD(ctx, n, pve.CephOSDCreateRequest{Dev: "/dev/sdb"})
		if _, err := root.Await(ctx, upid, err); err != nil {
			t.Fatal(err)
		}
	}
	size, minSize, pgs := int64(3), int64(2), int64(32)
	upid, err := root.CreateCephPool(ctx, e.Nodes[0], "ceph", pve.CephPoolRequest{Size: &size, MinSize: &minSize, PGNum: &pgs, Application: "rbd"})
	if _, err := root.Await(ctx, upid, err); err != nil {
		t.Fatal(err)
	}
	rbd := func(pool string) string {
		return e.Config(fmt.Sprintf("resource \"pve_storage\" \"vms\" {\n  storage = \"vms\"\n  type    = \"rbd\"\n%s}\n", pool))
	}
	var from int
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		func() resource.TestStep {
			s := refusedStep(rbd("  pool    = \"vms\"\n"), `Error: Unable to Create storage vms`, `with pve_storage\.vms`,
				`pool = "vms": the cluster's Ceph has no such pool; its pools are "ceph"`, `pve_ceph_pool`, `monhost`)
			s.PreConfig = func() { from = len(e.Sim.Requests()) }
			return s
		}(),
		refusedStep(rbd(""), `pool \(unset: PVE's default "rbd"\): the cluster's Ceph has no such pool`),
		refusedStep(e.Config(fmt.Sprintf("resource \"pve_storage\" \"d\" {\n  storage = \"local2\"\n  type    = \"dir\"\n  path    = \"/srv/d\"\n  nodes   = [%q, \"z2g4x\"]\n}\n", e.Nodes[0])),
			`Unable to plan pve_storage: unknown node z2g4x`, `nodes = "z2g4x" is not a node of`, fmt.Sprintf(`GET /nodes lists %s, %s, %s`, e.Nodes[0], e.Nodes[1], e.Nodes[2])),
		{
			// The pool is created by this plan: the storage refers to it.
			PreConfig: func() { requireNoWrites(t, e, from) },
			Config: rbd("  pool    = pve_ceph_pool.vms.name\n") + fmt.Sprintf(
				"resource \"pve_ceph_pool\" \"vms\" {\n  name = \"vms\"\n  node = %q\n}\n", e.Nodes[0]),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
		},
		{Config: rbd("  pool    = \"ceph\"\n"), PlanOnly: true, ExpectNonEmptyPlan: true},
	}})
}
