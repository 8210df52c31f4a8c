# Hyper-converged Ceph on the storage network, once the cluster is formed:
# a monitor and a manager per node, an OSD on each datacenter SSD, and one
# replicated RBD pool (size 3, min_size 2) with its PVE storage.
#
# Not the consumer QLC NVMe: without power-loss protection its sync writes
# (what Ceph's journal does all day) are a small fraction of the DC SSDs'.
# The precondition below refuses any OSD disk the provider knows lacks it.

# A fresh install has the Ceph client only: pveceph install (GUI: Ceph >
# Install Ceph) puts Squid from the no-subscription repository on every
# node, over SSH, after the node's network cutover. Nodes that have Squid
# already are adopted without running anything.
resource "pve_ceph_install" "lab" {
  for_each = local.nodes

  node       = each.key
  version    = "squid"
  repository = "no-subscription"
  depends_on = [pve_node_network_config.lab, pve_apt_repository.lab]
}

resource "pve_ceph_cluster" "lab" {
  node    = var.founding_node
  network = "169.254.50.0/24"

  depends_on = [pve_cluster_node.member, pve_node_network_config.lab, pve_ceph_install.lab]
}

# Monitors are created one at a time by the provider; three keep quorum
# while one node is down.
resource "pve_ceph_monitor" "lab" {
  for_each   = local.nodes
  node       = each.key
  depends_on = [pve_ceph_cluster.lab]
}

resource "pve_ceph_manager" "lab" {
  for_each   = local.nodes
  node       = each.key
  depends_on = [pve_ceph_monitor.lab]
}

data "pve_node_disks" "lab" {
  for_each   = local.nodes
  node       = each.key
  depends_on = [pve_cluster_node.member]
}

locals {
  osd_devices = ["/dev/sdb", "/dev/sdc"] # the two 480 GB Intel DC SSDs
  osds = {
    for pair in setproduct(keys(local.nodes), local.osd_devices) :
    "${pair[0]}/${trimprefix(pair[1], "/dev/")}" => { node = pair[0], device = pair[1] }
  }
}

# OSD create and destroy need root@pam (this provider logs in as root@pam).
# Destroying one drains it first: out, wait until Ceph says no placement
# group would lose a copy, then stop and destroy.
resource "pve_ceph_osd" "lab" {
  for_each = local.osds
  node     = each.value.node
  device   = each.value.device

  timeouts {
    delete = "3h"
  }

  lifecycle {
    precondition {
      condition = alltrue([
        for d in data.pve_node_disks.lab[each.value.node].disks :
        d.power_loss_protection != false if d.devpath == each.value.device
      ])
      error_message = "${each.value.device} on ${each.value.node} has no power-loss protection: measure its sync-write IOPS before making it an OSD."
    }
  }

  depends_on = [pve_ceph_manager.lab]
}

# Guest disks: three copies on three hosts, I/O only while two are up.
# Its PVE storage is pve_storage.ceph (vm.tf).
resource "pve_ceph_pool" "ceph" {
  name              = "ceph"
  node              = var.founding_node
  size              = 3
  min_size          = 2
  application       = "rbd"
  pg_num            = 128
  pg_autoscale_mode = "warn"

  depends_on = [pve_ceph_osd.lab]
}
