# The import ID is the node name.
terraform import 'pve_node_tuned_profile.this["z2g4a"]' z2g4a
