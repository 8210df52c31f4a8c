# The nested nodes as one cluster, for the acceptance tests (make
# testacc-nested applies it after examples/nested-lab): the first node
# creates it, the others join through their own API, corosync on the
# management addresses. `nodes` is examples/nested-lab's `nodes` output
# (and has the shape of examples/homelab's `nodes` variable).

terraform {
  required_providers {
    pve = {
      source = "pvelab/pve"
    }
  }
}

variable "nodes" {
  description = "Each node's endpoint, root@pam password and certificate fingerprint, by node name (examples/nested-lab's nodes output)."
  type = map(object({
    endpoint        = string
    password        = string
    tls_fingerprint = string
  }))
  sensitive = true
}

variable "addresses" {
  description = "Corosync address of each node by name; default: the host of its endpoint (the nested nodes' management address)."
  type        = map(string)
  default     = {}
}

variable "cluster_name" {
  description = "The cluster's name."
  type        = string
  default     = "nested"
}

locals {
  names    = sort(nonsensitive(keys(var.nodes)))
  founding = local.names[0]
  # The corosync link is the management address, the endpoint's host.
  address = { for n in local.names : n => lookup(var.addresses, n, regex("^https://([^/:]+)", nonsensitive(var.nodes[n].endpoint))[0]) }
}

provider "pve" {
  endpoint        = var.nodes[local.founding].endpoint
  username        = "root@pam"
  password        = var.nodes[local.founding].password
  tls_fingerprint = var.nodes[local.founding].tls_fingerprint

  standalone_nodes = {
    for n in local.names : n => {
      endpoint        = var.nodes[n].endpoint
      password        = var.nodes[n].password
      tls_fingerprint = var.nodes[n].tls_fingerprint
    } if n != local.founding
  }
}

resource "pve_cluster" "this" {
  name  = var.cluster_name
  links = [{ address = local.address[local.founding] }]
}

resource "pve_cluster_node" "member" {
  for_each   = toset([for n in local.names : n if n != local.founding])
  node       = each.key
  links      = [{ address = local.address[each.key] }]
  depends_on = [pve_cluster.this]
}

output "founding_node" {
  description = "The node the cluster was created on: the acceptance tests' PVE_ENDPOINT."
  value       = local.founding
}
