package ceph_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

// checkLabOSDs compares every OSD in state with what PVE reports: the id on
// the configured disk (disk list), up and in (tree), and the fsid
// (ceph-volume's LV name).
func checkLabOSDs(e *acctest.Env, specs []osdSpec) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		ctx := context.Background()
		tr, err := e.Client.CephOSDTree(ctx, e.Nodes[0])
		if err != nil {
			return err
		}
		if len(tr.OSDs) != len(specs) {
			return fmt.Errorf("PVE lists %d OSDs, want %d", len(tr.OSDs), len(specs))
		}
		for _, sp := range specs {
			addr := osdAddr(sp.node, sp.dev)
			rs := s.RootModule().Resources[addr]
			if rs == nil {
				return fmt.Errorf("%s not in state", addr)
			}
			a := rs.Primary.Attributes
			id, _ := strconv.ParseInt(a["osd_id"], 10, 64)
			disks, err := e.Client.Disks(ctx, sp.node, false)
			if err != nil {
				return err
			}
			var onDisk int64 = -1
			for _, d := range disks {
				if d.DevPath == sp.dev && len(d.OSDIDs) == 1 {
					onDisk = d.OSDIDs[0]
				}
			}
			if onDisk != id {
				return fmt.Errorf("%s: state says osd.%d, PVE lists osd.%d on %s %s", addr, id, onDisk, sp.node, sp.dev)
			}
			o := tr.OSD(id)
			if o == nil || o.Host != sp.node || !o.Up() || !o.In || o.DeviceClass != "ssd" {
				return fmt.Errorf("%s: PVE reports %+v", addr, o)
			}
			if a["id"] != fmt.Sprintf("%s/%d", sp.node, id) || a["up"] != "true" || a["in"] != "true" || a["crush_device_class"] != "ssd" ||
				a["encrypted"] != "false" || a["osds_per_device"] != "1" || a["osd_ids.#"] != "1" {
				return fmt.Errorf("%s: state %v", addr, a)
			}
			lv, err := e.Client.CephOSDLVInfo(ctx, sp.node, id, "")
			if err != nil {
				return err
			}
			if a["uuid"] == "" || a["uuid"] != lv.OSDFSID() {
				return fmt.Errorf("%s: uuid %q, ceph-volume says %q", addr, a["uuid"], lv.OSDFSID())
			}
		}
		return nil
	}
}

