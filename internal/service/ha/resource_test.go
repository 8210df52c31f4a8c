package ha_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

const addr = "pve_ha_resource.vm"

// testVM gives the test a VM to put under HA: in pvesim one made on the
// second node; against a live cluster the VM named by PVE_ACC_HA_VMID
// (tests change its HA state, so they need the opt-in).
func testVM(t *testing.T, e *acctest.Env) int64 {
	t.Helper()
	if e.Sim == nil {
		id, err := strconv.ParseInt(os.Getenv("PVE_ACC_HA_VMID"), 10, 64)
		if err != nil {
			t.Skip("set PVE_ACC_HA_VMID to a VM that is not HA-managed and may be started and stopped")
		}
		return id
	}
	e.Sim.CreateTestVM(e.Node(t, 1), 100, "vm100")
	return 100
}

func isPVE9(t *testing.T, e *acctest.Env) bool {
	t.Helper()
	v, err := e.Client.Version(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return !strings.HasPrefix(v.Release, "8.")
}

// checkPVE asserts what PVE reports for the resource and the HA manager's
// state of its guest.
func checkPVE(e *acctest.Env, sid string, check func(r *pve.HAResource, crmState string) error) resource.TestCheckFunc {
	return func(*terraform.State) error {
		ctx := context.Background()
		r, err := e.Client.HAResource(ctx, sid)
		if err != nil {
			return err
		}
		st, err := e.Client.HAStatus(ctx)
		if err != nil {
			return err
		}
		crm := ""
		for _, s := range st {
			if s.SID == sid {
				crm = s.State
			}
		}
		return check(r, crm)
	}
}

// guestIs checks the guest's run state in the simulator (the CRM started
// or stopped it); against a live cluster the HA state check stands for it.
func guestIs(e *acctest.Env, vmid int64, want string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if e.Sim == nil {
			return nil
		}
		if got, _ := e.Sim.GuestStatus(int(vmid)); got != want {
			return fmt.Errorf("guest %d is %q, want %q", vmid, got, want)
		}
		return nil
	}
}

func TestAccHAResource_lifecycle(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	vmid := testVM(t, e)
	sid := fmt.Sprintf("vm:%d", vmid)
	started := e.Config(fmt.Sprintf(`
resource "pve_ha_resource" "vm" {
  vmid        = %d
  state       = "started"
  max_restart = 2
  comment     = "web"
}
`, vmid))
	stopped := e.Config(fmt.Sprintf(`
resource "pve_ha_resource" "vm" {
  vmid         = %d
  state        = "stopped"
  max_restart  = 2
  max_relocate = 3
}
`, vmid))
	e.Run(t, resource.TestCase{
		CheckDestroy: func(*terraform.State) error {
			_, err := e.Client.HAResource(context.Background(), sid)
			if !pve.IsHANotFound(err) {
				return fmt.Errorf("HA resource %s after destroy: err %w", sid, err)
			}
			// Removing HA leaves the guest as it was.
			if e.Sim != nil {
				if st, node := e.Sim.GuestStatus(int(vmid)); st != "stopped" || node == "" {
					return fmt.Errorf("guest after destroy: %q on %q", st, node)
				}
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: started,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "id", sid),
					resource.TestCheckResourceAttr(addr, "sid", sid),
					resource.TestCheckResourceAttr(addr, "max_relocate", "1"),
					resource.TestCheckResourceAttr(addr, "failback", "true"),
					checkPVE(e, sid, func(r *pve.HAResource, crm string) error {
						if r.State != "started" || r.MaxRestart == nil || *r.MaxRestart != 2 || r.Comment != "web" || crm != "started" {
							return fmt.Errorf("PVE reports %+v, HA manager state %q", r, crm)
						}
						return nil
					}),
					guestIs(e, vmid, "running"),
				),
			},
			{
				ResourceName:            addr,
				ImportState:             true,
				ImportStateId:           sid,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
			{
				// By the guest's id, as `ha-manager add 100` takes it.
				ResourceName:            addr,
				ImportState:             true,
				ImportStateId:           strconv.FormatInt(vmid, 10),
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
			{
				Config: stopped,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "state", "stopped"),
					resource.TestCheckNoResourceAttr(addr, "comment"),
					checkPVE(e, sid, func(r *pve.HAResource, crm string) error {
						if r.State != "stopped" || r.MaxRelocate == nil || *r.MaxRelocate != 3 || r.Comment != "" || crm != "stopped" {
							return fmt.Errorf("PVE reports %+v, HA manager state %q", r, crm)
						}
						return nil
					}),
					guestIs(e, vmid, "stopped"),
				),
			},
			{
				// Drift: started by hand (GUI, ha-manager set); the plan
				// names the state and puts it back.
				PreConfig: func() {
					if err := e.Client.UpdateHAResource(context.Background(), sid, pve.HAResourceRequest{State: "started"}, nil, ""); err != nil {
						t.Fatal(err)
					}
				},
				Config: stopped,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(addr, tfjsonpath.New("state"), knownvalue.StringExact("stopped")),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkPVE(e, sid, func(r *pve.HAResource, crm string) error {
						if r.State != "stopped" || crm != "stopped" {
							return fmt.Errorf("PVE reports %+v, HA manager state %q", r, crm)
						}
						return nil
					}),
					guestIs(e, vmid, "stopped"),
				),
			},
			{
				// Removed outside Terraform: planned as a create again.
				PreConfig: func() {
					if err := e.Client.DeleteHAResource(context.Background(), sid); err != nil {
						t.Fatal(err)
					}
				},
				Config: stopped,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate),
				}},
				Check: checkPVE(e, sid, func(r *pve.HAResource, crm string) error {
					if r.State != "stopped" {
						return fmt.Errorf("PVE reports %+v", r)
					}
					return nil
				}),
			},
			{
				// sid instead of vmid for the same guest changes nothing.
				Config: e.Config(fmt.Sprintf(`
resource "pve_ha_resource" "vm" {
  sid          = %q
  state        = "stopped"
  max_restart  = 2
  max_relocate = 3
}
`, sid)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionNoop),
				}},
			},
		},
	})
}

