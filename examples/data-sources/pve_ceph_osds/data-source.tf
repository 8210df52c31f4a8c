data "pve_ceph_osds" "all" {}

# OSDs that are down or out: something to look at before destroying any other.
output "osds_not_up_and_in" {
  value = [for o in data.pve_ceph_osds.all.osds : "${o.name} on ${o.host}" if !(o.up && o.in)]
}

output "noout_set" {
  value = contains(data.pve_ceph_osds.all.flags, "noout")
}