// The reference lab's six OSDs on the datacenter SSDs, built on a Ceph
// cluster with monitors and managers but no OSD; a token is refused at plan;
// import; a disk renamed after a reboot and a changed attribute are refused
// at plan without touching the OSD; destroy leaves the disks clean.
func TestAccCephOSD_referenceLab(t *testing.T) {
	t.Parallel()
	e := cephEnv(t, 600)
	setupCeph(t, e)
	specs := labOSDs(e)
	cfg := osdConfig(e, specs...)
	a, b := e.Nodes[0], e.Nodes[1]
	aSDB := osdAddr(a, "/dev/sdb")
	var sdbID int64
	e.Run(t, resource.TestCase{
		CheckDestroy: checkNoOSDs(e),
		Steps: []resource.TestStep{
			{
				// An API token cannot create OSDs: said at plan, before anything runs.
				Config:      e.Config(fmt.Sprintf("resource \"pve_ceph_osd\" \"x\" {\n  node   = %q\n  device = \"/dev/sdb\"\n}\n", a)),
				PlanOnly:    true,
				ExpectError: errRE(words("Creating pve_ceph_osd needs root@pam"), words("refuses every API token")),
			},
			{
				Config: cfg,
				Check:  resource.ComposeAggregateTestCheckFunc(checkLabOSDs(e, specs), checkHealthModel(e)),
			},
			{
				ResourceName: aSDB, ImportState: true, ImportStateVerify: true,
				ImportStateIdFunc: func(s *terraform.State) (string, error) {
					id, err := stateOSDID(s, aSDB)
					return fmt.Sprintf("%s/%d", a, id), err
				},
			},
			{
				ResourceName: osdAddr(b, "/dev/sdc"), ImportState: true, ImportStateVerify: true,
				ImportStateIdFunc: func(s *terraform.State) (string, error) {
					id, err := stateOSDID(s, osdAddr(b, "/dev/sdc"))
					return fmt.Sprintf("%s/osd.%d", b, id), err
				},
			},
			{
				// The kernel names the disks the other way round after a
				// reboot: Ceph follows its disks, the plan says so and
				// refuses, nothing is destroyed.
				PreConfig: func() {
					sdbID = osdOn(t, e, a, "/dev/sdb")
					e.Sim.SwapDisks(a, "/dev/sdb", "/dev/sdc")
				},
				Config:      cfg,
				PlanOnly:    true,
				ExpectError: errRE(words("Cannot change device of a Ceph OSD"), words(`PVE reports device = "/dev/sdc"`), words("the kernel can name disks differently")),
			},
			{
				// Nothing changed in PVE; the disks come back; the plan is empty.
				PreConfig: func() {
					if id := osdOn(t, e, a, "/dev/sdc"); id != sdbID {
						t.Fatalf("after the swap /dev/sdc holds osd.%d, want osd.%d", id, sdbID)
					}
					if n := len(tree(t, e).OSDs); n != 6 {
						t.Fatalf("%d OSDs after a refused plan", n)
					}
					e.Sim.SwapDisks(a, "/dev/sdb", "/dev/sdc")
				},
				Config:   cfg,
				PlanOnly: true,
			},
			{
				// Encryption cannot be switched on for an existing OSD.
				Config:      osdConfig(e, append(labOSDs(e, a+":/dev/sdb"), osdSpec{node: a, dev: "/dev/sdb", extra: "  encrypted = true\n"})...),
				PlanOnly:    true,
				ExpectError: errRE(words("Cannot change encrypted of a Ceph OSD"), words("terraform apply -replace")),
			},
			{
				// Destroyed outside Terraform, and a new OSD elsewhere got its
				// id: the fsid shows it is not the resource's OSD, so the
				// resource is recreated on its disk and the other OSD is
				// left alone.
				PreConfig: func() {
					old := osdOn(t, e, b, "/dev/sdc")
					destroyOutside(t, e, b, old)
					if id := createOutside(t, e, b, "/dev/nvme0n1"); id != old {
						t.Fatalf("precondition: the new OSD got osd.%d, not the freed osd.%d", id, old)
					}
				},
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(osdAddr(b, "/dev/sdc"), plancheck.ResourceActionCreate),
				}},
				Check: func(s *terraform.State) error {
					id, err := stateOSDID(s, osdAddr(b, "/dev/sdc"))
					if err != nil {
						return err
					}
					if onDisk := osdOn(t, e, b, "/dev/sdc"); onDisk != id {
						return fmt.Errorf("state says osd.%d on %s /dev/sdc, PVE lists osd.%d", id, b, onDisk)
					}
					if foreign := osdOn(t, e, b, "/dev/nvme0n1"); foreign < 0 || foreign == id {
						return fmt.Errorf("the OSD on /dev/nvme0n1 was touched: osd.%d", foreign)
					}
					return nil
				},
			},
			{
				PreConfig: func() { destroyOutside(t, e, b, osdOn(t, e, b, "/dev/nvme0n1")) },
				Config:    cfg,
				PlanOnly:  true,
			},
			{
				// force is state only: an in-place update that touches nothing in PVE.
				Config: osdConfig(e, append(labOSDs(e, a+":/dev/sdb"), osdSpec{node: a, dev: "/dev/sdb", extra: "  force = false\n  timeouts {\n    delete = \"5m\"\n  }\n"})...),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(aSDB, plancheck.ResourceActionUpdate),
				}},
			},
		},
	})
}

