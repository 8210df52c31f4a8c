# The import ID is <node>/<name>, the file name under
# /usr/local/share/ca-certificates without .crt.
terraform import 'pve_node_trusted_ca.root_ca_a["z2g4a"]' z2g4a/root-ca-a
