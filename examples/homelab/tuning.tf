# What the PVE API does not reach, over SSH: Ceph's client and OSD
# settings, the tuned profile and the storage NIC's ring buffers.

# librbd (QEMU) reads its settings from /etc/pve/ceph.conf when a guest
# opens a disk: writeback caching, writethrough until the guest flushes.
resource "pve_ceph_config" "client" {
  node   = var.founding_node
  who    = "client"
  target = "ceph_conf"
  settings = {
    rbd_cache                          = "true"
    rbd_cache_writethrough_until_flush = "true"
  }
  depends_on = [pve_ceph_cluster.lab]
}

# 8 GiB per OSD, discards passed to the SSDs. bdev_enable_discard is read
# when an OSD starts, so the OSDs restart one host at a time: noout on the
# host, restart, wait until Ceph says the next host's OSDs are ok to stop.
resource "pve_ceph_config" "osd" {
  node = var.founding_node
  who  = "osd"
  settings = {
    osd_memory_target   = "8589934592"
    bdev_enable_discard = "true"
  }
  apply = "rolling_restart"

  timeouts {
    create = "90m"
    update = "90m"
  }
  depends_on = [pve_ceph_osd.lab, pve_ceph_pool.ceph]
}

resource "pve_node_tuned_profile" "lab" {
  for_each   = local.nodes
  node       = each.key
  profile    = "latency-performance"
  depends_on = [pve_cluster_node.member]
}

# The ConnectX-3 storage port: rings of 2048 (4096 measured worse), applied
# now and at every boot by a unit the resource installs.
resource "pve_node_nic_ring" "storage" {
  for_each   = local.nodes
  node       = each.key
  iface      = "cx354ap1" # the storage network (pve_node_network_config.lab)
  rx         = 2048
  tx         = 2048
  depends_on = [pve_cluster_node.member, pve_node_network_config.lab]
}