// An OSD replaced (tainted: destroyed, then created on the same disk) while
// a size 3 / min_size 2 pool holds data: the destroy waits until Ceph has
// moved every copy, so no PG ever drops below min_size and no OSD is
// destroyed before it is safe.
func TestAccCephOSD_replaceKeepsData(t *testing.T) {
	t.Parallel()
	// 32 GiB in the pool: about 16 GiB on the OSD, which Ceph moves to its
	// host's other OSD in about 160 simulated seconds, 2.7 s at 60x. A
	// destroy that did not wait would come long before that.
	e := cephEnv(t, 60)
	setupCeph(t, e)
	specs := labOSDs(e)
	cfg := osdConfig(e, specs...)
	a := e.Nodes[0]
	aSDB := osdAddr(a, "/dev/sdb")
	var oldUUID string
	e.Run(t, resource.TestCase{
		CheckDestroy: checkNoOSDs(e),
		Steps: []resource.TestStep{
			{
				Config: cfg,
				Check: func(s *terraform.State) error {
					oldUUID = s.RootModule().Resources[aSDB].Primary.Attributes["uuid"]
					return nil
				},
			},
			{
				PreConfig: func() {
					createPool(t, e, "ceph", 64, 32<<30)
					if st, err := e.Client.CephClusterStatus(context.Background()); err != nil || !st.AllActiveClean() {
						t.Fatalf("pool not clean before the replace: %+v %v", st, err)
					}
				},
				Config: cfg,
				Taint:  []string{aSDB},
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(aSDB, plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkHealthModel(e),
					checkLabOSDs(e, specs),
					func(s *terraform.State) error {
						if u := s.RootModule().Resources[aSDB].Primary.Attributes["uuid"]; u == oldUUID {
							return fmt.Errorf("the OSD on %s /dev/sdb still has fsid %s: not replaced", a, u)
						}
						st, err := e.Client.CephClusterStatus(context.Background())
						if err != nil {
							return err
						}
						if st.NumOSDs != 6 || st.NumUpOSDs != 6 || st.NumInOSDs != 6 {
							return fmt.Errorf("after the replace PVE reports %d OSDs, %d up, %d in", st.NumOSDs, st.NumUpOSDs, st.NumInOSDs)
						}
						return nil
					},
				),
			},
			{
				// The pool goes first, so the final destroy of all OSDs has nothing to drain.
				PreConfig: func() { deletePool(t, e, "ceph") },
				Config:    cfg,
				Check:     checkHealthModel(e),
			},
		},
	})
}

// An OSD of a running cluster, taken into state by import, is removed from
// the configuration while a size 3 / min_size 2 pool holds data: the destroy
// marks it out, waits for Ceph's safe-to-destroy, stops it and destroys it;
// no PG drops below min_size and the data stays readable. Then a new OSD on
// the freed disk. On make testlab the data, the backfill and the verdict are
// real Ceph's.
func TestAccCephOSD_drainedBeforeDestroy(t *testing.T) {
	t.Parallel()
	if acctest.Live() {
		t.Skip("destroys and re-creates an OSD; runs against the simulator only")
	}
	e := cephConfigEnv(t, 60, false) // six OSDs, pool rbd holding data
	node, dev := e.Nodes[2], "/dev/sdc"
	addr := osdAddr(node, dev)
	cfg := osdConfig(e, osdSpec{node: node, dev: dev})
	id := osdOn(t, e, node, dev)
	clusterHas := func(osds, up, in int64) resource.TestCheckFunc {
		return func(*terraform.State) error {
			st, err := e.Client.CephClusterStatus(context.Background())
			if err != nil {
				return err
			}
			if st.NumOSDs != osds || st.NumUpOSDs != up || st.NumInOSDs != in {
				return fmt.Errorf("Ceph reports %d OSDs, %d up, %d in; want %d, %d, %d", st.NumOSDs, st.NumUpOSDs, st.NumInOSDs, osds, up, in)
			}
			return nil
		}
	}
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{Config: cfg, ResourceName: addr, ImportState: true, ImportStatePersist: true, ImportStateId: fmt.Sprintf("%s/%d", node, id)},
			{Config: cfg, PlanOnly: true},
			{
				Config: osdConfig(e),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionDestroy),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkHealthModel(e),
					clusterHas(5, 5, 5),
					func(*terraform.State) error {
						if o := tree(t, e).OSD(id); o != nil {
							return fmt.Errorf("osd.%d still listed after its destroy: %+v", id, o)
						}
						if on := osdOn(t, e, node, dev); on >= 0 {
							return fmt.Errorf("%s %s still holds osd.%d", node, dev, on)
						}
						return nil
					},
				),
			},
			{
				Config: cfg,
				Check: resource.ComposeAggregateTestCheckFunc(
					checkHealthModel(e),
					clusterHas(6, 6, 6),
					func(s *terraform.State) error {
						got, err := stateOSDID(s, addr)
						if err != nil {
							return err
						}
						if on := osdOn(t, e, node, dev); on != got {
							return fmt.Errorf("state says osd.%d on %s %s, PVE lists osd.%d", got, node, dev, on)
						}
						if o := tree(t, e).OSD(got); o == nil || !o.Up() || !o.In {
							return fmt.Errorf("the new osd.%d is not up and in: %+v", got, o)
						}
						return nil
					},
				),
			},
		},
	})
}

