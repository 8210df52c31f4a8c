# What each node gets beside the network, the cluster and Ceph, over SSH:
# trusted CAs, log shipping, the daily-update timer, the tuned profile and
# the storage NICs' rings. They wait for pveceph install, which holds the
# node's shell for minutes: their short commands would otherwise come
# first and delay Ceph, which everything after it waits for.

locals {
  node_cas = {
    for pair in setproduct(keys(var.nodes), keys(var.trusted_cas)) :
    "${pair[0]}/${pair[1]}" => { node = pair[0], name = pair[1] }
  }
  journal_nodes = var.journal_upload == null ? {} : var.nodes
  timer_nodes   = var.daily_update_timer == null ? {} : var.nodes
  tuned_nodes   = var.tuned_profile == null ? {} : var.nodes
  ring_nics = var.storage_nic_ring == null ? {} : merge([
    for name, n in var.nodes : { for nic in n.storage.nics : "${name}/${nic}" => { node = name, nic = nic } }
  ]...)
}

resource "pve_node_trusted_ca" "this" {
  for_each = local.node_cas

  node       = each.value.node
  name       = each.value.name
  pem        = var.trusted_cas[each.value.name]
  depends_on = [pve_cluster_node.member, pve_ceph_install.this]
}

# systemd-journal-upload: its configuration, a drop-in that restarts it
# after any failure, and the service enabled and running, restarted when
# either file changes. The server's certificate is checked against the
# system trust store (trusted_cas), hence the "-" file settings.
resource "pve_node_file" "journal_upload_conf" {
  for_each = local.journal_nodes

  node    = each.key
  path    = "/etc/systemd/journal-upload.conf"
  content = <<-EOT
    [Upload]
    URL=${var.journal_upload.url}
    ServerCertificateFile=-
    ServerKeyFile=-
    TrustedCertificateFile=-
  EOT

  depends_on = [pve_cluster_node.member, pve_ceph_install.this]
}

resource "pve_node_file" "journal_upload_dropin" {
  for_each = local.journal_nodes

  node          = each.key
  path          = "/etc/systemd/system/systemd-journal-upload.service.d/override.conf"
  daemon_reload = true
  content       = <<-EOT
    [Service]
    Restart=always
  EOT

  depends_on = [pve_cluster_node.member, pve_ceph_install.this]
}

resource "pve_node_service" "journal_upload" {
  for_each = local.journal_nodes

  node    = each.key
  unit    = "systemd-journal-upload.service"
  enabled = true
  running = true

  triggers = {
    conf   = pve_node_file.journal_upload_conf[each.key].sha256
    dropin = pve_node_file.journal_upload_dropin[each.key].sha256
  }
  depends_on = [pve_node_trusted_ca.this, pve_ceph_install.this]
}

# The empty OnCalendar= clears the packaged schedule; restarting the timer
# recomputes its next run.
resource "pve_node_file" "daily_update_timer" {
  for_each = local.timer_nodes

  node          = each.key
  path          = "/etc/systemd/system/pve-daily-update.timer.d/override.conf"
  daemon_reload = true
  restart_units = ["pve-daily-update.timer"]
  content       = <<-EOT
    [Timer]
    OnCalendar=
    OnCalendar=${var.daily_update_timer.on_calendar}
    RandomizedDelaySec=${var.daily_update_timer.randomized_delay_sec}
  EOT

  depends_on = [pve_cluster_node.member, pve_ceph_install.this]
}

resource "pve_node_tuned_profile" "this" {
  for_each = local.tuned_nodes

  node       = each.key
  profile    = var.tuned_profile
  depends_on = [pve_cluster_node.member, pve_ceph_install.this]
}

# Applied now and by a unit the resource installs, at every boot.
resource "pve_node_nic_ring" "storage" {
  for_each = local.ring_nics

  node       = each.value.node
  iface      = each.value.nic
  rx         = var.storage_nic_ring.rx
  tx         = var.storage_nic_ring.tx
  depends_on = [pve_cluster_node.member, pve_node_network_config.this, pve_ceph_install.this]
}
