# The reference lab ships every node's journal to its log server:
# systemd-journal-upload enabled and running, restarted when its
# configuration or drop-in changes (see pve_node_file).
resource "pve_node_service" "journal_upload" {
  for_each = toset(["z2g4a", "z2g4b", "z2g4c"])

  node    = each.key
  unit    = "systemd-journal-upload.service"
  enabled = true
  running = true

  triggers = {
    conf   = pve_node_file.journal_upload_conf[each.key].sha256
    dropin = pve_node_file.journal_upload_dropin[each.key].sha256
  }
}
