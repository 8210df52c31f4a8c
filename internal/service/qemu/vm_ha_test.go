package qemu_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// HA owns the placement of the VMs it manages (DESIGN.md): these tests let
// pvesim's HA manager move VM 100 between applies, during an update and
// during a destroy, as node maintenance, the CRS or ha-manager migrate do.

// newHAVMEnv is newVMEnv for tests that need the simulator's HA hooks.
func newHAVMEnv(t *testing.T) *acctest.Env {
	t.Helper()
	e := newVMEnv(t)
	if e.Sim == nil {
		t.Skip("moves VMs with the simulator's HA manager")
	}
	return e
}

// haVM100 is VM 100 on node under HA, running, with memory MiB, and with a
// disk of its own of diskSize unless that is "".
func haVM100(e *acctest.Env, node string, memory int, diskSize string) string {
	hcl := vm100HCL(node, memory) + `
resource "pve_ha_resource" "vm100" {
  vmid  = pve_vm.vm100.vmid
  state = "started"
}
`
	if diskSize != "" {
		hcl += diskHCL("scsi0", 100, "scsi0", "vm_id = pve_vm.vm100.vmid", `storage = "local-lvm"`, fmt.Sprintf("size = %q", diskSize), "delete_on_destroy = true")
		hcl = strings.Replace(hcl, "vm_id = 100\n", "", 1)
	}
	return e.Config(hcl)
}

// vm100HCL is VM 100 on node, running, with memory MiB.
func vm100HCL(node string, memory int) string {
	return fmt.Sprintf(`
resource "pve_vm" "vm100" {
  node          = %q
  vmid          = 100
  name          = "vm100"
  memory        = %d
  started       = true
  destroy_disks = true
}
`, node, memory)
}

// vmIsOn checks where VM 100's config is and its memory.
func vmIsOn(e *acctest.Env, node string, memory int64) resource.TestCheckFunc {
	return checkVM(e, func(at string, cfg *pve.VMConfig, _ *pve.VMStatus) error {
		if at != node || cfg.Int("memory", 0) != memory || cfg.Values["lock"] != "" {
			return fmt.Errorf("VM 100 is on %s with memory %d (lock %q), want %s with %d", at, cfg.Int("memory", 0), cfg.Values["lock"], node, memory)
		}
		return nil
	})
}

// haMoved is a PreConfig: HA has moved VM 100 to node (the migration
// ended), and the request log starts afresh.
func haMoved(t *testing.T, e *acctest.Env, node string) func() {
	return func() {
		if err := e.Sim.HAMigrate(100, node, 0); err != nil {
			t.Fatal(err)
		}
		e.Sim.ResetRequests()
	}
}

// migrateOnRequest is a PreConfig: HA starts migrating VM 100 to target
// (for half a second) just before the apply's first request matching
// method and path.
func migrateOnRequest(e *acctest.Env, target, method, path string) func() {
	return func() {
		e.Sim.ResetRequests()
		e.Sim.HAMigrateOnRequest(100, target, 500*time.Millisecond, method, path)
	}
}

// noMigrateRequests checks that the provider asked for no migration.
func noMigrateRequests(e *acctest.Env) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for _, r := range e.Sim.Requests() {
			if r.Method == "POST" && strings.HasSuffix(r.Path, "/qemu/100/migrate") {
				return fmt.Errorf("the provider migrated VM 100: %s %s %v", r.Method, r.Path, r.Params)
			}
		}
		return nil
	}
}

