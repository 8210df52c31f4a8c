# Import a node's existing custom certificate by node name. PVE never
# returns the private key: keep private_key in the configuration; the first
# apply after the import uploads it again (same certificate).
terraform import pve_node_certificate.z2g4b z2g4b
