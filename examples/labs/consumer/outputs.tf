output "addresses" {
  description = "Each node's management and storage-network address."
  value = {
    for node, net in pve_node_network_config.lab :
    node => "${net.interfaces["vmbr0"].cidr} management, ${net.interfaces["bond0"].cidr} storage"
  }
}

output "cluster" {
  description = "The cluster and its members."
  value = {
    name    = pve_cluster.lab.name
    members = concat([pve_cluster.lab.node], [for m in pve_cluster_node.member : m.node])
  }
}

# An OSD's disk is not measured again (the benchmark skips disks in use),
# so its line does not show the figures that let it in: the output stays
# the same from one plan to the next.
output "disks" {
  description = "Each candidate OSD disk: an OSD, or its measured 4K sync-write IOPS and why it was refused."
  value = {
    for k, d in local.disks : k => contains(keys(local.osds), k) ? format("%s: OSD%s", d.model,
      contains(var.accept_osd_disks, k) ? " (accepted by accept_osd_disks)" : "") : format("%s, %s: refused (%s)", d.model,
      contains(keys(local.iops), k) ? format("%.0f sync-write IOPS (p99 %.1f ms)", local.iops[k], local.p99_ms[k]) : "not measured",
      join("; ", local.refusals[k]),
    )
  }
}

output "ceph_pool" {
  description = "The VM pool, or why there is none."
  value = local.pool_possible ? "vm-disks (size 3, min_size 2)" : format(
    "none: a size-3 pool needs OSDs on three hosts, and %s fit drives (see the disks output)",
    length(local.osd_hosts) == 0 ? "no host has" : "only ${join(", ", sort(local.osd_hosts))} have"
  )
}
