# Ceph on the three storage nodes only: the daemons, a monitor and a
# manager each (three monitors keep quorum with one node down), one OSD per
# node on its Samsung 850 EVO, and the pool testpool the lab compares
# storage systems with. jpl-proxmox6 runs no Ceph daemon: PVE's Ceph client
# (on every node) and the cluster-wide /etc/pve/ceph.conf are all it needs
# to run guests from the pool.

resource "pve_ceph_install" "lab" {
  for_each = local.storage_nodes

  node       = each.key
  version    = "squid"
  repository = "no-subscription"
  depends_on = [pve_node_network_config.lab, pve_apt_repository.lab]
}

# Public network on the public ports, replication and recovery on the
# cluster network.
resource "pve_ceph_cluster" "lab" {
  node            = var.founding_node
  network         = "10.33.80.0/24"
  cluster_network = "192.168.100.0/24"

  depends_on = [pve_cluster_node.member, pve_ceph_install.lab]
}

resource "pve_ceph_monitor" "lab" {
  for_each   = local.storage_nodes
  node       = each.key
  depends_on = [pve_ceph_cluster.lab]
}

resource "pve_ceph_manager" "lab" {
  for_each   = local.storage_nodes
  node       = each.key
  depends_on = [pve_ceph_monitor.lab]
}

data "pve_node_disks" "lab" {
  for_each   = local.storage_nodes
  node       = each.key
  depends_on = [pve_cluster_node.member]
}

locals {
  # The Samsung 850 EVO of each storage node. It has no power-loss
  # protection (about 1,100 4K sync-write IOPS): acceptable for this lab's
  # throw-away comparison pool, not for guest disks anyone keeps. Set
  # accept_osds_without_plp to false and the precondition below refuses
  # it, as examples/homelab's does.
  osd_devices             = { for name, octet in local.storage_nodes : name => "/dev/sdb" }
  accept_osds_without_plp = true
}

resource "pve_ceph_osd" "lab" {
  for_each = local.osd_devices
  node     = each.key
  device   = each.value

  timeouts {
    delete = "3h"
  }

  lifecycle {
    precondition {
      condition = local.accept_osds_without_plp || alltrue([
        for d in data.pve_node_disks.lab[each.key].disks :
        d.power_loss_protection != false if d.devpath == each.value
      ])
      error_message = "${each.value} on ${each.key} has no power-loss protection: measure its sync-write IOPS before making it an OSD."
    }
  }

  depends_on = [pve_ceph_manager.lab]
}

# Three copies on three hosts, I/O only while two are up (never min_size 1).
resource "pve_ceph_pool" "testpool" {
  name              = "testpool"
  node              = var.founding_node
  size              = 3
  min_size          = 2
  application       = "rbd"
  pg_num            = 128
  pg_autoscale_mode = "warn"

  depends_on = [pve_ceph_osd.lab]
}

# The pool as PVE storage on every node, the diskless one included.
resource "pve_storage" "testpool" {
  storage = "testpool"
  type    = "rbd"
  pool    = pve_ceph_pool.testpool.name
  content = ["images"]
  krbd    = false
}
