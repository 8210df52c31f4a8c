# Facts: what each node is (its name, addresses, NICs, disks). Choices: what
# the lab makes of them (bond, bridge, VLANs, MTU, cluster links, Ceph
# networks and pool, ceph.conf and config-database settings, repositories,
# tuning, CA, log shipping). A new node list changes only the facts.

variable "nodes" {
  description = <<-EOT
    The nodes by name, each with its facts:
    - endpoint: its API, such as https://z2g4a.lab.example:8006 (reported in
      the nodes output; the provider block holds the credentials);
    - management: the node's address and gateway on the management bridge
      (network.bridge) and the NICs under it: one NIC is the bridge's port,
      several are bonded first (network.management_bond);
    - corosync_cidr: its address on the corosync VLAN (network.corosync_vlan);
    - storage: its address on the storage network and the NICs carrying it:
      one NIC gets the address, several are bonded first (network.storage_bond);
    - osd_disks: the disks to consider for OSDs, such as ["/dev/sdb"]: each
      is measured (pve_node_disk_benchmark) and becomes an OSD only if it is
      fast enough (osd_gate);
    - storage_node: false for a node that runs no Ceph daemon and holds no
      OSD (it still runs guests from the pool).
  EOT
  type = map(object({
    endpoint = optional(string)
    management = object({
      cidr    = string
      gateway = string
      nics    = list(string)
    })
    corosync_cidr = optional(string)
    storage = object({
      cidr = string
      nics = list(string)
    })
    osd_disks    = optional(list(string), [])
    storage_node = optional(bool, true)
  }))
  validation {
    condition     = alltrue([for n in values(var.nodes) : length(n.management.nics) > 0 && length(n.storage.nics) > 0])
    error_message = "Every node needs at least one management NIC and one storage NIC."
  }
}

variable "founding_node" {
  description = "The node the cluster and Ceph are created on; the provider's endpoint must be this node."
  type        = string
}

variable "network" {
  description = <<-EOT
    How every node's interfaces are laid out: the management bridge (its
    name, VLAN awareness and VLAN ids), the bond under it when a node has
    several management NICs, the corosync VLAN on the bridge, the storage
    bond when a node has several storage NICs, and the storage MTU. Each
    node's set is applied as one change with one reload, under the
    provider's dead-man rollback.
  EOT
  type = object({
    bridge            = optional(string, "vmbr0")
    bridge_vlan_aware = optional(bool, false)
    bridge_vids       = optional(string)
    bridge_comment    = optional(string)
    management_bond = optional(object({
      name = string
      mode = optional(string, "802.3ad")
    }))
    corosync_vlan    = optional(number)
    corosync_comment = optional(string)
    storage_bond = optional(object({
      name = string
      mode = optional(string, "802.3ad")
    }))
    storage_mtu     = optional(number, 9000)
    storage_comment = optional(string)
  })
  default = {}
}

variable "cluster" {
  description = <<-EOT
    The PVE cluster: its name; its corosync links in order (link0 first),
    each one of the networks "management", "corosync" or "storage"; the
    network and type of migrations; what HA does when a node shuts down.
  EOT
  type = object({
    name               = string
    links              = optional(list(string), ["corosync", "storage"])
    migration_network  = optional(string, "storage")
    migration_type     = optional(string, "secure")
    ha_shutdown_policy = optional(string, "migrate")
  })
  validation {
    condition = alltrue([for l in concat(var.cluster.links, [var.cluster.migration_network]) :
    contains(["management", "corosync", "storage"], l)])
    error_message = "cluster.links and cluster.migration_network name networks: \"management\", \"corosync\" or \"storage\"."
  }
}

variable "repositories" {
  description = "PVE package repositories of every node, by handle: on (true) or off (false). Without a subscription the enterprise one answers 401."
  type        = map(bool)
  default = {
    "no-subscription" = true
    "enterprise"      = false
  }
}

