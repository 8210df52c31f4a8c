package ceph_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

const poolAddr = "pve_ceph_pool.ceph"

func poolConfig(node, body string) string {
	return fmt.Sprintf(`
resource "pve_ceph_pool" "ceph" {
  name = "ceph"
  node = %q
%s
}
`, node, body)
}

// The reference lab's pool: size 3, min_size 2, with its RBD storage;
// then every setting changed in place (the pool id proves no re-create),
// drift, the deletion guard, and a destroy that removes the storage too.
func TestAccCephPool_lifecycle(t *testing.T) {
	t.Parallel()
	e, node := newCephEnv(t)
	var poolID int64
	samePool := func(p *pve.CephPool) error {
		if p.ID != poolID {
			return fmt.Errorf("pool id %d, was %d: the pool was re-created", p.ID, poolID)
		}
		return nil
	}
	e.Run(t, resource.TestCase{
		CheckDestroy: checkPoolGone(e, node),
		Steps: []resource.TestStep{
			{
				Config: e.Config(poolConfig(node, `
  size         = 3
  min_size     = 2
  add_storages = true
`)),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(poolAddr, "id", "ceph"),
					resource.TestCheckResourceAttr(poolAddr, "pg_num", "128"),
					resource.TestCheckResourceAttr(poolAddr, "pg_autoscale_mode", "warn"),
					resource.TestCheckResourceAttr(poolAddr, "application", "rbd"),
					resource.TestCheckResourceAttr(poolAddr, "crush_rule", "replicated_rule"),
					resource.TestCheckResourceAttr(poolAddr, "deletion_protection", "true"),
					resource.TestCheckResourceAttrSet(poolAddr, "pool_id"),
					checkPool(e, node, func(p *pve.CephPool) error {
						if p.Size != 3 || p.MinSize != 2 || p.PGNumTarget != 128 || p.Application != "rbd" || p.PGAutoscaleMode != "warn" {
							return fmt.Errorf("PVE reports %+v", p)
						}
						poolID = p.ID
						return nil
					}),
					func(*terraform.State) error {
						if e.Sim != nil && e.Sim.CephRBDStorages()["ceph"] != "ceph" {
							return fmt.Errorf("RBD storages %v, want ceph on pool ceph", e.Sim.CephRBDStorages())
						}
						return nil
					},
				),
			},
			{
				ResourceName:      poolAddr,
				ImportState:       true,
				ImportStateId:     node + "/ceph",
				ImportStateVerify: true,
				// Whether PVE created the storage with the pool is not part of
				// the pool API; the first apply after an import records it.
				ImportStateVerifyIgnore: []string{"add_storages"},
			},
			{
				// size, placement groups, autoscaler and target size change
				// in place. A new size makes Ceph reset min_size (to 1 for
				// size 2), and PVE skips the unchanged min_size it was sent
				// with: the provider sets it again. (Three hosts have OSDs:
				// a larger size is refused at plan, pool_refs_test.go.)
				Config: e.Config(poolConfig(node, `
  size              = 2
  min_size          = 2
  pg_num            = 256
  pg_num_min        = 64
  pg_autoscale_mode = "off"
  target_size       = "100G"
  add_storages      = true
`)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(poolAddr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(poolAddr, "target_size", "100G"),
					checkPool(e, node, func(p *pve.CephPool) error {
						if p.Size != 2 || p.MinSize != 2 || p.PGNumTarget != 256 || p.PGNumMin != 64 || p.PGAutoscaleMode != "off" || p.TargetSize != 100<<30 {
							return fmt.Errorf("PVE reports %+v", p)
						}
						return samePool(p)
					}),
				),
			},
			{
				// Back to size 3, min_size unchanged.
				Config: e.Config(poolConfig(node, `
  size              = 3
  min_size          = 2
  pg_num            = 64
  pg_autoscale_mode = "warn"
  add_storages      = true
`)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(poolAddr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckNoResourceAttr(poolAddr, "target_size"),
					resource.TestCheckNoResourceAttr(poolAddr, "pg_num_min"),
					checkPool(e, node, func(p *pve.CephPool) error {
						if p.Size != 3 || p.MinSize != 2 || p.PGNumTarget != 64 || p.PGNumMin != 0 || p.TargetSize != 0 || p.PGAutoscaleMode != "warn" {
							return fmt.Errorf("PVE reports %+v", p)
						}
						return samePool(p)
					}),
				),
			},
			{
				// Drift: changed in the GUI, shown in the next plan.
				PreConfig: func() {
					updatePool(t, e, node, "ceph", pve.CephPoolRequest{Size: i64(2), MinSize: i64(2)})
				},
				Config: e.Config(poolConfig(node, `
  size              = 3
  min_size          = 2
  pg_num            = 64
  pg_autoscale_mode = "warn"
  add_storages      = true
`)),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				// Applying puts it back, in place.
				Config: e.Config(poolConfig(node, `
  size              = 3
  min_size          = 2
  pg_num            = 64
  pg_autoscale_mode = "warn"
  target_size_ratio = 0.5
  add_storages      = true
`)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(poolAddr, plancheck.ResourceActionUpdate),
				}},
				Check: checkPool(e, node, func(p *pve.CephPool) error {
					if p.Size != 3 || p.MinSize != 2 || p.TargetSizeRatio != 0.5 {
						return fmt.Errorf("PVE reports %+v", p)
					}
					return samePool(p)
				}),
			},
			{
				// Removing the resource with deletion_protection on fails at
				// plan, naming the attribute; the pool stays.
				Config:      e.Config(),
				ExpectError: errorRE(`(?s)Refusing to destroy Ceph pool ceph.*deletion_protection = false`),
			},
			{
				Config: e.Config(poolConfig(node, `
  size                = 3
  min_size            = 2
  pg_num              = 64
  target_size_ratio   = 0.5
  add_storages        = true
  deletion_protection = false
`)),
				Check: checkPool(e, node, samePool),
			},
		},
	})
}

