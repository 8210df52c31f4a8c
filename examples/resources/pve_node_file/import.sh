# The import ID is <node>:<path>.
terraform import 'pve_node_file.journal_upload_conf["z2g4a"]' z2g4a:/etc/systemd/journal-upload.conf
