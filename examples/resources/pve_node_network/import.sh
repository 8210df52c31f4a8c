# Import an interface by NODE/IFACE.
terraform import pve_node_network.bridge0 z2g4a/bridge0
