package ceph_test

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

// coreStatusMatches compares the data source with what PVE reports now
// (the Ceph clock is frozen, so nothing moves in between).
func coreStatusMatches(e *acctest.Env, addr string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		ctx := context.Background()
		st, err := e.Client.CephClusterStatus(ctx)
		if err != nil {
			return err
		}
		flags, err := e.Client.CephFlags(ctx)
		if err != nil {
			return err
		}
		var set []string
		for f, on := range flags {
			if on {
				set = append(set, f)
			}
		}
		sort.Strings(set)
		checks := []resource.TestCheckFunc{
			resource.TestCheckResourceAttr(addr, "fsid", st.FSID),
			resource.TestCheckResourceAttr(addr, "health", st.Health),
			resource.TestCheckResourceAttr(addr, "checks.#", strconv.Itoa(len(st.Checks))),
			resource.TestCheckResourceAttr(addr, "monitors.total", strconv.FormatInt(st.NumMons, 10)),
			resource.TestCheckResourceAttr(addr, "monitors.quorum_names.#", strconv.Itoa(len(st.QuorumNames))),
			resource.TestCheckResourceAttr(addr, "osds.total", strconv.FormatInt(st.NumOSDs, 10)),
			resource.TestCheckResourceAttr(addr, "osds.up", strconv.FormatInt(st.NumUpOSDs, 10)),
			resource.TestCheckResourceAttr(addr, "osds.in", strconv.FormatInt(st.NumInOSDs, 10)),
			resource.TestCheckResourceAttr(addr, "pgs.total", strconv.FormatInt(st.NumPGs, 10)),
			resource.TestCheckResourceAttr(addr, "pgs.degraded_objects", strconv.FormatInt(st.DegradedObjects, 10)),
			resource.TestCheckResourceAttr(addr, "pgs.misplaced_objects", strconv.FormatInt(st.MisplacedObjects, 10)),
			resource.TestCheckResourceAttr(addr, "pgs.by_state.%", strconv.Itoa(len(st.PGsByState))),
			resource.TestCheckResourceAttr(addr, "flags.#", strconv.Itoa(len(set))),
			resource.TestCheckResourceAttr(addr, "managers.available", strconv.FormatBool(st.MgrAvailable)),
		}
		for name, c := range st.Checks {
			checks = append(checks, resource.TestCheckTypeSetElemNestedAttrs(addr, "checks.*", map[string]string{
				"name": name, "severity": c.Severity, "summary": c.Message, "count": strconv.FormatInt(c.Count, 10)}))
		}
		for state, n := range st.PGsByState {
			checks = append(checks, resource.TestCheckResourceAttr(addr, "pgs.by_state."+state, strconv.FormatInt(n, 10)))
		}
		for i, f := range set {
			checks = append(checks, resource.TestCheckResourceAttr(addr, fmt.Sprintf("flags.%d", i), f))
		}
		return resource.ComposeAggregateTestCheckFunc(checks...)(s)
	}
}