// Every unsafe or impossible pool is refused at plan, naming the
// attribute; nothing reaches PVE.
func TestAccCephPool_invalid(t *testing.T) {
	t.Parallel()
	e, node := newCephEnv(t)
	step := func(body, want string) resource.TestStep {
		return resource.TestStep{Config: e.Config(poolConfig(node, body)), PlanOnly: true, ExpectError: errorRE(want)}
	}
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			step(`size = 1`, `(?s)Pool without redundancy.*size = 1`),
			step(`min_size = 1`, `(?s)Unsafe min_size.*allow_min_size_1 = true`),
			step(`
  size     = 2
  min_size = 3`, `(?s)min_size above size.*min_size = 3 exceeds size = 2`),
			step(`min_size = 4`, `(?s)min_size = 4 exceeds size = 3`),
			step(`pg_num = 100`, `(?s)pg_num = 100 is not a power of two.*Use 64 or 128`),
			step(`pg_num_min = 48`, `(?s)pg_num_min = 48 is not a power of two`),
			step(`pg_num = 65536`, `(?s)Attribute pg_num value must be between 1 and 32768`),
			step(`size = 8`, `(?s)Attribute size value must be between 1 and 7`),
			step(`min_size = 0`, `(?s)Attribute min_size value must be between 1 and 7`),
			step(`
  pg_autoscale_mode = "on"
  pg_num            = 128`, `(?s)pg_num with the autoscaler on.*Leave pg_num unset`),
			step(`
  pg_num     = 32
  pg_num_min = 64`, `(?s)pg_num_min above pg_num`),
			step(`pg_autoscale_mode = "auto"`, `(?s)pg_autoscale_mode.*value must be one of`),
			step(`application = "nfs"`, `(?s)application.*value must be one of`),
			step(`
  target_size       = "100G"
  target_size_ratio = 0.2`, `(?s)Attribute "target_size_ratio" cannot be specified when "target_size" is\s+specified`),
			step(`target_size = "100GB"`, `(?s)target_size.*such as 500G`),
			step(`target_size_ratio = -1`, `(?s)target_size_ratio value must be at least 0`),
			{
				Config: e.Config(`
resource "pve_ceph_pool" "ceph" {
  name         = "vm/disks"
  node         = "` + node + `"
}
`), PlanOnly: true, ExpectError: errorRE(`(?s)name.*must not contain ':', '/' or whitespace`),
			},
			{
				Config: e.Config(`
resource "pve_ceph_pool" "ceph" {
  name         = "1disks"
  node         = "` + node + `"
  add_storages = true
}
`), PlanOnly: true, ExpectError: errorRE(`(?s)Pool name is not a storage id`),
			},
			{
				// min_size 1 passes with the explicit allowance.
				Config: e.Config(poolConfig(node, `
  min_size         = 1
  allow_min_size_1 = true`)),
				PlanOnly: true, ExpectNonEmptyPlan: true,
			},
		},
	})
}

