# In the shape of examples/homelab's `nodes` variable:
#   terraform output -json nodes > ../homelab/nodes.auto.tfvars.json   (wrap in {"nodes": ...})
output "nodes" {
  description = "Each nested node's API endpoint, root@pam password and certificate fingerprint (null until its API answered)."
  sensitive   = true
  value = {
    for name, n in local.nodes : name => {
      endpoint        = "https://${split("/", n.cidr)[0]}:8006"
      password        = var.root_password
      tls_fingerprint = try(data.pve_api_endpoint.node[name].tls_fingerprint, null)
    }
  }
}

output "endpoints" {
  description = "Each nested node's API endpoint, by node name."
  value       = { for name, n in local.nodes : name => "https://${split("/", n.cidr)[0]}:8006" }
}

output "ssh" {
  description = "Each nested node's SSH address, for the provider's ssh block (examples/homelab's ssh.nodes)."
  value       = { for name, n in local.nodes : name => { address = split("/", n.cidr)[0], port = 22 } }
}

output "vms" {
  description = "The host's VM id of each nested node."
  value       = { for name, n in local.nodes : name => pve_vm.node[name].vmid }
}