// Draining can never finish with one OSD per host and a pool of size 3 on
// three hosts (created by hand): the destroy is refused at plan, by the
// drain's rule, before anything changes; the OSD stays in; force destroys
// it anyway (and the health model records that).
func TestAccCephOSD_destroyRefusedWhenItCannotDrain(t *testing.T) {
	t.Parallel()
	e := cephEnv(t, 600)
	setupCeph(t, e)
	a := e.Nodes[0]
	var specs []osdSpec
	for _, n := range e.Nodes {
		specs = append(specs, osdSpec{node: n, dev: "/dev/sdb"})
	}
	aSDB := osdAddr(a, "/dev/sdb")
	stillIn := func(s *terraform.State) error {
		id, err := stateOSDID(s, aSDB)
		if err != nil {
			return err
		}
		if o := tree(t, e).OSD(id); o == nil || !o.In || !o.Up() {
			return fmt.Errorf("osd.%d after the refused destroy: %+v", id, o)
		}
		return nil
	}
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{Config: osdConfig(e, specs...)},
			{
				PreConfig: func() { createPool(t, e, "ceph", 32, 4<<30) },
				Config:    osdConfig(e, specs[1:]...),
				ExpectError: errRE(words("Refusing to destroy Ceph OSD osd."), words(`Pool "ceph" keeps size = 3 copies on distinct hosts`),
					words("only 2 host(s) have OSDs that are in"), words("Its drain would refuse at apply"), words("Add an OSD on another host first")),
			},
			{
				Config: osdConfig(e, specs...),
				Check: resource.ComposeAggregateTestCheckFunc(
					stillIn, checkHealthModel(e),
					resource.TestCheckResourceAttr(aSDB, "in", "true"),
				),
			},
			{
				// force is recorded first; then the destroy does not wait.
				Config: osdConfig(e, append([]osdSpec{{node: a, dev: "/dev/sdb", extra: "  force = true\n"}}, specs[1:]...)...),
			},
			{
				Config: osdConfig(e, specs[1:]...),
				Check: func(*terraform.State) error {
					if osdOn(t, e, a, "/dev/sdb") >= 0 {
						return fmt.Errorf("force did not destroy the OSD on %s /dev/sdb", a)
					}
					if v := e.Sim.CephUnsafeDestroys(); len(v) != 1 {
						return fmt.Errorf("a forced destroy of an undrained OSD is recorded once, got %v", v)
					}
					return nil
				},
			},
			{
				PreConfig: func() { deletePool(t, e, "ceph") },
				Config:    osdConfig(e, specs[1:]...),
			},
		},
	})
}

