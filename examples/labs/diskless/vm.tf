# What the diskless node is for: a guest on jpl-proxmox6 whose disk lives
# on the storage nodes' Ceph (testpool).
resource "pve_vm" "vm200" {
  node    = module.lab.members["jpl-proxmox6"]
  vmid    = 200
  name    = "vm200"
  cores   = 4
  memory  = 8192
  cpu     = "host"
  ostype  = "l26"
  scsihw  = "virtio-scsi-single"
  network = { net0 = { bridge = module.lab.bridge } }
  started = true
}

resource "pve_vm_disk" "vm200_scsi0" {
  vm_id    = pve_vm.vm200.vmid
  slot     = "scsi0"
  storage  = module.lab.storage
  size     = "32G"
  iothread = true
  ssd      = true
  discard  = "on"
  # VM 200 boots from this disk; PVE keeps the boot order of a running VM
  # pending, so the provider may restart it for that.
  boot             = true
  reboot_if_needed = true
}
