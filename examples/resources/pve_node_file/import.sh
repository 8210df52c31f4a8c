# The import ID is <node>:<path>.
terraform import 'pve_node_file.journal_upload_conf["z2g4a"]' z2g4a:/etc/systemd/journal-upload.conf

# What the provider runs after it writes (restart_units, reload_units) is
# not on the node: give it after "?" so that the import matches a
# configuration that sets it (units separated by commas, options by "&").
terraform import 'pve_node_file.daily_update_timer["z2g4a"]' \
  'z2g4a:/etc/systemd/system/pve-daily-update.timer.d/override.conf?restart_units=pve-daily-update.timer'
