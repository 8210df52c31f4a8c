# Measure the reference lab's OSD disks before Ceph gets them: 4 KiB sync
# writes at queue depth 1, what BlueStore asks of a drive for every client
# write. The datacenter SSDs (Intel DC S3500/S4510, with power-loss
# protection) reach thousands of IOPS. Put a consumer QLC NVMe drive
# (/dev/nvme0n1: Intel 660p, Samsung PM981a) in the list and the plan stops:
#
#   /dev/nvme0n1 on z2g4a (INTEL SSDPEKNW512G8) sustains 773 sync-write IOPS
#   (p99 5.3 ms); an OSD needs 2000. A drive without power-loss protection
#   cannot: leave it out.
#
# The benchmark writes over the disks: only unused disks are measured
# (overwrite_device confirms that their content may go). Once a disk holds
# its OSD, if_in_use = "skip" leaves it alone, so later plans stay valid and
# never write to it again.
locals {
  osd_disks = {
    for pair in setproduct(["z2g4a", "z2g4b", "z2g4c"], ["/dev/sdb", "/dev/sdc"]) :
    "${pair[0]}_${trimprefix(pair[1], "/dev/")}" => { node = pair[0], device = pair[1] }
  }
  # Sync-write IOPS a drive must sustain to become an OSD.
  min_osd_iops = 2000
}

data "pve_node_disk_benchmark" "osd" {
  for_each = local.osd_disks

  node             = each.value.node
  device           = each.value.device
  overwrite_device = true
  if_in_use        = "skip"
  runtime          = 30
  jobs             = 1
  block_size       = "4k"
}

# The gate sits on the OSD (pve_ceph_osd, with a root@pam provider):
#
#   resource "pve_ceph_osd" "lab" {
#     for_each = local.osd_disks
#     provider = pve.root
#     node     = each.value.node
#     device   = each.value.device
#
#     lifecycle {
#       precondition {
#         condition     = data.pve_node_disk_benchmark.osd[each.key].skipped || coalesce(data.pve_node_disk_benchmark.osd[each.key].write_iops, 0) >= local.min_osd_iops
#         error_message = "..." # as below
#       }
#     }
#   }
#
# skipped is true once the OSD holds the disk; coalesce() keeps the condition
# valid then, as write_iops is null. Here a terraform_data stands in for it.
resource "terraform_data" "osd_gate" {
  for_each = local.osd_disks

  input = each.value

  lifecycle {
    precondition {
      condition = (
        data.pve_node_disk_benchmark.osd[each.key].skipped ||
        coalesce(data.pve_node_disk_benchmark.osd[each.key].write_iops, 0) >= local.min_osd_iops
      )
      error_message = format(
        "%s on %s (%s) sustains %d sync-write IOPS (p99 %.1f ms); an OSD needs %d. A drive without power-loss protection cannot: leave it out.",
        each.value.device, each.value.node, data.pve_node_disk_benchmark.osd[each.key].model,
        floor(coalesce(data.pve_node_disk_benchmark.osd[each.key].write_iops, 0)),
        coalesce(data.pve_node_disk_benchmark.osd[each.key].latency_p99_us, 0) / 1000, local.min_osd_iops,
      )
    }
  }
}

# A drive that carries data already is measured through a scratch file
# (created in the directory and removed afterwards).
data "pve_node_disk_benchmark" "boot_ssd" {
  node      = "z2g4a"
  directory = "/var/lib/vz"
  runtime   = 10
}

output "sync_write_iops" {
  value = merge(
    { for k, b in data.pve_node_disk_benchmark.osd : k => b.skipped ? "in use: ${b.in_use}" : format("%.0f IOPS, p99 %.0f us", b.write_iops, b.latency_p99_us) },
    { "z2g4a_local" = format("%.0f IOPS on %s", data.pve_node_disk_benchmark.boot_ssd.write_iops, data.pve_node_disk_benchmark.boot_ssd.filesystem) },
  )
}
