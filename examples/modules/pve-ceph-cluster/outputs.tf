output "nodes" {
  description = "Each node's API endpoint and its addresses (with prefix) on the management, corosync and storage networks, once configured."
  value = {
    for name, n in var.nodes : name => {
      endpoint   = n.endpoint
      management = pve_node_network_config.this[name].interfaces[local.ifname.management].cidr
      corosync   = local.ifname.corosync == null ? null : pve_node_network_config.this[name].interfaces[local.ifname.corosync].cidr
      storage    = pve_node_network_config.this[name].interfaces[local.storage_if[name]].cidr
      mtu        = pve_node_network_config.this[name].interfaces[local.storage_if[name]].mtu
    }
  }
}

output "bridge" {
  description = "The management and guest bridge every node has, for guests' network devices (known once the nodes' networks are configured)."
  value       = var.network.bridge
  depends_on  = [pve_node_network_config.this]
}

output "cluster" {
  description = "The cluster: its name, its members (the founding node first) and the founding node's certificate fingerprint."
  value = {
    name        = pve_cluster.this.name
    members     = concat([pve_cluster.this.node], [for m in pve_cluster_node.member : m.node])
    fingerprint = pve_cluster.this.fingerprint
  }
}

output "members" {
  description = "Every node's name once it is in the cluster (known at plan): place guests on a node with it, so that they wait for its join."
  value = merge(
    { (var.founding_node) = var.founding_node },
    { for name, m in pve_cluster_node.member : name => m.node },
  )
  depends_on = [pve_cluster.this]
}

output "storage" {
  description = "The PVE storage id of the Ceph pool, for guest disks (known once ceph.conf's sections are written, such as [client] for librbd)."
  value       = pve_storage.ceph.storage
  depends_on  = [pve_ceph_config.conf]
}

data "pve_ceph_status" "this" {
  # Read once Ceph has settled: after the pool, the OSDs and both rolling restarts, so that a
  # second plan does not find the health the restarts left on the way.
  depends_on = [pve_ceph_pool.this, pve_ceph_osd.this, pve_ceph_config.conf, pve_ceph_config.config_db]
}

output "ceph" {
  description = "Ceph: fsid, health and its checks, monitors, OSD ids by \"node:/dev/sdX\", the pool and its storage."
  value = {
    fsid     = pve_ceph_cluster.this.fsid
    health   = data.pve_ceph_status.this.health
    checks   = [for c in data.pve_ceph_status.this.checks : "${c.name}: ${c.summary}"]
    monitors = sort(keys(pve_ceph_monitor.this))
    osds     = { for k, o in pve_ceph_osd.this : k => o.osd_id }
    pool     = pve_ceph_pool.this.name
    storage  = pve_storage.ceph.storage
  }
}
