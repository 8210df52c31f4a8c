# VM 100's settings, wherever it runs (HA may have moved it).
data "pve_vm" "vm100" {
  vmid = 100
}

output "vm100_node" {
  value = data.pve_vm.vm100.node
}

output "vm100_disks" {
  value = data.pve_vm.vm100.disks
}
