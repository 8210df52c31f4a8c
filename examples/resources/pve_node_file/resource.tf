# The reference lab's node files: systemd-journal-upload's configuration
# (package systemd-journal-remote) and two drop-ins. The log server's
# certificate is checked against the system trust store (see
# pve_node_trusted_ca), hence the "-" file settings.
locals {
  nodes      = toset(["z2g4a", "z2g4b", "z2g4c"])
  log_server = "logs.lab.example"
}

resource "pve_node_file" "journal_upload_conf" {
  for_each = local.nodes

  node    = each.key
  path    = "/etc/systemd/journal-upload.conf"
  content = <<-EOT
    [Upload]
    URL=https://${local.log_server}:19532/insert/journald
    ServerCertificateFile=-
    ServerKeyFile=-
    TrustedCertificateFile=-
  EOT
}

# Keep uploading after a failure. A drop-in is a unit file: systemd reads
# it after a daemon-reload. pve_node_service restarts the uploader when
# either file changes (its triggers).
resource "pve_node_file" "journal_upload_dropin" {
  for_each = local.nodes

  node          = each.key
  path          = "/etc/systemd/system/systemd-journal-upload.service.d/override.conf"
  daemon_reload = true
  content       = <<-EOT
    [Service]
    Restart=always
  EOT
}

# The nodes' ACME certificates live 24 hours: check for renewal every four
# hours instead of PVE's daily run at a random time. The empty OnCalendar=
# clears the packaged schedule; restarting the timer recomputes its next run.
resource "pve_node_file" "daily_update_timer" {
  for_each = local.nodes

  node          = each.key
  path          = "/etc/systemd/system/pve-daily-update.timer.d/override.conf"
  daemon_reload = true
  restart_units = ["pve-daily-update.timer"]
  content       = <<-EOT
    [Timer]
    OnCalendar=
    OnCalendar=00/4:00
    RandomizedDelaySec=0
  EOT
}
