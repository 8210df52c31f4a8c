# Ceph, carefully: the daemons, a monitor and a manager on every node, and
# OSDs only on drives that can carry them.
#
# A drive qualifies when the provider does not know it to lack power-loss
# protection (pve_node_disks) and fio measures at least
# var.min_osd_sync_write_iops 4K sync writes per second on it
# (pve_node_disk_benchmark, on the bare device before it holds anything).
# In this lab none does: the WD Green SSDs (no power-loss protection)
# manage 65-80 IOPS, the SAS 15K HDDs about 190. Making OSDs of the HDDs
# alone is not a way out either: one host cannot hold size 3 with one copy
# per host. So the plan creates no OSD and no pool, and the outputs say
# why (outputs.tf). Replace the drives (or opt in per disk with
# var.accept_osd_disks, for a pool you can lose) and the next apply adds
# the OSDs and, once three hosts have one, the pool.

resource "pve_ceph_install" "lab" {
  for_each = local.nodes

  node       = each.key
  version    = "squid"
  repository = "no-subscription"
  depends_on = [pve_node_network_config.lab, pve_apt_repository.lab]
}

resource "pve_ceph_cluster" "lab" {
  node    = var.founding_node
  network = "10.10.10.0/24"

  depends_on = [pve_cluster_node.member, pve_ceph_install.lab]
}

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

# Read at plan time (no depends_on): the OSD set below is keyed by them.
data "pve_node_disks" "lab" {
  for_each = local.nodes
  node     = each.key
}

locals {
  # Every non-boot disk that is free or already holds an OSD, by
  # "node:/dev/sdX". The boot disk holds PVE (partitions, LVM) and is
  # never a candidate.
  disks = merge([
    for node, d in data.pve_node_disks.lab : {
      for disk in d.disks : "${node}:${disk.devpath}" => {
        node   = node
        device = disk.devpath
        model  = disk.model
        plp    = disk.power_loss_protection
        hdd    = disk.type == "hdd"
        osd    = disk.osd_id != null
      } if disk.used == null || disk.osd_id != null
    }
  ]...)
}

# 4K sync writes at queue depth 1 for 10 s on each free candidate. Only
# devices holding nothing are written to; an OSD's disk is skipped
# (if_in_use), so a later plan never writes over it.
data "pve_node_disk_benchmark" "candidate" {
  for_each = var.measure_disks ? local.disks : {}

  node             = each.value.node
  device           = each.value.device
  overwrite_device = true
  if_in_use        = "skip"
  runtime          = 10
  jobs             = 1
  block_size       = "4k"
}

locals {
  # The measured figures by "node:/dev/sdX" (not the skipped OSD disks).
  iops   = { for k, b in data.pve_node_disk_benchmark.candidate : k => b.write_iops if !b.skipped }
  p99_ms = { for k, b in data.pve_node_disk_benchmark.candidate : k => b.latency_p99_us / 1000 if !b.skipped }
  # Why each candidate may not become an OSD (empty: it may).
  refusals = {
    for k, d in local.disks : k => compact([
      d.plp == false ? "no power-loss protection" : "",
      d.hdd ? "a rotational disk (an HDD OSD needs its DB on a datacenter SSD, in a pool of its own)" : "",
      !var.measure_disks && d.plp != true ? "not measured, and not known to have power-loss protection" : "",
      lookup(local.iops, k, var.min_osd_sync_write_iops) < var.min_osd_sync_write_iops ? format(
        "%.0f sync-write IOPS, below %d", lookup(local.iops, k, 0), var.min_osd_sync_write_iops
      ) : "",
    ])
  }
  # An OSD stays an OSD (its disk is skipped by the benchmark from then on);
  # a free disk becomes one when nothing refuses it or the user opted in.
  osds = {
    for k, d in local.disks : k => d
    if d.osd || length(local.refusals[k]) == 0 || contains(var.accept_osd_disks, k)
  }
  osd_hosts = toset([for k, d in local.osds : d.node])
  # Size 3 with one copy per host needs OSDs on three hosts.
  pool_possible = length(local.osd_hosts) >= 3
}

resource "pve_ceph_osd" "lab" {
  for_each = local.osds
  node     = each.value.node
  device   = each.value.device

  timeouts {
    delete = "3h"
  }
  depends_on = [pve_ceph_manager.lab]
}

# The pool of the users' build log (vm-disks, 256 PGs, size 3 / min_size 2),
# only once three hosts have OSDs that can carry it.
resource "pve_ceph_pool" "vm_disks" {
  for_each = local.pool_possible ? toset(["vm-disks"]) : toset([])

  name              = each.key
  node              = var.founding_node
  size              = 3
  min_size          = 2
  application       = "rbd"
  pg_num            = 256
  pg_autoscale_mode = "warn"

  depends_on = [pve_ceph_osd.lab]
}

resource "pve_storage" "vm_disks" {
  for_each = pve_ceph_pool.vm_disks

  storage = each.value.name
  type    = "rbd"
  pool    = each.value.name
  content = ["images"]
  krbd    = false
}
