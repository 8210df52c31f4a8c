package storage_test

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

// The reference lab's storage "ceph", created by pveceph with the pool
// (add_storages), is adopted by import with an empty plan, reports the
// pool's space on every node, and changes in place.
func TestAccStorage_rbdOnCephPoolImported(t *testing.T) {
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
	upid, err := root.CreateCephPool(ctx, e.Nodes[0], "ceph", pve.CephPoolRequest{Size: &size, MinSize: &minSize, PGNum: &pgs, Application: "rbd", AddStorages: true})
	if _, err := root.Await(ctx, upid, err); err != nil {
		t.Fatal(err)
	}
	cfg := func(krbd bool) string {
		return e.Config(`
resource "pve_storage" "ceph" {
  storage = "ceph"
  type    = "rbd"
  pool    = "ceph"
  content = ["images", "rootdir"]
  krbd    = ` + map[bool]string{true: "true", false: "false"}[krbd] + `
}
`)
	}
	const addr = "pve_storage.ceph"
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{Config: cfg(false), ResourceName: addr, ImportState: true, ImportStateId: "ceph", ImportStatePersist: true},
			{Config: cfg(false), PlanOnly: true},
			{
				Config:           cfg(true),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)}},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkStorage(e, "ceph", wantOptions(map[string]string{"krbd": "1", "pool": "ceph", "content": "images,rootdir"})),
					checkNodeStorageActive(e, e.Nodes[2], "ceph"),
				),
			},
			{Config: cfg(true), ResourceName: addr, ImportState: true, ImportStateId: "ceph", ImportStateVerify: true, ImportStateVerifyIgnore: []string{"keyring"}},
		},
	})
}