// Changes Ceph cannot make in place are refused at plan, never planned as
// a replacement.
func TestAccCephPool_refusedChanges(t *testing.T) {
	t.Parallel()
	e, node := newCephEnv(t)
	cfg := func(name, body string) string {
		return e.Config(fmt.Sprintf(`
resource "pve_ceph_pool" "ceph" {
  name                = %q
  node                = %q
  deletion_protection = false
%s
}
`, name, node, body))
	}
	e.Run(t, resource.TestCase{
		CheckDestroy: checkPoolGone(e, node),
		Steps: []resource.TestStep{
			{Config: cfg("ceph", "")},
			{Config: cfg("vm-disks", ""), PlanOnly: true, ExpectError: errorRE(`(?s)Cannot change name of a Ceph pool.*ceph osd pool rename ceph vm-disks`)},
			{Config: cfg("ceph", `application = "cephfs"`), PlanOnly: true, ExpectError: errorRE(`(?s)Cannot change application of a Ceph pool.*application = "rbd"`)},
			{Config: cfg("ceph", `add_storages = true`), PlanOnly: true, ExpectError: errorRE(`(?s)Cannot change add_storages of a Ceph pool`)},
			{
				// The node only says where requests go: an in-place update.
				Config: e.Config(fmt.Sprintf(`
resource "pve_ceph_pool" "ceph" {
  name                = "ceph"
  node                = %q
  deletion_protection = false
}
`, e.Node(t, 1))),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(poolAddr, plancheck.ResourceActionUpdate),
				}},
			},
		},
	})
}

// A pool created outside Terraform is not silently adopted by a create.
func TestAccCephPool_existing(t *testing.T) {
	t.Parallel()
	e, node := newCephEnv(t)
	c := e.RootClient(t)
	upid, err := c.CreateCephPool(context.Background(), node, "ceph", pve.CephPoolRequest{})
	if _, err := c.Await(context.Background(), upid, err); err != nil {
		t.Fatal(err)
	}
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				Config:      e.Config(poolConfig(node, `size = 3`)),
				ExpectError: errorRE(`(?s)Ceph pool already exists.*terraform import pve_ceph_pool.<name> ` + node + `/ceph`),
			},
		},
	})
}

// PVE refuses to destroy a pool whose storage still holds guest disks;
// force_delete destroys them with it.
func TestAccCephPool_deleteWithImages(t *testing.T) {
	t.Parallel()
	e, node := newCephEnv(t)
	if e.Sim == nil {
		t.Skip("puts a guest disk into the pool through the simulator")
	}
	cfg := func(force bool) string {
		return e.Config(poolConfig(node, fmt.Sprintf(`
  add_storages        = true
  deletion_protection = false
  force_delete        = %t
`, force)))
	}
	e.Run(t, resource.TestCase{
		CheckDestroy: checkPoolGone(e, node),
		Steps: []resource.TestStep{
			{
				Config: cfg(false),
				Check: func(*terraform.State) error {
					if !e.Sim.AddCephRBDImage("ceph", "vm-100-disk-0") {
						return fmt.Errorf("pool ceph not in the simulator")
					}
					return nil
				},
			},
			{
				Config:      e.Config(),
				ExpectError: errorRE(`(?s)Unable to Delete Ceph pool ceph.*ceph pool 'ceph' still in use by storage 'ceph'.*force_delete = true`),
			},
			{
				// Still there, still in the state, with its storage.
				Config:           cfg(false),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check: checkPool(e, node, func(p *pve.CephPool) error {
					if e.Sim.CephRBDStorages()["ceph"] != "ceph" {
						return fmt.Errorf("storage removed although the pool stayed")
					}
					return nil
				}),
			},
			{Config: cfg(true)},
		},
	})
}

