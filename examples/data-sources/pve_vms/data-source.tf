# The lab's VMs, by tag.
data "pve_vms" "lab" {
  tags = ["lab"]
}

output "lab_vm_ids" {
  value = [for vm in data.pve_vms.lab.vms : vm.vmid]
}
