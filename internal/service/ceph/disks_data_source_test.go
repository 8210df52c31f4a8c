package ceph_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// diskAttrs returns the attributes of the disk with devpath dev in the
// pve_node_disks data source addr, keyed without the "disks.N." prefix.
func diskAttrs(s *terraform.State, addr, dev string) (map[string]string, error) {
	rs, ok := s.RootModule().Resources[addr]
	if !ok {
		return nil, fmt.Errorf("%s not in state", addr)
	}
	a := rs.Primary.Attributes
	for k, v := range a {
		if strings.HasPrefix(k, "disks.") && strings.HasSuffix(k, ".devpath") && v == dev {
			prefix := strings.TrimSuffix(k, "devpath")
			out := map[string]string{}
			for k2, v2 := range a {
				if strings.HasPrefix(k2, prefix) {
					out[strings.TrimPrefix(k2, prefix)] = v2
				}
			}
			return out, nil
		}
	}
	return nil, fmt.Errorf("%s lists no %s", addr, dev)
}

// checkDisk asserts attributes of one disk; a want value starting with "~"
// must be contained in the attribute instead of equal to it. "reasons"
// matches against all unsuitable_reasons joined with "; ".
func checkDisk(addr, dev string, want map[string]string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		a, err := diskAttrs(s, addr, dev)
		if err != nil {
			return err
		}
		var reasons []string
		for i := 0; ; i++ {
			r, ok := a[fmt.Sprintf("unsuitable_reasons.%d", i)]
			if !ok {
				break
			}
			reasons = append(reasons, r)
		}
		a["reasons"] = strings.Join(reasons, "; ")
		for k, w := range want {
			got, ok := a[k]
			if sub, contains := strings.CutPrefix(w, "~"); contains {
				if !strings.Contains(got, sub) {
					return fmt.Errorf("%s %s: %s = %q, want it to contain %q", addr, dev, k, got, sub)
				}
				continue
			}
			if w == "<null>" {
				if ok && got != "" {
					return fmt.Errorf("%s %s: %s = %q, want null", addr, dev, k, got)
				}
				continue
			}
			if got != w {
				return fmt.Errorf("%s %s: %s = %q, want %q", addr, dev, k, got, w)
			}
		}
		return nil
	}
}

// The reference lab's disks: the boot SSD is in use, the datacenter SSDs
// are suitable (power-loss protection), the consumer QLC NVMe drives (Intel
// 660p, Samsung PM981a) are not; an OSD shows on its disk and in the tree.
func TestAccNodeDisks_referenceLab(t *testing.T) {
	t.Parallel()
	e := cephEnv(t, 600)
	a, c := e.Nodes[0], e.Nodes[2]
	cfg := e.Config(fmt.Sprintf(`
data "pve_node_disks" "a" {
  node = %q
}

data "pve_node_disks" "c" {
  node = %q
}

data "pve_node_disks" "a_big" {
  node            = %q
  min_osd_size_gb = 500
}
`, a, c, a))
	var osdID int64
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				Config: cfg,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("data.pve_node_disks.a", "disks.#", "4"),
					checkDisk("data.pve_node_disks.a", "/dev/sda", map[string]string{
						"suitable_for_osd": "false", "reasons": "in use: BIOS boot", "used": "BIOS boot", "power_loss_protection": "true",
						"model": "INTEL_SSDSC2BB120G6", "type": "ssd", "osd_id": "<null>",
					}),
					checkDisk("data.pve_node_disks.a", "/dev/sdb", map[string]string{
						"suitable_for_osd": "true", "unsuitable_reasons.#": "0", "power_loss_protection": "true",
						"drive_family": "Intel DC S3500/S3510/S3520", "size": "480103981056", "wearout": "96", "rpm": "0", "used": "<null>",
					}),
					checkDisk("data.pve_node_disks.a", "/dev/sdc", map[string]string{
						"suitable_for_osd": "true", "power_loss_protection": "true", "drive_family": "Intel DC S4500/S4510 (D3-S4510)",
					}),
					checkDisk("data.pve_node_disks.a", "/dev/nvme0n1", map[string]string{
						"suitable_for_osd": "false", "power_loss_protection": "false", "type": "nvme",
						"reasons": "consumer drive without power-loss protection (Intel 660p/665p (QLC NVMe)): slow sync writes make Ceph slow; measure sync-write IOPS first",
					}),
					checkDisk("data.pve_node_disks.c", "/dev/nvme0n1", map[string]string{
						"suitable_for_osd": "false", "power_loss_protection": "false", "model": "SAMSUNG MZVLB512HBJQ-00000",
						"reasons": "~Samsung PM981/PM981a/PM991/PM9A1",
					}),
					checkDisk("data.pve_node_disks.a_big", "/dev/sdb", map[string]string{
						"suitable_for_osd": "false", "reasons": "too small: 480 GB, less than 500 GB",
					}),
				),
			},
			{
				// An OSD on /dev/sdb (made through the client) and the noout flag.
				PreConfig: func() {
					ctx := context.Background()
					root := setupCeph(t, e)
					upid, err := root.CreateCephOSD(ctx, a, pve.CephOSDCreateRequest{Dev: "/dev/sdb", Encrypted: true})
					if _, err := root.Await(ctx, upid, err); err != nil {
						t.Fatal(err)
					}
					osdID = osdOn(t, e, a, "/dev/sdb")
					if err := root.SetCephFlag(ctx, "noout", true); err != nil {
						t.Fatal(err)
					}
				},
				Config: cfg + `
data "pve_ceph_osds" "all" {}
`,
				Check: resource.ComposeAggregateTestCheckFunc(
					func(s *terraform.State) error {
						return checkDisk("data.pve_node_disks.a", "/dev/sdb", map[string]string{
							"suitable_for_osd": "false", "reasons": fmt.Sprintf("already an OSD (osd.%d)", osdID), "used": "LVM",
							"osd_id": fmt.Sprint(osdID), "osd_ids.#": "1", "osd_encrypted": "true",
						})(s)
					},
					resource.TestCheckResourceAttr("data.pve_ceph_osds.all", "node", a),
					resource.TestCheckResourceAttr("data.pve_ceph_osds.all", "osds.#", "1"),
					resource.TestCheckResourceAttr("data.pve_ceph_osds.all", "hosts.#", "1"),
					resource.TestCheckResourceAttr("data.pve_ceph_osds.all", "hosts.0", a),
					resource.TestCheckResourceAttrWith("data.pve_ceph_osds.all", "osds.0.id", func(v string) error {
						if v != fmt.Sprint(osdID) {
							return fmt.Errorf("id %s, PVE lists osd.%d on /dev/sdb", v, osdID)
						}
						return nil
					}),
					resource.TestCheckResourceAttr("data.pve_ceph_osds.all", "osds.0.host", a),
					resource.TestCheckResourceAttr("data.pve_ceph_osds.all", "osds.0.status", "up"),
					resource.TestCheckResourceAttr("data.pve_ceph_osds.all", "osds.0.up", "true"),
					resource.TestCheckResourceAttr("data.pve_ceph_osds.all", "osds.0.in", "true"),
					resource.TestCheckResourceAttr("data.pve_ceph_osds.all", "osds.0.device_class", "ssd"),
					resource.TestCheckResourceAttr("data.pve_ceph_osds.all", "osds.0.total_space", "480103981056"),
					resource.TestCheckResourceAttr("data.pve_ceph_osds.all", "osds.0.osd_type", "bluestore"),
					resource.TestCheckTypeSetElemAttr("data.pve_ceph_osds.all", "flags.*", "noout"),
				),
			},
		},
	})
}
