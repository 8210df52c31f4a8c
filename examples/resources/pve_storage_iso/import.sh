# An image already on a storage is imported as <node>/<volume>; the first
# apply after the import records the configuration's source without
# fetching anything.
terraform import pve_storage_iso.installer z2g4a/local:iso/proxmox-ve_9.1-1.iso
