package storage_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// disksEnv is a simulator whose nodes have the lab's free data disks
// (/dev/sdb, /dev/sdc, /dev/nvme0n1); against a cluster the test needs
// PVE_ACC_FREE_DISKS naming disks on the first node it may wipe.
func disksEnv(t *testing.T) (*acctest.Env, string, []string) {
	t.Helper()
	e := acctest.New(t)
	if e.Sim == nil {
		t.Skip("wipes disks; runs against the simulator only")
	}
	return e, e.Node(t, 0), []string{"/dev/sdb", "/dev/sdc", "/dev/nvme0n1"}
}

// checkDiskUse asserts what PVE's disk list says a disk is used for.
func checkDiskUse(e *acctest.Env, node, dev, want string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		disks, err := e.Client.Disks(context.Background(), node, false)
		if err != nil {
			return err
		}
		for _, d := range disks {
			if d.DevPath == dev {
				if d.Used != want {
					return fmt.Errorf("%s on %s is used for %q, want %q", dev, node, d.Used, want)
				}
				return nil
			}
		}
		return fmt.Errorf("no disk %s on %s", dev, node)
	}
}

func checkNodeStorageActive(e *acctest.Env, node, id string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		st, err := e.Client.NodeStorageStatus(context.Background(), node, id)
		if err != nil {
			return err
		}
		if !st.Active || st.Total <= 0 {
			return fmt.Errorf("storage %s on %s: %+v, want active with a size", id, node, st)
		}
		return nil
	}
}

// An LVM thin pool on a free disk with its storage; changes refused at
// plan; import; destroy only after destroy_data, which wipes the disk.
func TestAccNodeLVMThin_lifecycle(t *testing.T) {
	t.Parallel()
	e, node, disks := disksEnv(t)
	cfg := func(dev, extra string, withStorage bool) string {
		s := fmt.Sprintf(`
resource "pve_node_lvmthin" "fast" {
  node   = %q
  name   = "fast"
  device = %q
%s
}
`, node, dev, extra)
		if withStorage {
			s += fmt.Sprintf(`
resource "pve_storage" "fast" {
  storage  = "fast"
  type     = "lvmthin"
  vgname   = pve_node_lvmthin.fast.name
  thinpool = pve_node_lvmthin.fast.name
  nodes    = [%q]
}
`, node)
		}
		return e.Config(s)
	}
	const addr = "pve_node_lvmthin.fast"
	e.Run(t, resource.TestCase{
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			checkDiskUse(e, node, disks[0], ""),
			checkStoragesGone(e, "fast"),
			func(*terraform.State) error {
				pools, err := e.Client.ThinPools(context.Background(), node)
				if err != nil {
					return err
				}
				for _, p := range pools {
					if p.VG == "fast" {
						return fmt.Errorf("thin pool fast survived: %+v", p)
					}
				}
				return nil
			},
		),
		Steps: []resource.TestStep{
			{
				Config:      cfg("/dev/sda", "", false),
				ExpectError: errorRE(`(?s)Unable to Create LVM thin pool ` + node + `/fast.*device '/dev/sda' is already in use`),
			},
			{
				Config: cfg(disks[0], "", true),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkDiskUse(e, node, disks[0], "LVM"),
					checkNodeStorageActive(e, node, "fast"),
					resource.TestCheckResourceAttr(addr, "id", node+"/fast"),
					resource.TestCheckResourceAttrWith(addr, "size", func(v string) error {
						if len(v) < 12 { // hundreds of GB
							return fmt.Errorf("size %s", v)
						}
						return nil
					}),
				),
			},
			{Config: cfg(disks[1], "", true), PlanOnly: true, ExpectError: errorRE(`(?s)Cannot change device of LVM thin pool.*would delete the volumes`)},
			{Config: cfg(disks[0], "", true), ResourceName: addr, ImportState: true, ImportStateId: node + "/fast", ImportStateVerify: true,
				ImportStateVerifyIgnore: []string{"device", "used"}},
			{Config: e.Config(""), ExpectError: errorRE(`(?s)Refusing to destroy LVM thin pool .*destroy_data = true`)},
			{
				Config:           cfg(disks[0], "  destroy_data = true", true),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)}},
			},
		},
	})
}

