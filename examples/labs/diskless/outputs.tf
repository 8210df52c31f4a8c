output "addresses" {
  description = "Each node's public and cluster-network address."
  value = {
    for node, a in module.lab.nodes : node => "${a.management} public, ${a.storage} cluster"
  }
}

output "cluster" {
  description = "The cluster and its members."
  value       = module.lab.cluster
}

output "ceph" {
  description = "Ceph: health, monitors, OSD ids by node:device, the pool."
  value       = module.lab.ceph
}

output "vm200" {
  description = "The diskless node's guest and its Ceph disk."
  value = {
    node = pve_vm.vm200.node
    disk = pve_vm_disk.vm200_scsi0.volume
  }
}
