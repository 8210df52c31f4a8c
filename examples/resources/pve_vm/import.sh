# VMs are imported by their id (the provider finds the node); <node>/<vmid>
# works too.
terraform import pve_vm.vm100 100
