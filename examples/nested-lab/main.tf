# A nested PVE lab: on one PVE host, one VM per node of a lab file
# (examples/labs), each with the lab node's NICs and disks, installed
# unattended by PVE's automated installer from a per-node answer file. The
# nested nodes then carry the acceptance tests (make testacc-nested) or
# examples/homelab, whose `nodes` variable is this configuration's `nodes`
# output. Guide: docs/guides/nested-lab.md.
#
# Two applies: the first creates the VMs powered off, since their disks
# are resources of their own and must exist before the installer looks
# for them; the second starts them and waits for their APIs:
#
#   terraform apply -var power_on=false && terraform apply

terraform {
  required_providers {
    pve = {
      source = "pvelab/pve"
    }
  }
}

# The host: the PVE node the nested nodes run on. The provider talks only
# to it; the nested nodes get their own provider in whatever uses them.
provider "pve" {
  endpoint        = var.host.endpoint
  api_token       = var.host.api_token
  username        = var.host.api_token == null ? "root@pam" : null
  password        = var.host.password
  tls_fingerprint = var.host.tls_fingerprint
}

locals {
  lab = jsondecode(file(coalesce(var.lab_file, "${path.module}/../labs/reference/lab.json")))

  # Every nested node: its lab facts, its VM id, and the locally
  # administered MAC of each NIC (02: prefix on the lab's MAC, so the
  # nested nodes never collide with the real lab on a shared LAN).
  nodes = {
    for i, n in local.lab.nodes : n.name => {
      index = i
      vmid  = var.vmid_base + i
      fqdn  = "${n.name}.${try(local.lab.domain, "lab.example")}"
      cidr  = lookup(var.management.addresses, n.name, n.management.cidr)
      # The management NIC first (net0, ens18 in the guest), then the
      # others in the lab's order.
      nics = concat(
        [for x in n.nics : x if x.name == n.management.nic],
        [for x in n.nics : x if x.name != n.management.nic],
      )
      # The boot disk first (ide0, the installer's sda), then the others.
      disks = concat(
        [for d in n.disks : d if try(d.boot, false)],
        [for d in n.disks : d if !try(d.boot, false)],
      )
      management_nic = n.management.nic
    }
  }
  gateway = coalesce(var.management.gateway, local.lab.nodes[0].management.gateway)
  dns     = coalesce(var.management.dns, local.gateway)

  # NIC i of a node: the management NIC on the management bridge, NICs of
  # 10 Gbit/s or more on the storage network, the rest on the corosync one.
  nic_bridge = {
    for name, n in local.nodes : name => [
      for i, x in n.nics : (
        i == 0 ? var.management.bridge :
        x.speed_mbps >= 10000 ? var.storage_network.bridge : var.corosync_network.bridge
      )
    ]
  }
}