// Destroys refused where they would lose the last copy: PGs inactive
// because OSDs on the other hosts are down (the OSD may hold their last copy
// that is up), and a size 1 pool whose only copy is on a stopped OSD.
// Nothing changes; once the OSDs are back the plan is empty again.
func TestAccCephOSD_destroyRefusedWhenItWouldLoseTheLastCopy(t *testing.T) {
	t.Parallel()
	e := cephEnv(t, -1) // frozen: down OSDs are not marked out behind the test's back
	setupCeph(t, e)
	a, b, c := e.Nodes[0], e.Nodes[1], e.Nodes[2]
	specs := withDeleteTimeout(labOSDs(e))
	without := withDeleteTimeout(labOSDs(e, a+":/dev/sdb"))
	aSDB := osdAddr(a, "/dev/sdb")
	var down []int
	intact := func(s *terraform.State) error {
		id, err := stateOSDID(s, aSDB)
		if err != nil {
			return err
		}
		if o := tree(t, e).OSD(id); o == nil || !o.In {
			return fmt.Errorf("osd.%d after the refused destroy: %+v", id, o)
		}
		if v := e.Sim.CephUnsafeDestroys(); len(v) != 0 {
			return fmt.Errorf("unsafe destroys: %v", v)
		}
		if v := e.Sim.CephDataLoss(); len(v) != 0 {
			return fmt.Errorf("data loss: %v", v)
		}
		return nil
	}
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{Config: osdConfig(e, specs...)},
			{
				PreConfig: func() {
					createPool(t, e, "ceph", 64, 4<<30)
					// Every OSD of the other two hosts: each PG keeps one
					// copy (on a), below min_size 2, whichever OSD ids
					// the parallel creates handed out.
					for _, n := range []string{b, c} {
						for _, dev := range []string{"/dev/sdb", "/dev/sdc"} {
							down = append(down, int(osdOn(t, e, n, dev)))
						}
					}
					for _, id := range down {
						e.Sim.SetCephOSDUp(id, false)
					}
					st, err := e.Client.CephClusterStatus(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					if _, ok := st.Checks["PG_AVAILABILITY"]; !ok {
						t.Fatalf("precondition: no inactive PGs with %v down: %v", down, st.PGsByState)
					}
				},
				Config: osdConfig(e, without...),
				ExpectError: errRE(words("Refusing to destroy osd.")+`\d+:\s+`+words("Ceph cannot drain it as the cluster is now"), words("Nothing was changed"), words("PGs inactive"), words("may hold the last copy"),
					words("Down OSDs:")+`\s+osd\.\d+\s+\((`+b+`|`+c+`)\),\s+osd\.\d+\s+\((`+b+`|`+c+`)\)`),
			},
			{
				PreConfig: func() {
					for _, id := range down {
						e.Sim.SetCephOSDUp(id, true)
					}
				},
				Config: osdConfig(e, specs...),
				Check:  resource.ComposeAggregateTestCheckFunc(intact, resource.TestCheckResourceAttr(aSDB, "in", "true")),
			},
			{
				// A pool without replicas (size 1 set on the command line)
				// whose only copy sits on the OSD, which has crashed.
				PreConfig: func() {
					deletePool(t, e, "ceph")
					// PVE's API cannot set size 1 (Ceph wants
					// --yes-i-really-mean-it); an admin does it by hand.
					createPool(t, e, "scratch", 64, 1<<30)
					e.Sim.SetCephPoolSize("scratch", 1, 1)
					id := osdOn(t, e, a, "/dev/sdb")
					if o := tree(t, e).OSD(id); o == nil || o.PGs == 0 {
						t.Fatalf("precondition: osd.%d holds no PG of the size 1 pool: %+v", id, o)
					}
					e.Sim.SetCephOSDUp(int(id), false)
				},
				Config:      osdConfig(e, without...),
				ExpectError: errRE(words("Refusing to destroy osd.")+`\d+:\s+`+words("Ceph cannot drain it as the cluster is now"), words("PGs inactive"), words("Down OSDs:")+`\s+osd\.\d+\s+\(`+a+`\)`),
			},
			{
				PreConfig: func() {
					e.Sim.SetCephOSDUp(int(osdOn(t, e, a, "/dev/sdb")), true)
					deletePool(t, e, "scratch")
				},
				Config: osdConfig(e, specs...),
				Check:  intact,
			},
		},
	})
}

