# Address and certificate fingerprint of the member to join through, for a
# join made outside Terraform (pve_cluster_node reads this itself).
data "pve_cluster_join_info" "lab" {
  node = "z2g4a"
}

output "join_through" {
  value = [for n in data.pve_cluster_join_info.lab.nodes : { address = n.address, fingerprint = n.fingerprint } if n.name == "z2g4a"]
}
