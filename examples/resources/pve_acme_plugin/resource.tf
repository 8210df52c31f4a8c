# DNS-01 challenges through the lab's PowerDNS, for certificates of names
# the CA cannot reach over HTTP.
variable "pdns_api_key" {
  type      = string
  sensitive = true
}

resource "pve_acme_plugin" "lab_dns" {
  id   = "lab-dns"
  type = "dns"
  api  = "pdns"
  data = {
    PDNS_Url      = "http://ns1.lab.example:8081"
    PDNS_ServerId = "localhost"
    PDNS_Token    = var.pdns_api_key
  }
  validation_delay = 10
}
