# The reference lab's VM 100 without its disk: the disk (scsi0 on the Ceph
# RBD storage, writeback, iothread, ssd, discard, 32G) is a pve_vm_disk of
# its own, so changing or moving it never touches the VM.
resource "pve_vm" "vm100" {
  node    = "z2g4a"
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
  # One controller per disk: iothread on SCSI disks needs it.
  scsihw = "virtio-scsi-single"

  network = {
    net0 = { bridge = "bridge0", tag = 20 }
  }
  # The boot disk is set by its pve_vm_disk (boot = true): a boot_order
  # here could not name scsi0 before that disk exists.

  # An empty CD drive. An installer goes in with
  # ide2 = "local:iso/proxmox-ve_9.1-1.iso" (swapped in place, also while
  # the VM runs); PVE's boot order has the CD drive after the boot disk,
  # so the VM boots the installer while that disk is still empty.
  cdrom = {
    ide2 = "none"
  }

  tags    = ["lab", "ceph"]
  onboot  = true
  started = true

  # PVE refuses to destroy a protected VM; set it to false and apply first.
  protection = true
}

# Changing node migrates the VM (live while it runs). Changes a running VM
# cannot take (cores, bios, cpu, machine, ...) are listed in
# pending_changes until the VM restarts.
output "vm100_pending" {
  value = pve_vm.vm100.pending_changes
}
