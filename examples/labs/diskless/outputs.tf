output "addresses" {
  description = "Each node's public and cluster-network address."
  value = {
    for node, net in pve_node_network_config.lab :
    node => "${net.interfaces["vmbr0"].cidr} public, ${net.interfaces["enp1s0f1"].cidr} cluster"
  }
}

output "cluster" {
  description = "The cluster and its members."
  value = {
    name    = pve_cluster.lab.name
    members = concat([pve_cluster.lab.node], [for m in pve_cluster_node.member : m.node])
  }
}

data "pve_ceph_status" "lab" {
  depends_on = [pve_ceph_pool.testpool]
}

output "ceph" {
  description = "Ceph: health, monitors, OSD ids by node, the pool."
  value = {
    fsid     = pve_ceph_cluster.lab.fsid
    health   = data.pve_ceph_status.lab.health
    monitors = sort(keys(pve_ceph_monitor.lab))
    osds     = { for k, o in pve_ceph_osd.lab : k => o.osd_id }
    pool     = pve_ceph_pool.testpool.name
  }
}

output "vm200" {
  description = "The diskless node's guest and its Ceph disk."
  value = {
    node = pve_vm.vm200.node
    disk = pve_vm_disk.vm200_scsi0.volume
  }
}
