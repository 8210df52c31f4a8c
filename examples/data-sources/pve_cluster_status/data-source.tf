data "pve_cluster_status" "current" {}

output "quorate" {
  value = data.pve_cluster_status.current.quorate
}

output "corosync_links" {
  value = { for n in data.pve_cluster_status.current.nodes : n.name => n.links }
}
