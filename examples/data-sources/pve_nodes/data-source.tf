data "pve_nodes" "all" {}

output "node_fingerprints" {
  value = { for n in data.pve_nodes.all.nodes : n.name => n.fingerprint }
}