// PVE creates a pool in the cluster's default autoscale mode (on) and
// sets its mode after: an autoscaler pass in between (real Ceph, make
// testlab, about one create in twenty under load) chooses pg_num for the
// new pool, and PVE's set_pool skips the pg_num it was given because the
// actual pg_num still equals it. The provider sets it again once Ceph
// has begun to merge, so the pool keeps the pg_num planned, or PVE's
// 128 when unset.
func TestAccCephPool_autoscalerInCreate(t *testing.T) {
	t.Parallel()
	// With SSH the provider sets pg_num again through Ceph at once; without,
	// through PVE once Ceph has begun moving away from it.
	for _, ssh := range []bool{true, false} {
		t.Run(fmt.Sprintf("ssh=%v", ssh), func(t *testing.T) {
			t.Parallel()
			e, node := newCephEnvAt(t, 30) // merges proceed: one PG per 0.1 s
			if e.Sim == nil {
				t.Skip("makes the simulator's autoscaler act inside the pool create")
			}
			e.Sim.SetCephAutoscaleInCreate(true)
			provider := e.ProviderConfig()
			if !ssh {
				provider = e.ProviderConfigWithoutSSH(t)
			}
			target := func(name string, want int64) func(*terraform.State) error {
				return func(*terraform.State) error {
					p, err := e.Client.CephPool(context.Background(), node, name)
					if err != nil {
						return err
					}
					if p.PGNumTarget != want || p.PGAutoscaleMode != "warn" {
						return fmt.Errorf("pool %s: pg_num_target %d (pg_num %d, mode %s), want %d", name, p.PGNumTarget, p.PGNum, p.PGAutoscaleMode, want)
					}
					return nil
				}
			}
			e.Run(t, resource.TestCase{
				CheckDestroy: checkPoolGone(e, node),
				Steps: []resource.TestStep{{
					Config: provider + poolConfig(node, `
  deletion_protection = false
`) + fmt.Sprintf(`
resource "pve_ceph_pool" "big" {
  name                = "big"
  node                = %q
  pg_num              = 256
  deletion_protection = false
}
`, node),
					Check: resource.ComposeAggregateTestCheckFunc(
						resource.TestCheckResourceAttr(poolAddr, "pg_num", "128"),
						resource.TestCheckResourceAttr("pve_ceph_pool.big", "pg_num", "256"),
						target("ceph", 128), target("big", 256),
						func(*terraform.State) error {
							if n := len(cephPoolSetsOverSSH(e)); (n > 0) != ssh {
								return fmt.Errorf("%d pg_num sets over SSH with ssh=%v", n, ssh)
							}
							return nil
						},
					),
				}},
			})
		})
	}
}

// cephPoolSetsOverSSH lists the `ceph osd pool set` commands the nodes ran.
func cephPoolSetsOverSSH(e *acctest.Env) []string {
	var out []string
	for _, c := range e.Sim.SSHCommands() {
		if strings.HasPrefix(c.Line, "ceph osd pool set ") {
			out = append(out, c.Line)
		}
	}
	return out
}

