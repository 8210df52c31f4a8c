# The reference lab's datacenter options: migrations over the storage
# network, HA services migrated away before a node shuts down.
resource "pve_cluster_options" "this" {
  migration = {
    type    = "secure"
    network = "169.254.50.0/24"
  }
  ha_shutdown_policy = "migrate"

  crs = {
    ha                    = "static"
    ha_rebalance_on_start = true
  }

  bwlimit = {
    migration = 512000 # KiB/s
    restore   = 256000
  }

  next_id = {
    lower = 1000
    upper = 10000
  }

  keyboard   = "de"
  console    = "xtermjs"
  mac_prefix = "BC:24:11:0"

  description = <<-EOT
    Homelab cluster z2g4, managed by Terraform.
  EOT
}
