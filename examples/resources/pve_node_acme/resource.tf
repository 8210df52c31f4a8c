# Each node gets a certificate for its FQDN from the lab's internal CA
# (24-hour certificates; PVE renews them itself, Terraform renews when a
# plan runs within 8 hours of expiry).
resource "pve_node_acme" "node" {
  for_each = toset(["z2g4a", "z2g4b", "z2g4c"])

  node         = each.key
  account      = pve_acme_account.internal.name
  domains      = [{ domain = "${each.key}.lab.example" }]
  renew_before = "8h"
}
