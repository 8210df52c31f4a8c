# The provider reaches z2g4b and z2g4c through their own API until they join:
#
# provider "pve" {
#   endpoint        = "https://172.27.2.10:8006"
#   username        = "root@pam"
#   password        = var.root_password_a
#   tls_fingerprint = var.fingerprint_a
#   standalone_nodes = {
#     z2g4b = { endpoint = "https://172.27.2.11:8006", password = var.root_password_b, tls_fingerprint = var.fingerprint_b }
#     z2g4c = { endpoint = "https://172.27.2.12:8006", password = var.root_password_c, tls_fingerprint = var.fingerprint_c }
#   }
# }

locals {
  members = { z2g4b = 11, z2g4c = 12 }
}

# Joins run one at a time; each node's links must match the cluster's.
resource "pve_cluster_node" "member" {
  for_each = local.members
  node     = each.key
  links = [
    { address = "169.254.60.${each.value}" },
    { address = "169.254.50.${each.value}" },
  ]
  depends_on = [pve_cluster.lab]
}