// (a) HA moved the VM between applies: the next plan is empty (and warns
// where HA put it), and an update applies on the node the VM runs on,
// without migrating it back.
func TestAccVM_haMovedBetweenApplies(t *testing.T) {
	t.Parallel()
	e := newHAVMEnv(t)
	a, b := e.Node(t, 0), e.Node(t, 1)
	tc := resource.TestCase{}
	diags := acctest.RecordDiagnostics(&tc)
	tc.Steps = []resource.TestStep{
		{
			Config: haVM100(e, a, 1024, ""),
			Check: resource.ComposeAggregateTestCheckFunc(
				vmIsOn(e, a, 1024),
				resource.TestCheckResourceAttr(vmAddr, "node", a),
				resource.TestCheckResourceAttr(vmAddr, "current_node", a),
			),
		},
		{
			PreConfig: haMoved(t, e, b),
			Config:    haVM100(e, a, 1024, ""),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectEmptyPlan(),
				diags.ExpectWarning(regexp.MustCompile(`VM 100 runs on ` + b + `, where the HA manager moved it`)),
			}},
			Check: resource.ComposeAggregateTestCheckFunc(
				vmIsOn(e, b, 1024),
				resource.TestCheckResourceAttr(vmAddr, "node", a),
				resource.TestCheckResourceAttr(vmAddr, "current_node", b),
			),
		},
		{
			Config: haVM100(e, a, 2048, ""),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(vmAddr, plancheck.ResourceActionUpdate),
			}},
			Check: resource.ComposeAggregateTestCheckFunc(
				vmIsOn(e, b, 2048),
				noMigrateRequests(e),
				resource.TestCheckResourceAttr(vmAddr, "node", a),
				resource.TestCheckResourceAttr(vmAddr, "current_node", b),
				resource.TestCheckResourceAttr(vmAddr, "status", "running"),
			),
		},
		{
			// node changed in the configuration: a migration, through HA.
			Config: haVM100(e, e.Node(t, 2), 2048, ""),
			Check: resource.ComposeAggregateTestCheckFunc(
				vmIsOn(e, e.Node(t, 2), 2048),
				resource.TestCheckResourceAttr(vmAddr, "node", e.Node(t, 2)),
				resource.TestCheckResourceAttr(vmAddr, "current_node", e.Node(t, 2)),
			),
		},
	}
	e.Run(t, tc)
}

// (b) HA starts migrating the VM just as the apply writes its config: PVE
// refuses the write (VM is locked (migrate)), the apply waits for the
// migration and writes on the node the VM arrived on.
func TestAccVM_haMigrationDuringUpdate(t *testing.T) {
	t.Parallel()
	e := newHAVMEnv(t)
	a, b := e.Node(t, 0), e.Node(t, 1)
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		{Config: haVM100(e, a, 1024, ""), Check: vmIsOn(e, a, 1024)},
		{
			PreConfig: migrateOnRequest(e, b, "PUT", `/nodes/[^/]+/qemu/100/config`),
			Config:    haVM100(e, a, 2048, ""),
			Check: resource.ComposeAggregateTestCheckFunc(
				vmIsOn(e, b, 2048),
				resource.TestCheckResourceAttr(vmAddr, "node", a),
				resource.TestCheckResourceAttr(vmAddr, "current_node", b),
				resource.TestCheckResourceAttr(vmAddr, "memory", "2048"),
				refusedThenWritten(e, a, b),
			),
		},
	}})
}

// refusedThenWritten checks that the apply met the migration (PVE refused
// the config writes on from: first the digest the migration lock changed,
// then the lock) and wrote once on to.
func refusedThenWritten(e *acctest.Env, from, to string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		var puts []string
		for _, r := range e.Sim.Requests() {
			if r.Method == "PUT" && strings.HasSuffix(r.Path, "/qemu/100/config") {
				puts = append(puts, fmt.Sprintf("%s %d", r.Path, r.Status))
			}
		}
		refused, written := fmt.Sprintf("/nodes/%s/qemu/100/config 500", from), fmt.Sprintf("/nodes/%s/qemu/100/config 200", to)
		ok := len(puts) >= 2 && puts[len(puts)-1] == written
		for _, p := range puts[:max(len(puts)-1, 0)] {
			ok = ok && p == refused
		}
		if !ok {
			return fmt.Errorf("config writes %v, want %q (at least once), then %q", puts, refused, written)
		}
		return nil
	}
}

