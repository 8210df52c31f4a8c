output "management_addresses" {
  description = "Management address of each node."
  value       = { for node, net in pve_node_network_config.lab : node => net.interfaces["bridge0"].cidr }
}

output "corosync_addresses" {
  description = "Corosync link0 address of each node."
  value       = { for node, net in pve_node_network_config.lab : node => net.interfaces["bridge0.60"].cidr }
}

output "storage_addresses" {
  description = "Storage network address and MTU of each node."
  value       = { for node, net in pve_node_network_config.lab : node => "${net.interfaces["cx354ap1"].cidr} mtu ${net.interfaces["cx354ap1"].mtu}" }
}

output "cluster" {
  description = "The cluster, its members and the founding node's certificate fingerprint."
  value = {
    name        = pve_cluster.lab.name
    members     = concat([pve_cluster.lab.node], [for m in pve_cluster_node.member : m.node])
    fingerprint = pve_cluster.lab.fingerprint
  }
}

data "pve_ceph_status" "lab" {
  depends_on = [pve_ceph_pool.ceph]
}

output "ceph" {
  description = "Ceph: fsid, health, OSD ids by node/device, the VM pool."
  value = {
    fsid   = pve_ceph_cluster.lab.fsid
    health = data.pve_ceph_status.lab.health
    checks = [for c in data.pve_ceph_status.lab.checks : "${c.name}: ${c.summary}"]
    osds   = { for k, o in pve_ceph_osd.lab : k => o.osd_id }
    pool   = pve_ceph_pool.ceph.name
  }
}

output "vm100" {
  description = "VM 100: where it runs, its disk's volume and what waits for a restart."
  value = {
    node            = pve_vm.vm100.node
    status          = pve_vm.vm100.status
    disk            = "${pve_vm_disk.vm100_scsi0.slot}: ${pve_vm_disk.vm100_scsi0.volume},cache=${pve_vm_disk.vm100_scsi0.cache},discard=${pve_vm_disk.vm100_scsi0.discard},iothread=${pve_vm_disk.vm100_scsi0.iothread ? 1 : 0},size=${pve_vm_disk.vm100_scsi0.size},ssd=${pve_vm_disk.vm100_scsi0.ssd ? 1 : 0}"
    boots_from_disk = pve_vm_disk.vm100_scsi0.boot
    pending_changes = pve_vm.vm100.pending_changes
    ha_state        = pve_ha_resource.vm100.state
  }
}
