package qemu_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

// writesSince lists the requests after from that may change PVE (anything
// but GET and the login).
func writesSince(e *acctest.Env, from int) []string {
	var out []string
	for _, r := range e.Sim.Requests()[from:] {
		if r.Method == http.MethodGet || strings.HasPrefix(r.Path, "/access/ticket") {
			continue
		}
		out = append(out, r.Method+" "+r.Path)
	}
	return out
}

// vmWithBootDisk is VM 100 running, its boot disk scsi0 (a pve_vm_disk)
// and, with ha, an HA resource: the "VM with its disk and HA".
func vmWithBootDisk(e *acctest.Env, node string, diskExtra string, ha bool) string {
	cfg := vm100(node, vm100Net+"  started = true\n") + `
resource "pve_vm_disk" "boot" {
  vm_id   = pve_vm.vm100.vmid
  slot    = "scsi0"
  storage = "local-lvm"
  size    = "4G"
  boot    = true
` + diskExtra + `}
`
	if ha {
		cfg += `
resource "pve_ha_resource" "vm" {
  vmid  = pve_vm.vm100.vmid
  state = "started"
}
`
	}
	return e.Config(cfg)
}

// vmUnchanged checks that the refused plan wrote nothing and VM 100 still
// runs with its disk.
func vmUnchanged(t *testing.T, e *acctest.Env, from *int) func() {
	return func() {
		t.Helper()
		if w := writesSince(e, *from); len(w) != 0 {
			t.Fatalf("the refused plan wrote to PVE: %v", w)
		}
		cfg, _ := e.Sim.VMConfig(100)
		if !strings.Contains(cfg["scsi0"], "vm-100-disk-0") {
			t.Fatalf("VM 100 lost its disk: scsi0 = %q", cfg["scsi0"])
		}
	}
}

// The case: removing a running VM with its boot disk (kept as
// unusedN by default) and HA. Today HA is removed, the disk hot-unplugged,
// then the VM delete refused; the plan must refuse, nothing removed.
func TestAccVMPlan_destroyVMWithDetachedDiskRefused(t *testing.T) {
	t.Parallel()
	e := newVMEnv(t)
	n0 := e.Node(t, 0)
	from := 0
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		{Config: vmWithBootDisk(e, n0, "", true)},
		{
			PreConfig:   func() { from = len(e.Sim.Requests()) },
			Config:      e.Config(),
			ExpectError: errorRE(`(?s)Unable to Delete VM 100.*detaches its disk pve_vm_disk 100/scsi0.*delete_on_destroy = false.*Nothing is changed`),
		},
		{
			PreConfig: vmUnchanged(t, e, &from),
			Config:    vmWithBootDisk(e, n0, "", true), PlanOnly: true,
		},
		{
			// Deleting the disk with the VM is consistent: the post-test
			// destroy removes everything.
			Config: vmWithBootDisk(e, n0, "  delete_on_destroy = true\n", true),
		},
	}})
}

// A VM destroyed while a disk of it stays in the configuration (vm_id
// given as a number): PVE would delete the kept disk's volume with the VM.
func TestAccVMPlan_destroyVMKeepingDiskRefused(t *testing.T) {
	t.Parallel()
	e := newVMEnv(t)
	n0 := e.Node(t, 0)
	disk := diskHCL("data", 100, "scsi1", `storage = "local-lvm"`, `size = "2G"`, "depends_on = [pve_vm.vm100]")
	keptDisk := diskHCL("data", 100, "scsi1", `storage = "local-lvm"`, `size = "2G"`)
	from := 0
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		{Config: e.Config(vm100(n0, vm100Net), disk)},
		{
			PreConfig:   func() { from = len(e.Sim.Requests()) },
			Config:      e.Config(keptDisk),
			ExpectError: errorRE(`(?s)Unable to Delete VM 100.*keeps its disk pve_vm_disk 100/scsi1`),
		},
		{
			PreConfig: func() {
				if w := writesSince(e, from); len(w) != 0 {
					t.Fatalf("the refused plan wrote to PVE: %v", w)
				}
			},
			Config: e.Config(vm100(n0, vm100Net), diskHCL("data", 100, "scsi1", `storage = "local-lvm"`, `size = "2G"`,
				"delete_on_destroy = true", "depends_on = [pve_vm.vm100]")),
		},
	}})
}

// Detaching the boot disk of a running VM that stays would hot-unplug the
// disk the guest runs from: refused at plan.
func TestAccVMPlan_detachRunningBootDiskRefused(t *testing.T) {
	t.Parallel()
	e := newVMEnv(t)
	n0 := e.Node(t, 0)
	from := 0
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		{
			Config: vmWithBootDisk(e, n0, "  delete_on_destroy = true\n", false),
			Check: func(*terraform.State) error {
				st, err := e.Client.VMStatus(context.Background(), n0, 100)
				if err != nil || !st.Running() {
					return fmt.Errorf("VM 100 not running (%w)", err)
				}
				return nil
			},
		},
		{
			PreConfig:   func() { from = len(e.Sim.Requests()) },
			Config:      e.Config(vm100(n0, vm100Net+"  started = true\n")),
			ExpectError: errorRE(`(?s)Unable to Delete VM disk 100/scsi0.*boot disk of VM 100, which is running.*hot-unplug`),
		},
		{
			PreConfig: vmUnchanged(t, e, &from),
			Config:    vmWithBootDisk(e, n0, "  delete_on_destroy = true\n", false), PlanOnly: true,
		},
	}})
}

// A storage destroyed while a managed disk stays on it: refused at plan,
// nothing written.
func TestAccVMPlan_destroyStorageWithDiskRefused(t *testing.T) {
	t.Parallel()
	e := diskEnv(t, pvesim.Options{})
	node := e.Node(t, 0)
	const vmid = 9201
	createVM(t, e, node, vmid, false)
	storage := `
resource "pve_storage" "img" {
  storage = "acc-img"
  type    = "dir"
  path    = "/srv/acc-img"
  content = ["images"]
}
`
	from := 0
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		{Config: e.Config(storage, diskHCL("data", vmid, "scsi1", "storage = pve_storage.img.storage", `size = "1G"`))},
		{
			PreConfig:   func() { from = len(e.Sim.Requests()) },
			Config:      e.Config(diskHCL("data", vmid, "scsi1", `storage = "acc-img"`, `size = "1G"`)),
			ExpectError: errorRE(`(?s)Unable to Delete storage acc-img.*pve_vm_disk 9201/scsi1 keep`),
		},
		{
			PreConfig: func() {
				if w := writesSince(e, from); len(w) != 0 {
					t.Fatalf("the refused plan wrote to PVE: %v", w)
				}
			},
			Config: e.Config(storage, diskHCL("data", vmid, "scsi1", "storage = pve_storage.img.storage", `size = "1G"`, "delete_on_destroy = true")),
		},
	}})
}
