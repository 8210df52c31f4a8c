# The physical NICs of a node, for example to pick bond slaves.
data "pve_node_networks" "nics" {
  node = "z2g4a"
  type = "eth"
}

output "nics" {
  value = [for nic in data.pve_node_networks.nics.interfaces : nic.iface]
}
