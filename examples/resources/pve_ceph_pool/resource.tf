# The reference lab's pool for guest disks: three copies on three hosts,
# I/O only while at least two are available, and the PVE RBD storage "ceph"
# created with it. Ceph must be initialised, with monitors and OSDs, first.
resource "pve_ceph_pool" "ceph" {
  name         = "ceph"
  node         = "z2g4a"
  size         = 3
  min_size     = 2
  add_storages = true

  # 6 OSDs x 100 PGs / 3 copies = 200: 128 (or 256) placement groups, kept
  # fixed; the autoscaler only warns when they are off by a factor of 3.
  pg_num            = 128
  pg_autoscale_mode = "warn"
}

# A pool whose placement groups Ceph's autoscaler manages: pg_num stays
# unset (it is reported, never fought over); target_size_ratio tells the
# autoscaler how much of the cluster the pool will fill.
resource "pve_ceph_pool" "backups" {
  name              = "backups"
  node              = "z2g4a"
  pg_autoscale_mode = "on"
  pg_num_min        = 32
  target_size_ratio = 0.2
}

# Destroying a pool deletes its data, so it takes two applies: first
#   deletion_protection = false
# (plus force_delete = true if the guest disks on its storage may go too),
# then removing the resource.