// A drain that does not finish within timeouts.delete leaves the OSD out
// (Ceph keeps moving its data) and in state, and says what is left; the
// next apply, once Ceph has moved the data, destroys it.
func TestAccCephOSD_timeoutLeavesOSDOut(t *testing.T) {
	t.Parallel()
	e := cephEnv(t, -1) // frozen: recovery moves only when the test advances the clock
	setupCeph(t, e)
	a := e.Nodes[0]
	aSDB := osdAddr(a, "/dev/sdb")
	without := withDeleteTimeout(labOSDs(e, a+":/dev/sdb"))
	short := append(without, osdSpec{node: a, dev: "/dev/sdb", extra: "  timeouts {\n    delete = \"2s\"\n  }\n"})
	var id int64
	e.Run(t, resource.TestCase{
		CheckDestroy: checkNoOSDs(e),
		Steps: []resource.TestStep{
			{Config: osdConfig(e, short...)},
			{
				PreConfig: func() { createPool(t, e, "ceph", 64, 4<<30); id = osdOn(t, e, a, "/dev/sdb") },
				Config:    osdConfig(e, without...),
				ExpectError: errRE(words("timed out after 2s waiting for Ceph to drain osd.")+`\d+`, words("stays out"), words("stays in Terraform state"),
					`[1-9]\d*\s+PGs\s+and\s+[0-9.]+\s+[KMG]iB\s+still\s+on\s+osd\.\d+`, `[1-9]\d*\s+objects\s+misplaced`),
			},
			{
				// Still in state, out, and up: nothing was destroyed (the
				// destroy is still pending).
				RefreshState:       true,
				ExpectNonEmptyPlan: true,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(aSDB, "in", "false"),
					resource.TestCheckResourceAttr(aSDB, "up", "true"),
					checkHealthModel(e),
					func(*terraform.State) error {
						if o := tree(t, e).OSD(id); o == nil || o.In || !o.Up() {
							return fmt.Errorf("osd.%d after the timeout: %+v", id, o)
						}
						return nil
					},
				),
			},
			{
				// Ceph finishes moving the data; applying again destroys the OSD.
				PreConfig: func() { e.Sim.CephAdvance(time.Hour) },
				Config:    osdConfig(e, without...),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkHealthModel(e),
					func(*terraform.State) error {
						if o := tree(t, e).OSD(id); o != nil {
							return fmt.Errorf("osd.%d still exists: %+v", id, o)
						}
						return nil
					},
				),
			},
			{
				PreConfig: func() { deletePool(t, e, "ceph") },
				Config:    osdConfig(e, without...),
			},
		},
	})
}

// A node powered off (noout set, as for maintenance): its OSD reads as
// down through the other nodes, with the recorded disk kept, and the plan
// stays empty.
func TestAccCephOSD_nodeDown(t *testing.T) {
	t.Parallel()
	e := cephEnv(t, 600)
	setupCeph(t, e)
	c := e.Nodes[2]
	cfg := osdConfig(e, osdSpec{node: c, dev: "/dev/sdb"})
	addr := osdAddr(c, "/dev/sdb")
	e.Run(t, resource.TestCase{
		CheckDestroy: checkNoOSDs(e),
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				PreConfig: func() {
					if err := e.RootClient(t).SetCephFlag(context.Background(), "noout", true); err != nil {
						t.Fatal(err)
					}
					e.Sim.PowerOff(c)
				},
				Config:   cfg,
				PlanOnly: true,
			},
			{
				RefreshState: true,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "up", "false"),
					resource.TestCheckResourceAttr(addr, "in", "true"),
					resource.TestCheckResourceAttr(addr, "device", "/dev/sdb"),
					resource.TestCheckResourceAttr(addr, "crush_device_class", "ssd"),
				),
			},
			{
				PreConfig: func() {
					e.Sim.PowerOn(c)
					if err := e.RootClient(t).SetCephFlag(context.Background(), "noout", false); err != nil {
						t.Fatal(err)
					}
				},
				Config:   cfg,
				PlanOnly: true,
			},
		},
	})
}

