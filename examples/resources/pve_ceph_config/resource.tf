# The reference lab's Ceph settings.

# Client settings that QEMU/librbd read from /etc/pve/ceph.conf when a guest
# opens its disk: writeback caching, writethrough until the guest flushes.
# Other lines of the file stay as they are.
resource "pve_ceph_config" "client" {
  node   = "z2g4a"
  who    = "client"
  target = "ceph_conf"
  settings = {
    rbd_cache                          = "true"
    rbd_cache_writethrough_until_flush = "true"
  }
}

# OSD settings in the monitors' configuration database: 8 GiB of memory per
# OSD (applied at runtime) and discards to the SSDs (read when an OSD
# starts). rolling_restart restarts the OSDs one host at a time, each host
# only once ceph osd ok-to-stop passes for it, with noout set on that host
# while its OSDs restart.
resource "pve_ceph_config" "osd" {
  node = "z2g4a"
  who  = "osd"
  settings = {
    osd_memory_target   = "8589934592"
    bdev_enable_discard = "true"
  }
  apply = "rolling_restart"

  timeouts {
    create = "90m"
    update = "90m"
  }
}

# Daemons still running with values they read at start (empty after a
# rolling restart; with apply = "none" the list waits for the operator).
output "osds_pending_restart" {
  value = pve_ceph_config.osd.pending_restart
}
