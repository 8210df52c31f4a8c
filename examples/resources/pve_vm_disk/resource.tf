# The reference lab's system disk of VM 100 (controller virtio-scsi-single):
# 32G on the Ceph RBD storage "ceph", write-back cache, its own I/O thread,
# presented as an SSD with discard passed through, so that the thin RBD
# image shrinks when the guest trims.
resource "pve_vm_disk" "vm100_system" {
  vm_id    = 100
  slot     = "scsi0"
  storage  = "ceph"
  size     = "32G"
  cache    = "writeback"
  iothread = true
  ssd      = true
  discard  = "on"
  # First in the VM's boot order.
  boot = true

  # Option changes a running VM cannot take live (cache, discard, ...) wait
  # for a restart; allow the provider to reboot VM 100 to apply them.
  reboot_if_needed = true
}

# A data disk on local-lvm with I/O limits, kept out of backups. Destroying
# this resource deletes the volume (the default only detaches it and keeps
# the volume as unusedN of the VM).
resource "pve_vm_disk" "vm100_scratch" {
  vm_id             = 100
  slot              = "scsi1"
  storage           = "local-lvm"
  size              = "100G"
  iothread          = true
  backup            = false
  mbps_wr           = 200
  iops_wr           = 5000
  delete_on_destroy = true
}
