# VM disks are imported as <vm_id>/<slot>; the node is found from the VM.
# delete_on_destroy and reboot_if_needed start as false after an import.
terraform import pve_vm_disk.vm100_system 100/scsi0