// Placement differs by release: PVE 8 has groups, PVE 9 refuses them at plan
// time and has per-resource failback instead.
func TestAccHAResource_release(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	vmid := testVM(t, e)
	sid := fmt.Sprintf("vm:%d", vmid)
	withGroup := e.Config(fmt.Sprintf(`
resource "pve_ha_resource" "vm" {
  vmid  = %d
  group = "prefer_b"
}
`, vmid))
	noFailback := e.Config(fmt.Sprintf(`
resource "pve_ha_resource" "vm" {
  vmid     = %d
  failback = false
}
`, vmid))
	if isPVE9(t, e) {
		e.Run(t, resource.TestCase{Steps: []resource.TestStep{
			{Config: withGroup, PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)HA groups were migrated to rules.*pve_ha_rule`)},
			{
				Config: noFailback,
				Check: checkPVE(e, sid, func(r *pve.HAResource, crm string) error {
					if r.Failback == nil || *r.Failback || crm != "started" {
						return fmt.Errorf("PVE reports %+v, HA manager state %q", r, crm)
					}
					return nil
				}),
			},
			{
				// Back to the default: PVE's option is deleted.
				Config: e.Config(fmt.Sprintf(`resource "pve_ha_resource" "vm" { vmid = %d }`, vmid)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: checkPVE(e, sid, func(r *pve.HAResource, _ string) error {
					if r.Failback != nil {
						return fmt.Errorf("failback still set: %+v", r)
					}
					return nil
				}),
			},
		}})
		return
	}
	root := e.RootClient(t)
	if err := root.CreateHAGroup(context.Background(), pve.HAGroup{Group: "prefer_b", Nodes: e.Node(t, 1) + ":2," + e.Node(t, 0)}); err != nil {
		t.Fatal(err)
	}
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		{Config: noFailback, PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)failback needs PVE 9.*nofailback`)},
		{
			Config: withGroup,
			Check: checkPVE(e, sid, func(r *pve.HAResource, crm string) error {
				if r.Group != "prefer_b" || crm != "started" {
					return fmt.Errorf("PVE reports %+v, HA manager state %q", r, crm)
				}
				return nil
			}),
		},
		{
			Config: e.Config(fmt.Sprintf(`resource "pve_ha_resource" "vm" { vmid = %d }`, vmid)),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
			}},
			Check: checkPVE(e, sid, func(r *pve.HAResource, _ string) error {
				if r.Group != "" {
					return fmt.Errorf("group still set: %+v", r)
				}
				return nil
			}),
		},
	}})
}

func TestAccHAResource_invalidAtPlan(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	for _, tc := range []struct{ body, want string }{
		{`sid = "vm100"`, `(?s)sid.*must be vm:<vmid> or ct:<vmid>`},
		{`vmid = 100` + "\n" + `sid = "vm:100"`, `(?s)Invalid Attribute Combination`},
		{`state = "running"`, `(?s)state.*value must be one of`},
		{`vmid = 100` + "\n" + `max_restart = -1`, `(?s)max_restart.*at least 0`},
	} {
		e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
			Config:      e.Config(`resource "pve_ha_resource" "vm" {` + "\n  " + tc.body + "\n}\n"),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(tc.want),
		}}})
	}
}

