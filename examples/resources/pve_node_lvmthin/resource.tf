# An LVM thin pool "fast" on the free 480 GB data SSD /dev/sdc of z2g4a,
# and the storage that puts guest disks on it.
resource "pve_node_lvmthin" "fast" {
  node   = "z2g4a"
  name   = "fast"
  device = "/dev/sdc"

  # Destroying the pool deletes its volumes and wipes the disk: set
  # destroy_data = true and apply that before removing the resource.
  destroy_data = false
}

resource "pve_storage" "fast" {
  storage  = "fast"
  type     = "lvmthin"
  vgname   = pve_node_lvmthin.fast.name
  thinpool = pve_node_lvmthin.fast.name
  nodes    = [pve_node_lvmthin.fast.node]
}