variable "ceph" {
  description = <<-EOT
    Ceph on the storage nodes: the release and repository pveceph install
    uses; the public network and an optional separate cluster network
    (networks by name: "management" or "storage"); the replicated RBD pool
    and its PVE storage; settings for /etc/pve/ceph.conf (conf, by section,
    such as client) and for the monitors' configuration database
    (config_db, by section, such as osd), the latter applied with a rolling
    restart (host by host, each after every placement group is
    active+clean again); and how long an OSD's drain may take when it is
    destroyed.
  EOT
  type = object({
    version         = optional(string, "squid")
    repository      = optional(string, "no-subscription")
    public_network  = optional(string, "storage")
    cluster_network = optional(string)
    pool = object({
      name                = string
      size                = optional(number, 3)
      min_size            = optional(number, 2)
      pg_num              = optional(number, 128)
      pg_autoscale_mode   = optional(string, "warn")
      deletion_protection = optional(bool, true)
      storage             = optional(string)
      krbd                = optional(bool, false)
    })
    conf               = optional(map(map(string)), {})
    config_db          = optional(map(map(string)), {})
    config_apply       = optional(string, "rolling_restart")
    osd_delete_timeout = optional(string, "3h")
  })
  validation {
    condition = contains(["management", "storage"], var.ceph.public_network) && (
    var.ceph.cluster_network == null ? true : contains(["management", "storage"], var.ceph.cluster_network))
    error_message = "ceph.public_network and ceph.cluster_network are \"management\" or \"storage\"."
  }
}

variable "ceph_repositories" {
  description = "Ceph repositories of every node, by handle (default: the no-subscription one of ceph.version on, its enterprise one off). Managed once pveceph install has rewritten the Ceph repository file."
  type        = map(bool)
  default     = null
}

variable "osd_gate" {
  description = <<-EOT
    Which of the nodes' osd_disks become OSDs. Each free disk is measured
    with fio (pve_node_disk_benchmark: 4K sync writes at queue depth 1 for
    runtime seconds, what BlueStore asks of a drive for every client write)
    and refused at plan, with the figures, below min_sync_write_iops. Only
    disks that hold nothing are measured: a disk holding an OSD is skipped
    (and stays an OSD); a disk holding anything else is refused unmeasured.
    accept names disks, as "node:/dev/sdX", that become OSDs without a
    measurement, with the reason (an explicit opt-in, such as for a pool
    you can lose).
  EOT
  type = object({
    min_sync_write_iops = optional(number, 2000)
    runtime             = optional(number, 30)
    accept              = optional(map(string), {})
  })
  default = {}
}

variable "trusted_cas" {
  description = "CA certificates every node trusts (PEM by name: /usr/local/share/ca-certificates/<name>.crt, then update-ca-certificates), such as an internal root CA that issued the log server's certificate."
  type        = map(string)
  default     = {}
}

variable "journal_upload" {
  description = <<-EOT
    Ship every node's journal with systemd-journal-upload (package
    systemd-journal-remote, which the nodes must have): the log server's
    URL, such as https://logs.lab.example:19532/insert/journald, whose
    certificate is checked against the system trust store (trusted_cas).
    The service is enabled, running, restarted always after a failure and
    whenever its configuration changes. Null: not managed.
  EOT
  type = object({
    url = string
  })
  default = null
}

variable "daily_update_timer" {
  description = "A drop-in for pve-daily-update.timer (PVE's daily certificate renewal and update check): its OnCalendar schedule, such as \"00/4:00\" for short-lived ACME certificates, and RandomizedDelaySec. Null: PVE's schedule."
  type = object({
    on_calendar          = string
    randomized_delay_sec = optional(number, 0)
  })
  default = null
}

variable "tuned_profile" {
  description = "tuned profile of every node, such as latency-performance. Null: not managed."
  type        = string
  default     = null
}

variable "storage_nic_ring" {
  description = "Ring buffer sizes of every storage NIC (ethtool -G), applied now and at every boot. Null: the driver's defaults."
  type = object({
    rx = number
    tx = number
  })
  default = null
}
