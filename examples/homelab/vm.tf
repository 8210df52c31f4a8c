# Guest storage: RBD on the Ceph pool (no monhost: the cluster's own Ceph),
# images only, through librbd so that the [client] rbd cache settings in
# tuning.tf apply (krbd would bypass them).
resource "pve_storage" "ceph" {
  storage = "ceph"
  type    = "rbd"
  pool    = pve_ceph_pool.ceph.name
  content = ["images"]
  krbd    = false
}

# VM 100 of the reference lab. Its disk is a resource of its own, so that no
# change to the VM can touch the disk and no disk change can replace the VM.
resource "pve_vm" "vm100" {
  node    = var.founding_node
  vmid    = 100
  name    = "vm100"
  agent   = true
  bios    = "ovmf"
  cores   = 4
  sockets = 1
  cpu     = "host"
  memory  = 8192
  numa    = false
  ostype  = "l26"
  # One controller per disk, so that every disk gets its own I/O thread.
  scsihw = "virtio-scsi-single"

  network = {
    net0 = { bridge = "bridge0" }
  }

  onboot  = true
  started = true

  depends_on = [pve_node_network_config.lab]
}

# scsi0: 32G on Ceph; write-back is safe here because ceph.conf has
# rbd_cache_writethrough_until_flush = true (tuning.tf). discard passes the
# guest's TRIM down, so the thin RBD image shrinks again.
resource "pve_vm_disk" "vm100_scsi0" {
  vm_id    = pve_vm.vm100.vmid
  slot     = "scsi0"
  storage  = pve_storage.ceph.storage
  size     = "32G"
  cache    = "writeback"
  iothread = true
  ssd      = true
  discard  = "on"
  # VM 100 boots from this disk (PVE adds disks attached after the VM's
  # creation to no boot order).
  boot = true

  # Cache or discard changes wait for a restart of VM 100; allow the
  # provider to reboot it for them.
  reboot_if_needed = true

  depends_on = [pve_ceph_config.client]
}

# The HA manager keeps VM 100 running, restarting it on another node when
# its node fails (shutdown policy migrate: cluster options in main.tf).
resource "pve_ha_resource" "vm100" {
  sid          = "vm:${pve_vm.vm100.vmid}"
  state        = "started"
  max_restart  = 1
  max_relocate = 1

  depends_on = [pve_vm_disk.vm100_scsi0]
}
