# Import a node's interface set by the node name: every bridge, bond and
# VLAN, and the physical NICs that carry an address, gateway, MTU or comment.
terraform import pve_node_network_config.z2g4a z2g4a
