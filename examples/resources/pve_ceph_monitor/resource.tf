# One monitor per node: three monitors keep quorum while one node is down.
# The provider creates them one after another (PVE cannot create the first
# monitors in parallel safely).
resource "pve_ceph_monitor" "mon" {
  for_each   = toset(["z2g4a", "z2g4b", "z2g4c"])
  node       = each.key
  depends_on = [pve_ceph_cluster.lab]
}

# A monitor on a node with two addresses in the public network needs the
# address spelled out:
#
# resource "pve_ceph_monitor" "z2g4d" {
#   node      = "z2g4d"
#   addresses = ["169.254.50.13"]
# }

output "ceph_monitors" {
  value = { for n, m in pve_ceph_monitor.mon : n => m.addresses }
}