// (c) Destroy after HA moved the VM, while HA moves it once more (the
// migration starts as the HA resource goes): the disk and the VM wait for
// it and are destroyed on the node the VM ends up on.
func TestAccVM_haDestroyAfterMoves(t *testing.T) {
	t.Parallel()
	e := newHAVMEnv(t)
	a, b, c := e.Node(t, 0), e.Node(t, 1), e.Node(t, 2)
	e.Run(t, resource.TestCase{
		CheckDestroy: func(*terraform.State) error {
			if _, err := e.Client.FindVM(context.Background(), 100); err == nil {
				return fmt.Errorf("VM 100 still exists")
			}
			for _, n := range []string{a, b, c} {
				if vols := e.Sim.VMVolumes(n, "local-lvm", 100); len(vols) > 0 {
					return fmt.Errorf("volumes of VM 100 left on %s: %v", n, vols)
				}
			}
			return nil
		},
		Steps: []resource.TestStep{
			{Config: haVM100(e, a, 1024, "4G"), Check: vmIsOn(e, a, 1024)},
			{
				PreConfig:        haMoved(t, e, b),
				Config:           haVM100(e, a, 1024, "4G"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check:            vmIsOn(e, b, 1024),
			},
			{
				PreConfig: migrateOnRequest(e, c, "DELETE", `/cluster/ha/resources/vm:100`),
				Config:    haVM100(e, a, 1024, "4G"),
				Destroy:   true,
			},
		},
	})
}

// (d) The VM leaves HA after HA moved it, in a plan that also changes
// its memory: the plan leaves the VM where it runs, and so does the apply
// whichever runs first, the HA resource's destroy or the VM's update (the
// destroy does here). The next plan migrates it back to node, as for any
// VM not in HA.
func TestAccVM_haLeftAfterMove(t *testing.T) {
	t.Parallel()
	e := newHAVMEnv(t)
	a, b := e.Node(t, 0), e.Node(t, 1)
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		{Config: haVM100(e, a, 1024, ""), Check: vmIsOn(e, a, 1024)},
		{
			PreConfig: haMoved(t, e, b),
			Config:    e.Config(vm100HCL(a, 2048)),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(vmAddr, plancheck.ResourceActionUpdate),
				plancheck.ExpectResourceAction("pve_ha_resource.vm100", plancheck.ResourceActionDestroy),
			}},
			Check: resource.ComposeAggregateTestCheckFunc(
				vmIsOn(e, b, 2048),
				noMigrateRequests(e),
				resource.TestCheckResourceAttr(vmAddr, "node", a),
				resource.TestCheckResourceAttr(vmAddr, "current_node", b),
			),
			// The refresh finds the VM out of HA on b: node = b, and
			// the plan migrates it back to a.
			ExpectNonEmptyPlan: true,
		},
		{
			Config: e.Config(vm100HCL(a, 2048)),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(vmAddr, plancheck.ResourceActionUpdate),
			}},
			Check: resource.ComposeAggregateTestCheckFunc(
				vmIsOn(e, a, 2048),
				resource.TestCheckResourceAttr(vmAddr, "node", a),
				resource.TestCheckResourceAttr(vmAddr, "current_node", a),
			),
		},
	}})
}

// A disk grown while HA starts migrating its VM: the resize meets the
// migration, waits for it and grows the disk on the node the VM arrived
// on; the disk's later steps (the read back) go there too.
func TestAccVMDisk_haMigrationDuringResize(t *testing.T) {
	t.Parallel()
	e := newHAVMEnv(t)
	a, b := e.Node(t, 0), e.Node(t, 1)
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		{Config: haVM100(e, a, 1024, "4G"), Check: vmIsOn(e, a, 1024)},
		{
			PreConfig: migrateOnRequest(e, b, "PUT", `/nodes/[^/]+/qemu/100/resize`),
			Config:    haVM100(e, a, 1024, "8G"),
			Check: resource.ComposeAggregateTestCheckFunc(
				vmIsOn(e, b, 1024),
				resource.TestCheckResourceAttr("pve_vm_disk.scsi0", "size", "8G"),
				resource.TestCheckResourceAttr("pve_vm_disk.scsi0", "node", b),
				checkVM(e, func(_ string, cfg *pve.VMConfig, _ *pve.VMStatus) error {
					if d := cfg.Values["scsi0"]; !strings.Contains(d, "size=8G") {
						return fmt.Errorf("scsi0 = %s, want size=8G", d)
					}
					return nil
				}),
			),
		},
	}})
}
