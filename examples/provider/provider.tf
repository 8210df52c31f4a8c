terraform {
  required_providers {
    pve = {
      source = "pvelab/pve"
    }
  }
}

variable "pve_api_token" {
  description = "PVE API token, USER@REALM!TOKENID=SECRET."
  type        = string
  sensitive   = true
}

# Token authentication, trusting the node's self-signed certificate by its fingerprint.
provider "pve" {
  endpoint        = "https://pve1.example.com:8006"
  api_token       = var.pve_api_token
  tls_fingerprint = "3F:9A:1C:5E:0B:7D:22:48:91:AC:6E:F0:13:57:9B:D4:2C:80:61:EE:A5:37:C9:04:5D:B2:8F:16:73:E9:0A:4C"

  # SSH, only for what the API does not reach (tuned, Ceph settings, files, ...).
  # Host keys must be in ~/.ssh/known_hosts; the nodes' addresses come from the API.
  ssh {
    username    = "root"
    private_key = file(pathexpand("~/.ssh/id_ed25519"))
  }
}

# Ceph OSD create/destroy is reserved by PVE for root@pam with a ticket, so a second
# provider configuration logs in with a password for those resources:
#
# provider "pve" {
#   alias           = "root"
#   endpoint        = "https://pve1.example.com:8006"
#   username        = "root@pam"
#   password        = var.pve_root_password
#   tls_fingerprint = "3F:9A:..."
# }
