output "addresses" {
  description = "Each node's management and storage-network address."
  value = {
    for node, a in module.lab.nodes : node => "${a.management} management, ${a.storage} storage"
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
