package storage_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// A ZFS or LVM thin pool on a disk the node does not have, on the boot
// disk or on a disk in use, or on a node the cluster does not have, is
// refused at plan naming the attribute and the free disks; nothing is
// written (issue #13: today the plan says "1 to add" and the create task
// fails). A replace on the pool's own disk still plans and applies.
func TestAccNodeDisks_refsAtPlan(t *testing.T) {
	t.Parallel()
	e, node, _ := disksEnv(t)
	awaitTask(t, e, func(ctx context.Context) (string, error) {
		return e.Client.CreateZFSPool(ctx, node, pve.ZFSPoolRequest{Name: "old", Devices: []string{"/dev/sdc"}, RaidLevel: "single"})
	})
	zfs := func(n, devs string) string {
		return e.Config(fmt.Sprintf("resource \"pve_node_zfs\" \"tank\" {\n  node      = %q\n  name      = \"tank\"\n  devices   = %s\n  raidlevel = \"mirror\"\n}\n", n, devs))
	}
	thin := func(n, dev, extra string) string {
		return e.Config(fmt.Sprintf("resource \"pve_node_lvmthin\" \"fast\" {\n  node   = %q\n  name   = \"fast\"\n  device = %q\n%s}\n", n, dev, extra))
	}
	free := `Free disks: /dev/nvme0n1, /dev/sdb\.`
	var from int
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		func() resource.TestStep {
			s := refusedStep(zfs(node, `["/dev/sdb", "/dev/sdz"]`), `Error: Unable to Create ZFS pool `+node+`/tank`, `with pve_node_zfs\.tank`,
				`"/dev/sdz": node `+node+` has no such disk; PVE lists /dev/nvme0n1, /dev/sda, /dev/sdb, /dev/sdc\.`, free)
			s.PreConfig = func() { from = len(e.Sim.Requests()) }
			return s
		}(),
		refusedStep(zfs(node, `["/dev/sda", "/dev/sdb"]`), `"/dev/sda" is the boot disk of `+node, `device '/dev/sda' is already in use`),
		refusedStep(zfs(node, `["/dev/sdb", "/dev/sdc"]`), `"/dev/sdc" on `+node+` is in use \(PVE reports: ZFS`, `Wipe Disk`),
		refusedStep(zfs("z2g4x", `["/dev/sdb", "/dev/nvme0n1"]`), `Unable to plan pve_node_zfs: unknown node z2g4x`, `node = "z2g4x" is not a node of`),
		refusedStep(thin(node, "/dev/sdc", ""), `Error: Unable to Create LVM thin pool `+node+`/fast`, `with pve_node_lvmthin\.fast`,
			`"/dev/sdc" on `+node+` is in use \(PVE reports: ZFS`, free),
		refusedStep(thin(node, "/dev/sdy", ""), `"/dev/sdy": node `+node+` has no such disk`),
		{
			PreConfig: func() { requireNoWrites(t, e, from) },
			Config:    thin(node, "/dev/sdb", "  destroy_data = true\n"),
		},
		{
			// A replace destroys the pool (wiping the disk), then creates it
			// on the same disk: not refused.
			Config: thin(node, "/dev/sdb", "  destroy_data = true\n"),
			Taint:  []string{"pve_node_lvmthin.fast"},
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("pve_node_lvmthin.fast", plancheck.ResourceActionDestroyBeforeCreate),
			}},
			Check: checkDiskUse(e, node, "/dev/sdb", "LVM"),
		},
	}})
}

// A ZFS pool or LVM thin pool whose name the node already uses (a zpool;
// any volume group, which a thin pool create makes of its name: the
// installer's pve, one a removed thin pool left) is refused at plan with
// the names in use; before, the plan said "1 to add" and the create task
// failed. A name known only at apply is let through. Nothing is written.
func TestAccNodeDisks_namesInUseAtPlan(t *testing.T) {
	t.Parallel()
	e, node, _ := disksEnv(t)
	awaitTask(t, e, func(ctx context.Context) (string, error) {
		return e.Client.CreateZFSPool(ctx, node, pve.ZFSPoolRequest{Name: "old", Devices: []string{"/dev/sdc"}, RaidLevel: "single"})
	})
	// A thin pool removed without cleanup-disks leaves its volume group.
	awaitTask(t, e, func(ctx context.Context) (string, error) {
		return e.Client.CreateThinPool(ctx, node, "left", "/dev/sdb", false)
	})
	awaitTask(t, e, func(ctx context.Context) (string, error) {
		return e.Client.DeleteThinPool(ctx, node, "left", "left", false, false)
	})
	zfs := func(name string) string {
		return e.Config(fmt.Sprintf("resource \"pve_node_zfs\" \"tank\" {\n  node      = %q\n  name      = %s\n  devices   = [\"/dev/nvme0n1\"]\n  raidlevel = \"single\"\n}\n", node, name))
	}
	thin := func(name string) string {
		return e.Config(fmt.Sprintf("resource \"pve_node_lvmthin\" \"fast\" {\n  node   = %q\n  name   = %q\n  device = \"/dev/nvme0n1\"\n}\n", node, name))
	}
	var from int
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		func() resource.TestStep {
			s := refusedStep(zfs(`"old"`), `Error: Unable to Create ZFS pool `+node+`/old`, `with pve_node_zfs\.tank`,
				`name = "old": node `+node+` already has a ZFS pool of that name \(PVE would refuse: "pool 'old' already exists on node '`+node+`'"\)`,
				`The names in use on `+node+` are "old"`, `Choose another name`)
			s.PreConfig = func() { from = len(e.Sim.Requests()) }
			return s
		}(),
		refusedStep(thin("pve"), `Error: Unable to Create LVM thin pool `+node+`/pve`, `with pve_node_lvmthin\.fast`,
			`name = "pve": node `+node+` already has an LVM volume group of that name`, `volume group with name 'pve' already exists`,
			`The names in use on `+node+` are "left", "pve"`),
		refusedStep(thin("left"), `name = "left": node `+node+` already has an LVM volume group`),
		{
			// Known only at apply: let through.
			Config: e.Config(fmt.Sprintf("resource \"terraform_data\" \"name\" {\n  input = \"old\"\n}\n"+
				"resource \"pve_node_zfs\" \"tank\" {\n  node      = %q\n  name      = terraform_data.name.output\n  devices   = [\"/dev/nvme0n1\"]\n  raidlevel = \"single\"\n}\n", node)),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
		},
		{
			PreConfig:          func() { requireNoWrites(t, e, from) },
			Config:             zfs(`"tank"`),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
		},
	}})
}

// awaitTask starts a PVE task through the test's client, as by hand, and
// waits for it to succeed.
func awaitTask(t *testing.T, e *acctest.Env, start func(context.Context) (string, error)) {
	t.Helper()
	ctx := context.Background()
	upid, err := start(ctx)
	if _, err := e.Client.Await(ctx, upid, err); err != nil {
		t.Fatal(err)
	}
}
