package qemu_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

// The guests of the lab built by hand adopted with import blocks: VM 100
// running on the first node with scsi0 = ceph:vm-100-disk-1 and its first,
// detached disk left as unused0; VM 101 stopped on the second node. The
// plan imports and changes nothing, the apply writes nothing (unused0
// stays: pve_vm does not manage disks, pve_vm_disk only its slot), the
// next plan is empty (issue #12).
func TestAccVM_adoptHandBuilt(t *testing.T) {
	t.Parallel()
	if acctest.Live() {
		t.Skip("needs pvesim's hand-built lab")
	}
	e := acctest.HandBuilt(t)
	a, b := e.Node(t, 0), e.Node(t, 1)
	// VM 101's NIC has the MAC PVE chose when the GUI created it: the
	// user copies it from the VM's hardware tab.
	cfg, _ := e.Sim.VMConfig(101)
	mac := strings.TrimPrefix(strings.Split(cfg["net0"], ",")[0], "virtio=")
	hcl := fmt.Sprintf(`
resource "pve_vm" "vm100" {
  node    = %[1]q
  vmid    = 100
  agent   = true
  bios    = "ovmf"
  cores   = 4
  sockets = 1
  cpu     = "host"
  memory  = 8192
  numa    = false
  ostype  = "l26"
  scsihw  = "virtio-scsi-single"
  started = true
}

resource "pve_vm_disk" "vm100_system" {
  vm_id    = pve_vm.vm100.vmid
  slot     = "scsi0"
  storage  = "ceph"
  size     = "32G"
  cache    = "writeback"
  iothread = true
  ssd      = true
  discard  = "on"
  boot     = true
}

resource "pve_vm" "vm101" {
  node    = %[2]q
  vmid    = 101
  cores   = 2
  memory  = 2048
  ostype  = "l26"
  scsihw  = "virtio-scsi-single"
  started = false
  network = {
    net0 = { model = "virtio", bridge = "bridge0", firewall = true, mac_address = %[3]q }
  }
}

resource "pve_vm_disk" "vm101_system" {
  vm_id    = pve_vm.vm101.vmid
  slot     = "scsi0"
  storage  = "ceph"
  size     = "8G"
  iothread = true
  ssd      = true
  discard  = "on"
  boot     = true
}

import {
  to = pve_vm.vm100
  id = "100"
}

import {
  to = pve_vm_disk.vm100_system
  id = "100/scsi0"
}

import {
  to = pve_vm.vm101
  id = "101"
}

import {
  to = pve_vm_disk.vm101_system
  id = "101/scsi0"
}
`, a, b, mac)
	addrs := []string{"pve_vm.vm100", "pve_vm_disk.vm100_system", "pve_vm.vm101", "pve_vm_disk.vm101_system"}
	steps := e.AdoptSteps(e.Config(hcl), addrs...)
	steps = append(steps, acctest.ForgetStep(e.ProviderConfig(), addrs...))
	e.Run(t, resource.TestCase{Steps: steps})
}
