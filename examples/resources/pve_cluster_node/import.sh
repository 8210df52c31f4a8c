# Import a cluster member by its node name.
terraform import 'pve_cluster_node.member["z2g4b"]' z2g4b
