package storage_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

// An LVM thin pool or ZFS pool create whose worker fails, early or after
// the pool was made converges on the next apply:
// one pool on the disk.
func TestAccNodeDiskStorage_createTaskFails(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ typ, action string }{
		{"lvmthincreate", "fail"}, {"lvmthincreate", "fail-late"}, {"zfscreate", "fail"}, {"zfscreate", "fail-late"},
	} {
		t.Run(tc.typ+"-"+tc.action, func(t *testing.T) {
			t.Parallel()
			e, node, disks := disksEnv(t)
			var cfg, use string
			if tc.typ == "zfscreate" {
				use = "ZFS"
				cfg = fmt.Sprintf("resource \"pve_node_zfs\" \"fast\" {\n  node = %q\n  name = \"fast\"\n  raidlevel = \"single\"\n  devices = [%q]\n  destroy_data = true\n}\n", node, disks[0])
			} else {
				use = "LVM"
				cfg = fmt.Sprintf("resource \"pve_node_lvmthin\" \"fast\" {\n  node = %q\n  name = \"fast\"\n  device = %q\n  destroy_data = true\n}\n", node, disks[0])
			}
			e.Run(t, e.TaskFaultCase("task "+tc.typ+"="+tc.action+":1x", e.Config(cfg), acctest.ErrUnlessAdopted(tc.action, `Unable to Create`), resource.ComposeTestCheckFunc(
				checkDiskUse(e, node, disks[0], use),
				func(*terraform.State) error {
					n, err := poolsNamed(e, node, tc.typ, "fast")
					if err == nil && n != 1 {
						err = fmt.Errorf("%d pools named fast on %s, want 1", n, node)
					}
					return err
				})))
		})
	}
}

// A ZFS or LVM thin pool destroy whose task fails, early or after the
// pool was removed, fails that apply; the next converges: no pool, the
// disk free.
func TestAccNodeDiskStorage_removeTaskFails(t *testing.T) {
	t.Parallel()
	acctest.EachTaskFault(t, []string{"lvmthinremove", "zfsremove"}, func(t *testing.T, typ, action string) {
		e, node, disks := disksEnv(t)
		cfg := fmt.Sprintf("resource \"pve_node_lvmthin\" \"fast\" {\n  node = %q\n  name = \"fast\"\n  device = %q\n  destroy_data = true\n}\n", node, disks[0])
		created := "lvmthincreate"
		if typ == "zfsremove" {
			created = "zfscreate"
			cfg = fmt.Sprintf("resource \"pve_node_zfs\" \"fast\" {\n  node = %q\n  name = \"fast\"\n  raidlevel = \"single\"\n  devices = [%q]\n  destroy_data = true\n}\n", node, disks[0])
		}
		tc := e.TaskFaultCase("task "+typ+"="+action+":1x", e.Config(), regexp.MustCompile(`Unable to Delete`), resource.ComposeTestCheckFunc(
			checkDiskUse(e, node, disks[0], ""),
			func(*terraform.State) error {
				n, err := poolsNamed(e, node, created, "fast")
				if err == nil && n != 0 {
					err = fmt.Errorf("%d pools named fast left on %s", n, node)
				}
				return err
			}))
		tc.Steps = append([]resource.TestStep{{Config: e.Config(cfg)}}, tc.Steps...)
		e.Run(t, tc)
	})
}

// poolsNamed counts the thin pools (lvmthincreate) or ZFS pools on node
// named name.
func poolsNamed(e *acctest.Env, node, typ, name string) (int, error) {
	ctx := context.Background()
	n := 0
	if typ == "zfscreate" {
		pools, err := e.Client.ZFSPools(ctx, node)
		for _, p := range pools {
			if p.Name == name {
				n++
			}
		}
		return n, err
	}
	pools, err := e.Client.ThinPools(ctx, node)
	for _, p := range pools {
		if p.VG == name {
			n++
		}
	}
	return n, err
}