// pg_num set back to where a split under way still is: PVE compares it with
// the actual pg_num and skips it ("skipping 'pg_num', did not change"), and
// Ceph would go on splitting; the provider sets it through Ceph.
func TestAccCephPool_pgNumSetBackMidSplit(t *testing.T) {
	t.Parallel()
	e, node := newCephEnv(t) // frozen clock: the split does not move
	if e.Sim == nil {
		t.Skip("holds a split still in the simulator")
	}
	cfg := func(pgs int) string {
		return e.Config(poolConfig(node, fmt.Sprintf(`
  pg_num              = %d
  pg_autoscale_mode   = "off"
  deletion_protection = false
`, pgs)))
	}
	target := func(want, actual int64) func(*terraform.State) error {
		return checkPool(e, node, func(p *pve.CephPool) error {
			if p.PGNumTarget != want || p.PGNum != actual {
				return fmt.Errorf("pg_num_target %d, pg_num %d; want %d, %d", p.PGNumTarget, p.PGNum, want, actual)
			}
			return nil
		})
	}
	e.Run(t, resource.TestCase{
		CheckDestroy: checkPoolGone(e, node),
		Steps: []resource.TestStep{
			{Config: cfg(128), Check: target(128, 128)},
			{Config: cfg(256), Check: target(256, 128)},
			{
				PreConfig: e.Sim.ResetSSHCommands,
				Config:    cfg(128),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(poolAddr, "pg_num", "128"),
					target(128, 128),
					func(*terraform.State) error {
						if got, want := cephPoolSetsOverSSH(e), []string{"ceph osd pool set ceph pg_num 128"}; !reflect.DeepEqual(got, want) {
							return fmt.Errorf("over SSH: %q, want %q", got, want)
						}
						return nil
					},
				),
			},
		},
	})
}

// With the autoscaler on, pg_num belongs to Ceph: it changes without a
// diff, updates of other settings do not fight it, and a raised
// pg_num_min lifts pg_num with it.
func TestAccCephPool_autoscaler(t *testing.T) {
	t.Parallel()
	e, node := newCephEnv(t)
	if e.Sim == nil {
		t.Skip("moves the simulator's clock to let the autoscaler act")
	}
	on := func(body string) string {
		return e.Config(poolConfig(node, `
  pg_autoscale_mode   = "on"
  deletion_protection = false
`+body))
	}
	// Where Ceph is taking pg_num (pg_num_target): a merge takes one PG
	// every few seconds, so pg_num itself lags (real Ceph, make testlab).
	pgNum := func(want int64) func(*terraform.State) error {
		return checkPool(e, node, func(p *pve.CephPool) error {
			if p.PGNumTarget != want {
				return fmt.Errorf("pg_num_target %d (pg_num %d), want %d", p.PGNumTarget, p.PGNum, want)
			}
			return nil
		})
	}
	e.Run(t, resource.TestCase{
		CheckDestroy: checkPoolGone(e, node),
		Steps: []resource.TestStep{
			{
				Config: on(""),
				Check:  resource.ComposeAggregateTestCheckFunc(pgNum(128), resource.TestCheckResourceAttr(poolAddr, "pg_num", "128")),
			},
			{
				// 1 GiB on three OSDs: the autoscaler goes to 32 PGs. The
				// refreshed pg_num is no diff.
				PreConfig: func() { e.Sim.CephAdvance(2 * time.Minute) },
				Config:    on(""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(poolAddr, tfjsonpath.New("pg_num"), knownvalue.Int64Exact(32)),
					statecheck.ExpectKnownValue(poolAddr, tfjsonpath.New("autoscale_pg_num"), knownvalue.Int64Exact(32)),
				},
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check:            pgNum(32),
			},
			{
				// Another setting changes; pg_num stays Ceph's.
				Config: on(`size = 3
  min_size = 2
  target_size_ratio = 0.1`),
				Check: pgNum(32),
			},
			{
				// pg_num_min above the current pg_num: Ceph would refuse it
				// alone, so pg_num goes up with it.
				Config: on(`target_size_ratio = 0.1
  pg_num_min = 64`),
				Check: resource.ComposeAggregateTestCheckFunc(pgNum(64), resource.TestCheckResourceAttr(poolAddr, "pg_num", "64")),
			},
			{
				// Autoscaler off: pg_num is the configuration's again.
				Config: e.Config(poolConfig(node, `
  pg_autoscale_mode   = "warn"
  pg_num              = 128
  pg_num_min          = 64
  deletion_protection = false
`)),
				Check: pgNum(128),
			},
			{
				// Lowering pg_num and pg_num_min together: pg_num_min first.
				Config: e.Config(poolConfig(node, `
  pg_autoscale_mode   = "warn"
  pg_num              = 16
  pg_num_min          = 16
  deletion_protection = false
`)),
				Check: pgNum(16),
			},
		},
	})
}
