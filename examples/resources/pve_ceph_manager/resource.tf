# One manager per monitor node: one is active, the others stand by. The
# first monitor already brought a manager on its node; the resource for
# that node adopts it.
resource "pve_ceph_manager" "mgr" {
  for_each   = toset(["z2g4a", "z2g4b", "z2g4c"])
  node       = each.key
  depends_on = [pve_ceph_monitor.mon]
}
