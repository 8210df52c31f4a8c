package qemu_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

const (
	installerISO = "local:iso/proxmox-ve_9.1-1.iso"
	answerISO    = "local:iso/answer.iso"
)

// cdromVM is the nested lab's node VM: VM 100 with CD drives (cdrom, an
// HCL map body), boot order ide2 then its NIC, an IDE disk that reports
// a model and serial and a SCSI disk with vendor, product and wwn.
func cdromVM(e *acctest.Env, node, cdrom string) string {
	return e.Config(vm100(node, vm100Net+`
  cdrom         = {`+cdrom+`}
  boot_order    = ["ide2", "net0"]
  started       = true
  destroy_disks = true
`) + `
resource "pve_vm_disk" "osd" {
  vm_id             = pve_vm.vm100.vmid
  slot              = "ide0"
  storage           = "local-lvm"
  size              = "1G"
  model             = "Samsung SSD 870 EVO 1TB"
  serial            = "S6PTNZ0R123456"
  reboot_if_needed  = true
  delete_on_destroy = true
}

resource "pve_vm_disk" "system" {
  vm_id             = pve_vm.vm100.vmid
  slot              = "scsi0"
  storage           = "local-lvm"
  size              = "2G"
  vendor            = "ATA"
  product           = "ST4000NM0035"
  wwn               = "0x5000c500a1b2c3d4"
  delete_on_destroy = true
}
`)
}

// vmLifecycleWrites lists the requests since from that create, destroy,
// start or stop a VM: what a recreated VM would show.
func vmLifecycleWrites(e *acctest.Env, from int) []string {
	var out []string
	for _, w := range writesSince(e, from) {
		if strings.HasSuffix(w, "/qemu") || strings.HasPrefix(w, "DELETE ") || strings.Contains(w, "/status/") {
			out = append(out, w)
		}
	}
	return out
}

