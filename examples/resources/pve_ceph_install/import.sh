# The import ID is the node name.
terraform import 'pve_ceph_install.lab["z2g4a"]' z2g4a
