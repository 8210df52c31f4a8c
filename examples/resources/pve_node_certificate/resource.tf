# A certificate from your own CA for node z2g4b's API (port 8006).
# The provider itself talks to another node (or trusts the CA via ca_cert),
# so the rotation does not cut it off.
resource "pve_node_certificate" "z2g4b" {
  node        = "z2g4b"
  certificate = file("${path.module}/z2g4b.lab.example.chain.pem") # leaf first, then intermediates
  private_key = file("${path.module}/z2g4b.lab.example.key")       # kept in state: treat state as secret
}

output "z2g4b_fingerprint" {
  value = pve_node_certificate.z2g4b.fingerprint
}
