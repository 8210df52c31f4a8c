# The import ID is <node>/<iface>.
terraform import 'pve_node_nic_ring.storage["z2g4a"]' z2g4a/cx354ap1
