# VM 100 of the reference lab, on the Ceph pool's storage. Its disk is a
# resource of its own, so that no change to the VM can touch the disk and
# no disk change can replace the VM.
resource "pve_vm" "vm100" {
  node    = module.lab.members[var.founding_node]
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
    net0 = { bridge = module.lab.bridge }
  }

  onboot  = true
  started = true
}

# scsi0: 32G on Ceph; write-back is safe here because ceph.conf has
# rbd_cache_writethrough_until_flush = true (main.tf). discard passes the
# guest's TRIM down, so the thin RBD image shrinks again.
resource "pve_vm_disk" "vm100_scsi0" {
  vm_id    = pve_vm.vm100.vmid
  slot     = "scsi0"
  storage  = module.lab.storage
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

  # Destroying the disk deletes its volume only once var.deletion_protection
  # is false (applied first); until then a destroy run is refused.
  delete_on_destroy = !var.deletion_protection
}

# The HA manager keeps VM 100 running, restarting it on another node when
# its node fails (shutdown policy migrate: the module's cluster options).
resource "pve_ha_resource" "vm100" {
  sid          = "vm:${pve_vm.vm100.vmid}"
  state        = "started"
  max_restart  = 1
  max_relocate = 1

  depends_on = [pve_vm_disk.vm100_scsi0]
}
