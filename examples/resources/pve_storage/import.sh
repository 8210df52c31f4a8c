# Storages are imported by their id; the first apply after an import
# records a keyring, which PVE never returns.
terraform import pve_storage.ceph ceph
