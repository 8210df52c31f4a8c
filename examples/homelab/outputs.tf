output "management_addresses" {
  description = "Management address of each node."
  value       = { for node, nic in pve_node_network.bridge0 : node => nic.cidr }
}

output "corosync_addresses" {
  description = "Corosync link0 address of each node."
  value       = { for node, nic in pve_node_network.corosync : node => nic.cidr }
}

output "storage_addresses" {
  description = "Storage network address and MTU of each node."
  value       = { for node, nic in pve_node_network.storage : node => "${nic.cidr} mtu ${nic.mtu}" }
}

output "cluster" {
  description = "The cluster, its members and the founding node's certificate fingerprint."
  value = {
    name        = pve_cluster.lab.name
    members     = concat([pve_cluster.lab.node], [for m in pve_cluster_node.member : m.node])
    fingerprint = pve_cluster.lab.fingerprint
  }
}
