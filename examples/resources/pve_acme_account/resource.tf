# ACME accounts can only be managed by root@pam with a password: PVE
# refuses API tokens for them. A second provider block does that.
provider "pve" {
  alias           = "root"
  endpoint        = "https://z2g4a.lab.example:8006"
  username        = "root@pam"
  password        = var.root_password
  tls_fingerprint = var.tls_fingerprint
}

# The reference lab's internal CA (a private ACME directory, no terms of service).
resource "pve_acme_account" "internal" {
  provider  = pve.root
  name      = "internal"
  contact   = ["ops@lab.example"]
  directory = "https://ca.lab.example/acme/acme/directory"
}

# Let's Encrypt requires agreeing to its terms of service.
resource "pve_acme_account" "letsencrypt" {
  provider = pve.root
  name     = "default"
  contact  = ["ops@lab.example"]
  tos_url  = "https://letsencrypt.org/documents/LE-SA-v1.5-February-24-2025.pdf"
}
