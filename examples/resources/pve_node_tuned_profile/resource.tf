# The reference lab runs every node with the latency-performance profile.
resource "pve_node_tuned_profile" "this" {
  for_each = toset(["z2g4a", "z2g4b", "z2g4c"])

  node    = each.key
  profile = "latency-performance"
}
