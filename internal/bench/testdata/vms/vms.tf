# The large-plan scenario's guests, beside examples/homelab: var.bench_vms
# stopped VMs with two disks each on local-lvm, spread over the nodes once
# they are in the cluster (PVE refuses to join a node that has guests:
# module.lab.members gives a node's name once it has joined).

variable "bench_vms" {
  type    = number
  default = 200
}

locals {
  bench_vms = { for i in range(var.bench_vms) : tostring(1000 + i) => element(keys(local.octets), i % 3) }
}

resource "pve_vm" "bench" {
  for_each = local.bench_vms
  node     = module.lab.members[each.value]
  vmid     = tonumber(each.key)
  name     = "bench-${each.key}"
  cores    = 1
  memory   = 1024
  ostype   = "l26"
  scsihw   = "virtio-scsi-single"
  network = {
    net0 = { bridge = "bridge0" }
  }
  started = false
}

resource "pve_vm_disk" "bench_system" {
  for_each = local.bench_vms
  vm_id    = pve_vm.bench[each.key].vmid
  slot     = "scsi0"
  storage  = "local-lvm"
  size     = "4G"
}

resource "pve_vm_disk" "bench_data" {
  for_each = local.bench_vms
  vm_id    = pve_vm.bench[each.key].vmid
  slot     = "scsi1"
  storage  = "local-lvm"
  size     = "8G"
}
