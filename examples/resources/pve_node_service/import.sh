# The import ID is <node>/<unit>; enabled and running are read from the node.
terraform import 'pve_node_service.journal_upload["z2g4a"]' z2g4a/systemd-journal-upload.service
