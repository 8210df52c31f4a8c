# Import a node's ACME settings and certificate by node name.
terraform import pve_node_acme.node["z2g4a"] z2g4a