// block.db and block.wal on other disks with their sizes, encryption and a
// custom device class, read back from PVE (metadata, disk list, tree) and
// imported; two OSDs on one NVMe disk (osds_per_device) as one resource.
func TestAccCephOSD_dbWALEncryptedAndBatch(t *testing.T) {
	t.Parallel()
	e := cephEnv(t, 600)
	setupCeph(t, e)
	a, b, c := e.Nodes[0], e.Nodes[1], e.Nodes[2]
	specs := []osdSpec{
		{node: a, dev: "/dev/sdb", extra: "  db_device          = \"/dev/nvme0n1\"\n  db_size            = 30\n  wal_device         = \"/dev/sdc\"\n  wal_size           = 1.5\n  encrypted          = true\n  crush_device_class = \"fast\"\n"},
		{node: b, dev: "/dev/sdb", extra: "  db_device = \"/dev/nvme0n1\"\n"},
		{node: c, dev: "/dev/nvme0n1", extra: "  osds_per_device = 2\n"},
	}
	cfg := osdConfig(e, specs...)
	aSDB, bSDB, cNVMe := osdAddr(a, "/dev/sdb"), osdAddr(b, "/dev/sdb"), osdAddr(c, "/dev/nvme0n1")
	importID := func(addr, node string, idx int) resource.ImportStateIdFunc {
		return func(s *terraform.State) (string, error) {
			rs := s.RootModule().Resources[addr]
			if rs == nil {
				return "", fmt.Errorf("%s not in state", addr)
			}
			return node + "/" + rs.Primary.Attributes[fmt.Sprintf("osd_ids.%d", idx)], nil
		}
	}
	e.Run(t, resource.TestCase{
		CheckDestroy: checkNoOSDs(e),
		Steps: []resource.TestStep{
			{
				Config: cfg,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(aSDB, "db_device", "/dev/nvme0n1"),
					resource.TestCheckResourceAttr(aSDB, "db_size", "30"),
					resource.TestCheckResourceAttr(aSDB, "wal_device", "/dev/sdc"),
					resource.TestCheckResourceAttr(aSDB, "wal_size", "1.5"),
					resource.TestCheckResourceAttr(aSDB, "encrypted", "true"),
					resource.TestCheckResourceAttr(aSDB, "crush_device_class", "fast"),
					// 10 % of the 480 GB disk, rounded to whole LVM extents.
					resource.TestCheckResourceAttr(bSDB, "db_size", "44.714844"),
					resource.TestCheckNoResourceAttr(bSDB, "wal_device"),
					resource.TestCheckResourceAttr(cNVMe, "osds_per_device", "2"),
					resource.TestCheckResourceAttr(cNVMe, "osd_ids.#", "2"),
					resource.TestCheckResourceAttr(cNVMe, "crush_device_class", "nvme"),
					func(s *terraform.State) error {
						ctx := context.Background()
						id, _ := stateOSDID(s, aSDB)
						md, err := e.Client.CephOSDMetadata(ctx, a, id)
						if err != nil {
							return err
						}
						if db, wal := md.Device("db"), md.Device("wal"); db == nil || db.PhysicalDevice != "nvme0n1" || db.Size != 30<<30 ||
							wal == nil || wal.PhysicalDevice != "sdc" || wal.Size != 1536<<20 {
							return fmt.Errorf("PVE reports devices %+v", md.Devices)
						}
						disks, err := e.Client.Disks(ctx, a, false)
						if err != nil {
							return err
						}
						for _, d := range disks {
							if d.DevPath == "/dev/sdb" && !d.OSDEncrypted {
								return fmt.Errorf("PVE reports /dev/sdb not encrypted: %+v", d)
							}
							if d.DevPath == "/dev/nvme0n1" && (d.DBs != 1 || d.OSDID >= 0) {
								return fmt.Errorf("PVE reports the DB disk as %+v", d)
							}
						}
						if o := tree(t, e).OSD(id); o == nil || o.DeviceClass != "fast" {
							return fmt.Errorf("tree: %+v", o)
						}
						cDisks, err := e.Client.Disks(ctx, c, false)
						if err != nil {
							return err
						}
						for _, d := range cDisks {
							if d.DevPath == "/dev/nvme0n1" && len(d.OSDIDs) != 2 {
								return fmt.Errorf("PVE lists %v on %s /dev/nvme0n1", d.OSDIDs, c)
							}
						}
						return nil
					},
				),
			},
			{ResourceName: aSDB, ImportState: true, ImportStateVerify: true, ImportStateIdFunc: importID(aSDB, a, 0)},
			{ResourceName: bSDB, ImportState: true, ImportStateVerify: true, ImportStateIdFunc: importID(bSDB, b, 0)},
			// Either OSD of the disk imports the pair.
			{ResourceName: cNVMe, ImportState: true, ImportStateVerify: true, ImportStateIdFunc: importID(cNVMe, c, 1)},
			{
				// A bigger block.db would need a new OSD.
				Config:      osdConfig(e, osdSpec{node: a, dev: "/dev/sdb", extra: strings.Replace(specs[0].extra, "= 30", "= 40", 1)}, specs[1], specs[2]),
				PlanOnly:    true,
				ExpectError: errRE(words("Cannot change db_size of a Ceph OSD"), words("PVE reports db_size = 30")),
			},
		},
	})
}
