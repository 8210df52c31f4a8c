output "management_addresses" {
  description = "Management address of each node."
  value       = { for node, a in module.lab.nodes : node => a.management }
}

output "corosync_addresses" {
  description = "Corosync link0 address of each node."
  value       = { for node, a in module.lab.nodes : node => a.corosync }
}

output "storage_addresses" {
  description = "Storage network address and MTU of each node."
  value       = { for node, a in module.lab.nodes : node => "${a.storage} mtu ${a.mtu}" }
}

output "cluster" {
  description = "The cluster, its members and the founding node's certificate fingerprint."
  value       = module.lab.cluster
}

output "ceph" {
  description = "Ceph: fsid, health, OSD ids by node:device, the VM pool."
  value       = module.lab.ceph
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