// The status data source against the health model: a healthy cluster with
// a pool and the noout flag, then an OSD down.
func TestAccCephStatus_healthModel(t *testing.T) {
	t.Parallel()
	e := acctest.NewWithOptions(t, pvesim.Options{CephTimeScale: -1})
	if e.Sim == nil {
		t.Skip("creates OSDs on the simulator's disks and stops one")
	}
	coreStorageNetwork(t, e)
	ctx := context.Background()
	base := e.Config(coreClusterHCL, coreMonitorHCL(coreNodes...), `
resource "pve_ceph_manager" "z2g4a" {
  node       = "z2g4a"
  depends_on = [pve_ceph_monitor.z2g4a, pve_ceph_monitor.z2g4b, pve_ceph_monitor.z2g4c]
}
`)
	withStatus := base + `
data "pve_ceph_status" "lab" {}

data "pve_ceph_status" "via_b" {
  node = "z2g4b"
}
`
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{Config: base},
			{
				PreConfig: func() {
					root := e.RootClient(t)
					for _, n := range coreNodes {
						upid, err := root.CreateCephOSD(ctx, n, pve.CephOSDCreateRequest{Dev: "/dev/sdb"})
						if _, err := root.Await(ctx, upid, err); err != nil {
							t.Fatal(err)
						}
					}
					size, minSize, pgs := int64(3), int64(2), int64(32)
					upid, err := root.CreateCephPool(ctx, "z2g4a", "ceph", pve.CephPoolRequest{Size: &size, MinSize: &minSize, PGNum: &pgs, Application: "rbd"})
					if _, err := root.Await(ctx, upid, err); err != nil {
						t.Fatal(err)
					}
					e.Sim.CephAdvance(3600e9)
					upid, err = e.Client.SetCephFlags(ctx, map[string]bool{"noout": true})
					if _, err := e.Client.Await(ctx, upid, err); err != nil {
						t.Fatal(err)
					}
				},
				Config: withStatus,
				Check: resource.ComposeAggregateTestCheckFunc(
					coreStatusMatches(e, "data.pve_ceph_status.lab"),
					coreStatusMatches(e, "data.pve_ceph_status.via_b"),
					resource.TestCheckResourceAttr("data.pve_ceph_status.lab", "health", "HEALTH_WARN"),
					resource.TestCheckTypeSetElemNestedAttrs("data.pve_ceph_status.lab", "checks.*", map[string]string{"name": "OSDMAP_FLAGS", "severity": "HEALTH_WARN"}),
					resource.TestCheckResourceAttr("data.pve_ceph_status.lab", "flags.#", "1"),
					resource.TestCheckResourceAttr("data.pve_ceph_status.lab", "flags.0", "noout"),
					resource.TestCheckResourceAttr("data.pve_ceph_status.lab", "osds.up", "3"),
					resource.TestCheckResourceAttr("data.pve_ceph_status.lab", "pgs.total", "32"),
					resource.TestCheckResourceAttr("data.pve_ceph_status.lab", "pgs.active_clean", "32"),
					resource.TestCheckResourceAttr("data.pve_ceph_status.lab", "pgs.by_state.active+clean", "32"),
					resource.TestCheckResourceAttr("data.pve_ceph_status.lab", "pgs.degraded_objects", "0"),
					resource.TestCheckResourceAttr("data.pve_ceph_status.lab", "monitors.in_quorum", "3"),
					// The first monitor's manager (on whichever node won the
					// monitor lock) and z2g4a's.
					resource.TestCheckResourceAttr("data.pve_ceph_status.lab", "managers.available", "true"),
					resource.TestCheckResourceAttrSet("data.pve_ceph_status.lab", "managers.active"),
				),
			},
			{
				// An OSD crashes (noout keeps it in): its PGs run degraded.
				PreConfig: func() {
					e.Sim.SetCephOSDUp(0, false)
					upid, err := e.Client.StopCephService(ctx, "z2g4c", "mon.z2g4c")
					if _, err := e.Client.Await(ctx, upid, err); err != nil {
						t.Fatal(err)
					}
				},
				Config: withStatus,
				Check: resource.ComposeAggregateTestCheckFunc(
					coreStatusMatches(e, "data.pve_ceph_status.lab"),
					resource.TestCheckResourceAttr("data.pve_ceph_status.lab", "osds.up", "2"),
					resource.TestCheckResourceAttr("data.pve_ceph_status.lab", "osds.in", "3"),
					resource.TestCheckResourceAttr("data.pve_ceph_status.lab", "pgs.active_clean", "0"),
					resource.TestCheckResourceAttr("data.pve_ceph_status.lab", "monitors.in_quorum", "2"),
					resource.TestCheckResourceAttr("data.pve_ceph_status.lab", "monitors.quorum_names.#", "2"),
					resource.TestCheckTypeSetElemNestedAttrs("data.pve_ceph_status.lab", "checks.*", map[string]string{"name": "OSD_DOWN"}),
					resource.TestCheckTypeSetElemNestedAttrs("data.pve_ceph_status.lab", "checks.*", map[string]string{"name": "PG_DEGRADED"}),
					resource.TestCheckTypeSetElemNestedAttrs("data.pve_ceph_status.lab", "checks.*", map[string]string{"name": "MON_DOWN"}),
					func(s *terraform.State) error {
						v := s.RootModule().Resources["data.pve_ceph_status.lab"].Primary.Attributes["pgs.degraded_objects"]
						if n, _ := strconv.Atoi(v); n <= 0 {
							return fmt.Errorf("degraded_objects %q with an OSD down", v)
						}
						return nil
					},
				),
			},
			{
				Config: e.Config(`
removed {
  from = pve_ceph_cluster.lab
  lifecycle { destroy = false }
}
removed {
  from = pve_ceph_manager.z2g4a
  lifecycle { destroy = false }
}
` + coreEach(`
removed {
  from = pve_ceph_monitor.%[1]s
  lifecycle { destroy = false }
}
`)),
			},
		},
	})
}