// The nested lab's VM: created running from an installer ISO (ide2 first
// in the boot order) with a second, empty CD drive; the ISO swapped on
// the running VM in place and a new CD drive added, whose entry PVE
// appends to the boot order and the provider takes out again; CD drives
// removed; disks that report a model, serial, vendor, product and wwn;
// a VM the GUI made with an empty CD drive adopted without a diff; bad
// slots and values and a slot used twice refused at plan.
func TestAccVM_cdrom(t *testing.T) {
	t.Parallel()
	e := newVMEnv(t)
	if e.Sim == nil {
		t.Skip("puts ISO images on the simulated storage")
	}
	n0 := e.Node(t, 0)
	for volid, size := range map[string]int64{installerISO: 1366 << 20, answerISO: 2 << 20} {
		if err := e.Sim.PutCDImage(n0, volid, size); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	c := e.RootClient(t)
	// The GUI's Create VM: an empty CD drive ide2.
	if _, err := c.AwaitVMTask(ctx, func() (string, error) {
		return c.CreateVM(ctx, n0, 101, pve.Params{"name": "gui", "ide2": "none,media=cdrom"})
	}); err != nil {
		t.Fatal(err)
	}
	from := 0
	adopt := e.AdoptSteps(cdromVM(e, n0, `ide2 = "`+answerISO+`"`)+fmt.Sprintf(`
resource "pve_vm" "vm101" {
  node = %q
  vmid = 101
  name = "gui"
}

import {
  to = pve_vm.vm101
  id = "101"
}
`, n0), "pve_vm.vm101")
	adopt[0].Check = resource.ComposeAggregateTestCheckFunc(adopt[0].Check,
		resource.TestCheckResourceAttr("pve_vm.vm101", "cdrom.%", "1"),
		resource.TestCheckResourceAttr("pve_vm.vm101", "cdrom.ide2", "none"))
	steps := []resource.TestStep{
		{
			Config: cdromVM(e, n0, `ide2 = "`+installerISO+`", sata0 = "none"`),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr(vmAddr, "cdrom.ide2", installerISO),
				resource.TestCheckResourceAttr(vmAddr, "cdrom.sata0", "none"),
				resource.TestCheckResourceAttr("pve_vm_disk.osd", "model", "Samsung SSD 870 EVO 1TB"),
				checkVM(e, func(_ string, cfg *pve.VMConfig, st *pve.VMStatus) error {
					v := cfg.Values
					if !st.Running() || v["ide2"] != installerISO+",media=cdrom,size=1366M" || v["sata0"] != "none,media=cdrom" ||
						v["boot"] != "order=ide2;net0" {
						return fmt.Errorf("PVE has %v, running %v", v, st.Running())
					}
					// Drive.pm's model is url-encoded in the config.
					if !strings.Contains(v["ide0"], ",model=Samsung%20SSD%20870%20EVO%201TB,") || !strings.Contains(v["ide0"], ",serial=S6PTNZ0R123456,") ||
						!strings.Contains(v["scsi0"], ",product=ST4000NM0035,") || !strings.Contains(v["scsi0"], ",vendor=ATA,") ||
						!strings.Contains(v["scsi0"], ",wwn=0x5000c500a1b2c3d4") {
						return fmt.Errorf("disks: ide0 %s, scsi0 %s", v["ide0"], v["scsi0"])
					}
					return nil
				}),
			),
		},
		{
			// The answer ISO in place of the installer, live; a new SATA
			// CD drive waits for the restart.
			PreConfig:        func() { from = len(e.Sim.Requests()) },
			Config:           cdromVM(e, n0, `ide2 = "`+answerISO+`", sata0 = "none", sata1 = "`+installerISO+`"`),
			ConfigPlanChecks: expectUpdate(vmAddr),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr(vmAddr, "pending_changes.#", "1"),
				resource.TestCheckResourceAttr(vmAddr, "pending_changes.0", "sata1"),
				func(*terraform.State) error {
					if w := vmLifecycleWrites(e, from); len(w) > 0 {
						return fmt.Errorf("swapping the ISO created, destroyed, started or stopped a VM: %v", w)
					}
					cur, err := vmConfig(e, n0, 100, true)
					if err != nil {
						return err
					}
					if cur.Values["ide2"] != answerISO+",media=cdrom,size=2M" || cur.Values["boot"] != "order=ide2;net0" {
						return fmt.Errorf("running config: ide2 %q boot %q", cur.Values["ide2"], cur.Values["boot"])
					}
					pend, _ := e.Sim.VMPending(100)
					if pend["sata1"] != installerISO+",media=cdrom,size=1366M" || pend["boot"] != "" {
						return fmt.Errorf("pending %v: want sata1, and no boot order change (PVE appended sata1, the provider wrote the planned order)", pend)
					}
					return nil
				},
			),
		},
		{
			// Removed from the map, removed from the VM: the pending one
			// at once, the running SATA drive at the next restart.
			Config:           cdromVM(e, n0, `ide2 = "`+answerISO+`"`),
			ConfigPlanChecks: expectUpdate(vmAddr),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr(vmAddr, "cdrom.%", "1"),
				checkVM(e, func(_ string, cfg *pve.VMConfig, _ *pve.VMStatus) error {
					if _, ok := cfg.Values["sata0"]; ok || cfg.Values["sata1"] != "" {
						return fmt.Errorf("sata0/sata1 still in the config as after the restart: %v", cfg.Values)
					}
					if _, dels := e.Sim.VMPending(100); strings.Join(dels, ",") != "sata0" {
						return fmt.Errorf("pending deletes %v, want sata0", dels)
					}
					return nil
				}),
			),
		},
	}
	steps = append(steps, adopt...)
	steps = append(steps,
		resource.TestStep{
			Config:      cdromVM(e, n0, `virtio1 = "none", ide3 = "local:images/vm-100-disk-0.qcow2"`),
			PlanOnly:    true,
			ExpectError: errorRE(`(?s)cdrom.*must be a CD drive slot: ide0-ide3.*must be none \(an empty drive\), cdrom`),
		},
		resource.TestStep{
			Config:      cdromVM(e, n0, `ide2 = "`+answerISO+`", ide0 = "none"`),
			PlanOnly:    true,
			ExpectError: errorRE(`Slot ide0 of VM 100 is both a CD drive and a disk`),
		},
	)
	e.Run(t, resource.TestCase{Steps: steps})
}
