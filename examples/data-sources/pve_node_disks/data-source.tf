data "pve_node_disks" "z2g4a" {
  node = "z2g4a"
}

# Disks that may become OSDs, and why the others may not.
output "osd_candidates" {
  value = [for d in data.pve_node_disks.z2g4a.disks : d.devpath if d.suitable_for_osd]
}

output "not_for_osds" {
  value = {
    for d in data.pve_node_disks.z2g4a.disks :
    d.devpath => d.unsuitable_reasons if !d.suitable_for_osd
  }
}
