# Hyper-converged Ceph on the storage nodes: pveceph install, the init on
# the founding node, a monitor and a manager per storage node (three keep
# quorum while one is down), OSDs on the disks that pass the gate, one
# replicated RBD pool and its PVE storage, then ceph.conf and the
# configuration database.

resource "pve_ceph_install" "this" {
  for_each = local.storage_nodes

  node       = each.key
  version    = var.ceph.version
  repository = var.ceph.repository
  depends_on = [pve_node_network_config.this, pve_apt_repository.pve]
}

resource "pve_ceph_cluster" "this" {
  node            = var.founding_node
  network         = local.network_cidr[var.ceph.public_network]
  cluster_network = var.ceph.cluster_network == null ? null : local.network_cidr[var.ceph.cluster_network]

  depends_on = [pve_cluster_node.member, pve_node_network_config.this, pve_ceph_install.this]
}

# Monitors are created one at a time by the provider.
resource "pve_ceph_monitor" "this" {
  for_each   = local.storage_nodes
  node       = each.key
  depends_on = [pve_ceph_cluster.this]
}

resource "pve_ceph_manager" "this" {
  for_each   = local.storage_nodes
  node       = each.key
  depends_on = [pve_ceph_monitor.this]
}

# --- The OSD gate ---
#
# Every candidate disk, by "node:/dev/sdX". Both data sources are read at
# plan (they depend on nothing the apply changes), so a refusal stops the
# plan before anything is built.
locals {
  osd_candidates = merge([
    for name, n in local.storage_nodes : {
      for dev in n.osd_disks : "${name}:${dev}" => { node = name, device = dev }
    }
  ]...)
  measured = { for k, d in local.osd_candidates : k => d if !contains(keys(var.osd_gate.accept), k) }
}

data "pve_node_disks" "this" {
  for_each = { for name, n in local.storage_nodes : name => n if length(n.osd_disks) > 0 }
  node     = each.key
}

# 4K sync writes at queue depth 1 on each candidate not accepted by hand.
# fio writes over the device, so the data source refuses any disk that
# holds something (partitions, LVM, a filesystem, a mount, an OSD) and
# never runs fio on it; if_in_use = "skip" reports such a disk instead of
# failing, and the gate below tells an OSD (kept) from anything else
# (refused). Once a disk holds its OSD, later plans never write to it.
data "pve_node_disk_benchmark" "osd" {
  for_each = local.measured

  node             = each.value.node
  device           = each.value.device
  overwrite_device = true
  if_in_use        = "skip"
  runtime          = var.osd_gate.runtime
  jobs             = 1
  block_size       = "4k"
}

locals {
  # Whether PVE lists an OSD on each candidate's disk.
  holds_osd = {
    for k, d in local.osd_candidates : k => anytrue([
      for x in data.pve_node_disks.this[d.node].disks : x.devpath == d.device && x.osd_id != null
    ])
  }
  # Why each candidate may not become an OSD ("": it may).
  osd_refusal = {
    for k, d in local.osd_candidates : k => (
      contains(keys(var.osd_gate.accept), k) ? "" :
      data.pve_node_disk_benchmark.osd[k].skipped ? (
        local.holds_osd[k] ? "" : format(
          "%s on %s (%s) holds data (%s): it was not benchmarked and cannot become an OSD. Wipe it if its content may go, or remove it from osd_disks.",
          d.device, d.node, coalesce(data.pve_node_disk_benchmark.osd[k].model, "?"), data.pve_node_disk_benchmark.osd[k].in_use,
        )
      ) :
      coalesce(data.pve_node_disk_benchmark.osd[k].write_iops, 0) >= var.osd_gate.min_sync_write_iops ? "" : format(
        "%s on %s (%s) sustains %.0f sync-write IOPS (4K, queue depth 1, p99 %.1f ms); an OSD needs %d. Leave it out of osd_disks, or accept it in osd_gate.accept with a reason.",
        d.device, d.node, coalesce(data.pve_node_disk_benchmark.osd[k].model, "?"),
        coalesce(data.pve_node_disk_benchmark.osd[k].write_iops, 0), coalesce(data.pve_node_disk_benchmark.osd[k].latency_p99_us, 0) / 1000,
        var.osd_gate.min_sync_write_iops,
      )
    )
  }
}

# OSD create and destroy need root@pam. Destroying one drains it first: out,
# wait until Ceph says no placement group would lose a copy, then stop and
# destroy.
resource "pve_ceph_osd" "this" {
  for_each = local.osd_candidates
  node     = each.value.node
  device   = each.value.device

  timeouts {
    delete = var.ceph.osd_delete_timeout
  }

  lifecycle {
    precondition {
      condition     = local.osd_refusal[each.key] == ""
      error_message = local.osd_refusal[each.key]
    }
  }

  depends_on = [pve_ceph_manager.this]
}

# Guest disks: size copies on distinct hosts, I/O only while min_size are
# up. Destroying it is refused while deletion_protection is true.
resource "pve_ceph_pool" "this" {
  name                = var.ceph.pool.name
  node                = var.founding_node
  size                = var.ceph.pool.size
  min_size            = var.ceph.pool.min_size
  application         = "rbd"
  pg_num              = var.ceph.pool.pg_num
  pg_autoscale_mode   = var.ceph.pool.pg_autoscale_mode
  deletion_protection = var.ceph.pool.deletion_protection

  depends_on = [pve_ceph_osd.this]
}

# The pool as PVE storage on every node (no monhost: the cluster's own
# Ceph), images only; krbd off so that librbd reads the [client] settings
# of ceph.conf.
resource "pve_storage" "ceph" {
  storage = coalesce(var.ceph.pool.storage, pve_ceph_pool.this.name)
  type    = "rbd"
  pool    = pve_ceph_pool.this.name
  content = ["images"]
  krbd    = var.ceph.pool.krbd
}

# /etc/pve/ceph.conf sections, such as [client], which librbd (QEMU) reads
# when a guest opens a disk.
resource "pve_ceph_config" "conf" {
  for_each = var.ceph.conf

  node       = var.founding_node
  who        = each.key
  target     = "ceph_conf"
  settings   = each.value
  depends_on = [pve_ceph_cluster.this]
}

# Configuration-database sections, such as [osd]. Daemons that read a
# setting only when they start are restarted one host at a time (apply =
# rolling_restart): noout on the host, restart, wait until every placement
# group is active+clean again before the next host, so that the apply ends
# with Ceph settled (and the health output read after it stays as read).
resource "pve_ceph_config" "config_db" {
  for_each = var.ceph.config_db

  node                  = var.founding_node
  who                   = each.key
  settings              = each.value
  apply                 = startswith(each.key, "client") ? "none" : var.ceph.config_apply
  wait_for_active_clean = true

  timeouts {
    create = "90m"
    update = "90m"
  }
  depends_on = [pve_ceph_osd.this, pve_ceph_pool.this]
}