// PVE's refusal reaches the user with the resource named.
func TestAccHAResource_unknownGuest(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	if e.Sim == nil {
		t.Skip("needs a guest id that surely does not exist")
	}
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
		Config:      e.Config(`resource "pve_ha_resource" "vm" { sid = "vm:999" }`),
		ExpectError: regexp.MustCompile(`(?s)Unable to plan pve_ha_resource: guest 999 does not exist.*resource\s+'vm:999'\s+does\s+not\s+exist\s+in\s+cluster`),
	}}})
}

// The HA manager acts some seconds after the write; create and update
// return only once it reports the requested state.
func TestAccHAResource_waitsForTheHAManager(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	if e.Sim == nil {
		t.Skip("the simulator's HA manager delay is a test setting")
	}
	vmid := testVM(t, e)
	e.Sim.SetHACRMDelay(3 * time.Second)
	cfg := func(state string) string {
		return e.Config(fmt.Sprintf(`resource "pve_ha_resource" "vm" {
  vmid  = %d
  state = %q
}`, vmid, state))
	}
	done := func(want, guest string) resource.TestCheckFunc {
		return resource.ComposeAggregateTestCheckFunc(
			checkPVE(e, fmt.Sprintf("vm:%d", vmid), func(_ *pve.HAResource, crm string) error {
				if crm != want {
					return fmt.Errorf("HA manager state %q, want %q", crm, want)
				}
				return nil
			}),
			guestIs(e, vmid, guest),
		)
	}
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		{Config: cfg("started"), Check: done("started", "running")},
		{Config: cfg("stopped"), Check: done("stopped", "stopped")},
	}})
}

// A guest the HA manager cannot start ends in PVE's error state: the apply
// fails saying so and how to get out; `disabled` clears it.
func TestAccHAResource_errorState(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	if e.Sim == nil {
		t.Skip("needs a guest whose start fails")
	}
	vmid := testVM(t, e)
	e.Sim.SetHAStartFails(int(vmid))
	cfg := func(state string) string {
		return e.Config(fmt.Sprintf(`resource "pve_ha_resource" "vm" {
  vmid  = %d
  state = %q
}`, vmid, state))
	}
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		{Config: cfg("started"), ExpectError: regexp.MustCompile(`(?s)Unable to Create HA resource vm:100.*error state.*disabled`)},
		{
			Config: cfg("disabled"),
			Check: checkPVE(e, "vm:100", func(r *pve.HAResource, crm string) error {
				if r.State != "disabled" || crm != "disabled" {
					return fmt.Errorf("PVE reports %+v, HA manager state %q", r, crm)
				}
				return nil
			}),
		},
	}})
}

// An HA resource create or update whose answer is lost, before PVE acted
// or after, converges in that apply: the create is read back and sent
// again only when PVE lacks the resource; the update (absolute values) is
// sent again. The reference lab failed "Unable to Create HA resource
// vm:100 ... EOF".
func TestAccHAResource_answerLost(t *testing.T) {
	t.Parallel()
	acctest.EachDrop(t, func(t *testing.T, drop string) {
		e := acctest.New(t)
		if e.Sim == nil {
			t.Skip("drops connections: runs against the simulator only")
		}
		vmid := testVM(t, e)
		sid := fmt.Sprintf("vm:%d", vmid)
		cfg := func(maxRestart int) string {
			return e.Config(fmt.Sprintf(`
resource "pve_ha_resource" "vm" {
  vmid        = %d
  state       = "started"
  max_restart = %d
}
`, vmid, maxRestart))
		}
		has := func(maxRestart int64) resource.TestCheckFunc {
			return checkPVE(e, sid, func(r *pve.HAResource, crm string) error {
				if r.MaxRestart == nil || *r.MaxRestart != maxRestart || crm != "started" {
					return fmt.Errorf("PVE reports %+v, HA manager state %q", r, crm)
				}
				return nil
			})
		}
		create := e.LostAnswerCase("POST", "/cluster/ha/resources", drop, 1, cfg(2), has(2))
		// The update sets values absolutely: after a lost answer it is
		// sent again, so PVE took it twice when the first one took effect.
		updates := 1
		if drop == "drop-after" {
			updates = 2
		}
		update := e.LostAnswerCase("PUT", "/cluster/ha/resources/"+sid, drop, updates, cfg(3), has(3))
		e.Run(t, resource.TestCase{Steps: append(create.Steps, update.Steps...)})
	})
}