// A ZFS mirror on two free disks with its storage; layout and disks read
// back from zpool status; a disk holding a Ceph OSD is refused; changes
// refused at plan; import; destroy only after destroy_data.
func TestAccNodeZFS_lifecycle(t *testing.T) {
	t.Parallel()
	e, node, disks := disksEnv(t)
	ctx := context.Background()
	root := e.RootClient(t)
	if err := root.InitCeph(ctx, node, pve.CephInitRequest{Network: "172.27.2.0/24"}); err != nil {
		t.Fatal(err)
	}
	upid, err := root.CreateCephMon(ctx, node, "")
	if _, err := root.Await(ctx, upid, err); err != nil {
		t.Fatal(err)
	}
	upid, err = root.CreateCephOSD(ctx, node, pve.CephOSDCreateRequest{Dev: disks[0]})
	if _, err := root.Await(ctx, upid, err); err != nil {
		t.Fatal(err)
	}
	cfg := func(devs []string, level, extra string) string {
		return e.Config(fmt.Sprintf(`
resource "pve_node_zfs" "tank" {
  node        = %q
  name        = "tank"
  devices     = %s
  raidlevel   = %q
  compression = "lz4"
%s
}

resource "pve_storage" "tank" {
  storage = "tank"
  type    = "zfspool"
  pool    = pve_node_zfs.tank.name
  sparse  = true
  nodes   = [%q]
}
`, node, hclList(devs), level, extra, node))
	}
	const addr = "pve_node_zfs.tank"
	mirror := disks[1:]
	e.Run(t, resource.TestCase{
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			checkDiskUse(e, node, disks[1], ""), checkDiskUse(e, node, disks[2], ""), checkStoragesGone(e, "tank"),
		),
		Steps: []resource.TestStep{
			{Config: cfg(disks[:1], "single", ""), ExpectError: errorRE(`(?s)Unable to Create ZFS pool ` + node + `/tank.*device '` + disks[0] + `' is already in use`)},
			{Config: cfg(disks[1:2], "mirror", ""), PlanOnly: true, ExpectError: errorRE(`(?s)Too few disks.*mirror needs at least 2 disks`)},
			{
				Config: cfg(mirror, "mirror", ""),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkDiskUse(e, node, disks[1], "ZFS"), checkDiskUse(e, node, disks[2], "ZFS"),
					checkNodeStorageActive(e, node, "tank"),
					resource.TestCheckResourceAttr(addr, "health", "ONLINE"),
					resource.TestCheckResourceAttr(addr, "devices.1", disks[2]),
					func(*terraform.State) error {
						d, err := e.Client.ZFSPool(ctx, node, "tank")
						if err != nil || d.RaidLevel != "mirror" || len(d.Devices) != 2 {
							return fmt.Errorf("zpool status: %+v %w", d, err)
						}
						return nil
					},
				),
			},
			{Config: cfg(append(slices.Clone(mirror), "/dev/sdd"), "raidz", ""), PlanOnly: true, ExpectError: errorRE(`(?s)Cannot change raidlevel of ZFS pool`)},
			{Config: cfg(append(slices.Clone(mirror), "/dev/sdd"), "mirror", ""), PlanOnly: true, ExpectError: errorRE(`(?s)Cannot change devices of ZFS pool.*zpool attach`)},
			{Config: cfg(mirror, "mirror", "  ashift = 9"), PlanOnly: true, ExpectError: errorRE(`(?s)Cannot change ashift of ZFS pool`)},
			{Config: cfg(mirror, "mirror", ""), ResourceName: addr, ImportState: true, ImportStateId: node + "/tank", ImportStateVerify: true,
				ImportStateVerifyIgnore: []string{"ashift", "compression", "free"}},
			{Config: e.Config(""), ExpectError: errorRE(`(?s)Refusing to destroy ZFS pool `)},
			{
				Config:           cfg(mirror, "mirror", "  destroy_data = true"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)}},
			},
		},
	})
}

func hclList(xs []string) string {
	s := "["
	for i, x := range xs {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%q", x)
	}
	return s + "]"
}
