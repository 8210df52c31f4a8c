# Wait for a node that is being installed (here a nested node started by
# pve_vm.nested) and read the fingerprint to pin in its provider block.
data "pve_api_endpoint" "pve1" {
  endpoint = "https://172.27.2.71:8006"
  timeout  = "30m"

  depends_on = [pve_vm.nested]
}

output "pve1_fingerprint" {
  value = data.pve_api_endpoint.pve1.tls_fingerprint
}
