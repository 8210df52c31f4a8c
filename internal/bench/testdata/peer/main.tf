# The peer comparison's work (issue #14): on each of three clustered nodes a
# bond, a VLAN-aware bridge over it and a VLAN on the bridge, the cluster's
# options, and 30 stopped VMs with two SCSI disks each. The same work was
# measured with bpg/proxmox v0.111: apply 317 requests, no-change plan 190.

terraform {
  required_providers {
    pve = {
      source = "pvelab/pve"
    }
  }
}

provider "pve" {
  endpoint        = var.nodes[var.founding_node].endpoint
  username        = "root@pam"
  password        = var.nodes[var.founding_node].password
  tls_fingerprint = var.nodes[var.founding_node].tls_fingerprint
}

locals {
  nodes = { z2g4a = 10, z2g4b = 11, z2g4c = 12 }
  vms   = { for i in range(30) : tostring(200 + i) => element(keys(local.nodes), i % 3) }
}

resource "pve_node_network" "bond" {
  for_each  = local.nodes
  node      = each.key
  iface     = "bond1"
  type      = "bond"
  slaves    = ["cx354ap2", "i219"]
  bond_mode = "active-backup"
}

resource "pve_node_network" "bridge" {
  for_each          = local.nodes
  node              = each.key
  iface             = "vmbr1"
  type              = "bridge"
  bridge_ports      = [pve_node_network.bond[each.key].iface]
  bridge_vlan_aware = true
}

resource "pve_node_network" "vlan" {
  for_each   = local.nodes
  node       = each.key
  iface      = "vmbr1.70"
  type       = "vlan"
  cidr       = "10.70.0.${each.value}/24"
  depends_on = [pve_node_network.bridge]
}

resource "pve_cluster_options" "this" {
  keyboard   = "de"
  console    = "xtermjs"
  mac_prefix = "BC:24:11:0"
  migration = {
    type = "secure"
  }
}

resource "pve_vm" "peer" {
  for_each = local.vms
  node     = each.value
  vmid     = tonumber(each.key)
  name     = "peer-${each.key}"
  cores    = 2
  memory   = 2048
  ostype   = "l26"
  scsihw   = "virtio-scsi-single"
  network = {
    net0 = { bridge = "vmbr0" }
  }
  started = false
}

resource "pve_vm_disk" "system" {
  for_each = local.vms
  vm_id    = pve_vm.peer[each.key].vmid
  slot     = "scsi0"
  storage  = "local-lvm"
  size     = "8G"
  iothread = true
}

resource "pve_vm_disk" "data" {
  for_each = local.vms
  vm_id    = pve_vm.peer[each.key].vmid
  slot     = "scsi1"
  storage  = "local-lvm"
  size     = "16G"
  iothread = true
}
