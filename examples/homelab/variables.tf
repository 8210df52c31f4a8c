variable "pve_endpoint" {
  description = "API URL of one node, such as https://z2g4a.lab.example:8006."
  type        = string
}

variable "pve_api_token" {
  description = "API token USER@REALM!TOKENID=SECRET."
  type        = string
  sensitive   = true
}

variable "pve_tls_fingerprint" {
  description = "SHA-256 fingerprint of the node's API certificate (PVE UI: node > System > Certificates)."
  type        = string
}
