# Maintenance window on one node: noout keeps Ceph from marking the node's
# OSDs out while it reboots, nobackfill and norebalance stop a backfill storm
# from starving the guests. While they are set Ceph reports HEALTH_WARN
# (OSDMAP_FLAGS) and does not restore full redundancy: remove them (or set
# them to false) when the maintenance is over. Flags not listed here, such as
# an operator's noscrub, are left alone.
resource "pve_ceph_flags" "this" {
  noout       = true
  nobackfill  = true
  norebalance = true
}
