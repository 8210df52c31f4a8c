# Storages that can hold VM disks, as z2g4a sees them, and the one with
# the most room.
data "pve_storages" "images" {
  node    = "z2g4a"
  content = "images"
}

locals {
  active_images = [for s in data.pve_storages.images.storages : s if s.active]
  roomiest      = [for s in local.active_images : s.storage if s.avail == max([for x in local.active_images : x.avail]...)][0]
}

output "roomiest_storage" {
  value = local.roomiest
}
