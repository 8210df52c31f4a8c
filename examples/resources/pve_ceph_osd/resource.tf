# PVE lets only root@pam with a password create and destroy OSDs; API tokens
# are refused. A second provider block does that.
provider "pve" {
  alias           = "root"
  endpoint        = "https://z2g4a.lab.example:8006"
  username        = "root@pam"
  password        = var.root_password
  tls_fingerprint = var.tls_fingerprint
}

# The reference lab: an OSD on each of the two datacenter SSDs (Intel DC
# S3500/S4510, with power-loss protection) of every node. The consumer QLC
# NVMe drives (Intel 660p, Samsung PM981a) are left out on purpose: they
# managed about 800 4K sync-write IOPS and dragged the cluster down.
locals {
  osd_disks = {
    for pair in setproduct(["z2g4a", "z2g4b", "z2g4c"], ["/dev/sdb", "/dev/sdc"]) :
    "${pair[0]}_${trimprefix(pair[1], "/dev/")}" => { node = pair[0], device = pair[1] }
  }
}

# Refuse, at plan, a disk the provider knows has no power-loss protection.
data "pve_node_disks" "osd_nodes" {
  for_each = toset(["z2g4a", "z2g4b", "z2g4c"])
  node     = each.key
}

resource "pve_ceph_osd" "lab" {
  for_each = local.osd_disks
  provider = pve.root
  node     = each.value.node
  device   = each.value.device

  # Destroying drains the OSD first (mark out, wait until Ceph says it is
  # safe to destroy). Moving 480 GB at recovery speed can take a while.
  timeouts {
    delete = "3h"
  }

  lifecycle {
    precondition {
      condition = alltrue([
        for d in data.pve_node_disks.osd_nodes[each.value.node].disks :
        d.power_loss_protection != false if d.devpath == each.value.device
      ])
      error_message = "${each.value.device} on ${each.value.node} is a consumer drive without power-loss protection: measure its sync-write IOPS before making it an OSD."
    }
  }
}

# HDDs behind a datacenter NVMe for their RocksDB, in their own device class.
resource "pve_ceph_osd" "archive" {
  provider           = pve.root
  node               = "z2g4a"
  device             = "/dev/sdd"
  db_device          = "/dev/nvme1n1"
  db_size            = 60
  crush_device_class = "hdd"
}

# A disk whose OSD died with it: force skips the drain. Set it, apply, then
# remove the resource. Any PG whose other copies are missing loses data.
resource "pve_ceph_osd" "dead" {
  provider = pve.root
  node     = "z2g4c"
  device   = "/dev/sde"
  force    = true
}
