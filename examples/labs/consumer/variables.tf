variable "nodes" {
  description = <<-EOT
    Every node's own API before the cluster exists, by node name: its endpoint
    (such as https://cons1.lab.example:8006), root@pam password and API certificate
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
  default     = "cons1"
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

variable "min_osd_sync_write_iops" {
  description = <<-EOT
    4K sync-write IOPS at queue depth 1 a drive must sustain to become an
    OSD: what BlueStore asks of it for every client write. Datacenter SSDs
    with power-loss protection reach thousands; the WD Green measured under
    100, a 15K SAS HDD about 190.
  EOT
  type        = number
  default     = 2000
}

variable "accept_osd_disks" {
  description = <<-EOT
    Disks to make OSDs without measuring them, as "node:/dev/sdX" with the
    reason (such as { "cons1:/dev/sdb" = "throw-away test pool" }): an
    explicit opt-in. Empty by default: no drive of this lab passes the
    measurement, so the plan stops.
  EOT
  type        = map(string)
  default     = {}
  validation {
    condition     = alltrue([for k in keys(var.accept_osd_disks) : can(regex("^[a-z0-9-]+:/dev/", k))])
    error_message = "accept_osd_disks keys look like \"cons1:/dev/sdb\"."
  }
}
