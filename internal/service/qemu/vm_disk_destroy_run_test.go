package qemu_test

import (
	"os"
	"strings"
	"testing"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

func TestMain(m *testing.M) {
	code := m.Run()
	acctest.RemoveLabProvider()
	os.Exit(code)
}

// destroyRunConfig is a VM with one disk of var.size, for a lab run
// (real CLI, provider binary) on the reference lab's clustered nodes.
const destroyRunConfig = `
terraform {
  required_providers {
    pve = { source = "pvelab/pve" }
  }
}

variable "nodes" {
  type = map(object({
    endpoint        = string
    password        = string
    tls_fingerprint = string
  }))
  sensitive = true
}

variable "size" {
  type = string
}

provider "pve" {
  endpoint        = var.nodes["z2g4a"].endpoint
  username        = "root@pam"
  password        = var.nodes["z2g4a"].password
  tls_fingerprint = var.nodes["z2g4a"].tls_fingerprint
}

resource "pve_vm" "this" {
  node = "z2g4a"
  vmid = 100
  name = "destroy-run"
}

resource "pve_vm_disk" "scsi0" {
  vm_id             = pve_vm.this.vmid
  slot              = "scsi0"
  storage           = "local-lvm"
  size              = var.size
  delete_on_destroy = true
}
`

// Issue #13 item 7 with the real CLI: the provider is a child of
// terraform, and only its command line tells a destroy run (destroy, or
// apply -destroy) from a plan. After a refused shrink the configuration
// asks for the smaller disk; the destroy's pre-destroy plan must not fail
// with the refusal, and the objects must be gone.
func TestAccVMDisk_destroyRunAfterRefusedShrink(t *testing.T) {
	lab := acctest.NewLab(t, acctest.LabOptions{Start: pvesim.StartCluster, ConfigDir: "-",
		Files: map[string]string{"main.tf": destroyRunConfig}})
	for _, destroy := range [][]string{
		{"destroy", "-auto-approve", "-input=false"},
		{"apply", "-destroy", "-auto-approve", "-input=false"},
	} {
		if r := lab.Apply("-var", "size=8G"); r.ExitCode != 0 {
			t.Fatalf("apply: %s", r.Errors())
		}
		if cfg, _ := lab.Sim.VMConfig(100); cfg["scsi0"] == "" {
			t.Fatalf("VM 100 has no scsi0 after the apply: %v", cfg)
		}
		if r := lab.Plan("-var", "size=4G"); r.ExitCode != 1 || !strings.Contains(r.Errors(), "Cannot change size of a VM disk") {
			t.Fatalf("plan of a shrink: exit %d, want 1 with \"Cannot change size of a VM disk\":\n%s", r.ExitCode, r.Output)
		}
		r := lab.Run(append(destroy, "-var", "size=4G")...)
		if r.ExitCode != 0 {
			t.Fatalf("%s after the refused shrink: exit %d\n%s", strings.Join(destroy[:2], " "), r.ExitCode, r.Errors())
		}
		if cfg, _ := lab.Sim.VMConfig(100); cfg != nil {
			t.Errorf("%s: VM 100 still exists: %v", strings.Join(destroy[:2], " "), cfg)
		}
		if rs := lab.State(); len(rs) != 0 {
			t.Errorf("%s: %d resources left in state", strings.Join(destroy[:2], " "), len(rs))
		}
	}
}
