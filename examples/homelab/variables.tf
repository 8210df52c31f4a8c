variable "nodes" {
  description = <<-EOT
    Every node's own API before the cluster exists, by node name: its endpoint
    (such as https://z2g4a.lab.example:8006), root@pam password and API certificate
    fingerprint (PVE UI: node > System > Certificates). Forming and joining a
    cluster needs root@pam itself: PVE refuses API tokens there.
  EOT
  type = map(object({
    endpoint        = string
    password        = string
    tls_fingerprint = string
  }))
  sensitive = true
}

variable "founding_node" {
  description = "The node the cluster is created on; the provider talks to the cluster through it."
  type        = string
  default     = "z2g4a"
}

variable "ssh" {
  description = <<-EOT
    SSH to the nodes as root, for what PVE's API does not reach (Ceph
    settings and restarts, tuned, NIC rings): the private key file, the
    known_hosts file holding the nodes' host keys (verified, never trusted
    blindly), and optional per-node address overrides (by default the
    provider uses each node's cluster address).
  EOT
  type = object({
    private_key_file = string
    known_hosts_file = optional(string, "~/.ssh/known_hosts")
    nodes = optional(map(object({
      address = string
      port    = optional(number, 22)
    })), {})
  })
}

variable "deletion_protection" {
  description = <<-EOT
    While true, terraform destroy of the lab is refused at plan, before
    anything changes: VM 100's disk is only detached when destroyed
    (delete_on_destroy = false), so its VM, and the storage holding it,
    refuse to go; and the Ceph pool refuses (deletion_protection). To tear
    the lab down, apply with false first; the destroy then deletes VM 100
    with its disk, the storage and the pool, and drains each OSD before
    destroying it. It stops at Ceph's last monitor: PVE's API cannot purge
    Ceph (pveceph purge on the nodes; or a removed block).
  EOT
  type        = bool
  default     = true
}
