# Every node of the reference lab trusts the lab's internal root CA, which
# issues the nodes' ACME certificates and the log server's certificate
# (copied to /usr/local/share/ca-certificates/root-ca-a.crt, then
# update-ca-certificates).
resource "pve_node_trusted_ca" "root_ca_a" {
  for_each = toset(["z2g4a", "z2g4b", "z2g4c"])

  node = each.key
  name = "root-ca-a"
  pem  = file("${path.module}/root-ca-a.crt")
}
