# The reference lab: three workstations z2g4a/b/c, from three nodes as the
# PVE installer leaves them (vmbr0 on bcm5720p0 holding the management
# address and gateway, enterprise repositories on, no cluster, no Ceph) to a
# cluster with hyper-converged Ceph, RBD storage and an HA VM (vm.tf), in
# one apply: every step of the lab's build log. The build itself is the
# module examples/modules/pve-ceph-cluster; this file holds the lab's facts
# and choices. examples/labs/reference/lab.json is this lab's hardware for
# pvesim (make lab, make sim).

terraform {
  required_providers {
    pve = {
      source = "pvelab/pve"
    }
  }
}

# One provider for the whole lab: it talks to the founding node, and to the
# other nodes through their own API until they have joined the cluster.
provider "pve" {
  endpoint        = var.nodes[var.founding_node].endpoint
  username        = "root@pam"
  password        = var.nodes[var.founding_node].password
  tls_fingerprint = var.nodes[var.founding_node].tls_fingerprint

  standalone_nodes = {
    for name, node in var.nodes : name => {
      endpoint        = node.endpoint
      password        = node.password
      tls_fingerprint = node.tls_fingerprint
    } if name != var.founding_node
  }

  ssh {
    username         = "root"
    private_key      = file(pathexpand(var.ssh.private_key_file))
    known_hosts_file = pathexpand(var.ssh.known_hosts_file)
    nodes            = var.ssh.nodes
  }
}

locals {
  # Last address octet of each node on every network.
  octets = {
    z2g4a = 10
    z2g4b = 11
    z2g4c = 12
  }
  nodes = {
    for name, octet in local.octets : name => {
      endpoint = nonsensitive(var.nodes[name].endpoint)
      # Both onboard 1 GbE ports (BCM5720), bonded under bridge0.
      management = {
        cidr    = "172.27.2.${octet}/24"
        gateway = "172.27.2.254"
        nics    = ["bcm5720p0", "bcm5720p1"]
      }
      corosync_cidr = "169.254.60.${octet}/24"
      # The 40 GbE ConnectX-3 port: Ceph, migration, corosync link 1.
      storage = {
        cidr = "169.254.50.${octet}/24"
        nics = ["cx354ap1"]
      }
      # The two 480 GB Intel datacenter SSDs. Not the consumer QLC NVMe
      # (/dev/nvme0n1): put it here and the plan stops with its ~800
      # measured sync-write IOPS.
      osd_disks = ["/dev/sdb", "/dev/sdc"]
    }
  }
}

module "lab" {
  source = "../modules/pve-ceph-cluster"

  nodes         = local.nodes
  founding_node = var.founding_node

  # bond0 (LACP) under the VLAN-aware bridge0 with the management address;
  # corosync link 0 on VLAN 60; the storage port at MTU 9000. The
  # installer's vmbr0 is not listed, so it goes in the same reload.
  network = {
    bridge            = "bridge0"
    bridge_vlan_aware = true
    bridge_vids       = "2-4094"
    management_bond   = { name = "bond0", mode = "802.3ad" }
    corosync_vlan     = 60
    corosync_comment  = "corosync link0"
    storage_mtu       = 9000
    storage_comment   = "storage network"
  }

  # link0 on the corosync VLAN, link1 on the storage network as the backup
  # ring; migrations encrypted over the storage network; HA moves guests
  # away from a node that shuts down instead of freezing them.
  cluster = {
    name               = "lab"
    links              = ["corosync", "storage"]
    migration_network  = "storage"
    migration_type     = "secure"
    ha_shutdown_policy = "migrate"
  }

  # No subscription: the no-subscription repositories on, the enterprise
  # ones (on after the installer, 401 without a subscription) off.
  repositories = {
    "no-subscription" = true
    "enterprise"      = false
  }

  ceph = {
    version        = "squid"
    repository     = "no-subscription"
    public_network = "storage"
    # Guest disks: three copies on three hosts, I/O only while two are up.
    pool = {
      name                = "ceph"
      size                = 3
      min_size            = 2
      pg_num              = 128
      deletion_protection = var.deletion_protection
    }
    # librbd (QEMU) reads [client] from /etc/pve/ceph.conf when a guest
    # opens a disk: writeback caching, writethrough until the guest flushes.
    conf = {
      client = {
        rbd_cache                          = "true"
        rbd_cache_writethrough_until_flush = "true"
      }
    }
    # 8 GiB per OSD, discards passed to the SSDs. bdev_enable_discard is
    # read when an OSD starts: the OSDs restart one host at a time.
    config_db = {
      osd = {
        osd_memory_target   = "8589934592"
        bdev_enable_discard = "true"
      }
    }
  }

  # A disk becomes an OSD when fio measures at least 2000 4K sync-write
  # IOPS on it (the DC SSDs: 6,000 and 10,000).
  osd_gate = {
    min_sync_write_iops = 2000
    runtime             = 30
  }

  # The lab's internal root CA, which issues the nodes' ACME certificates
  # and the log server's.
  trusted_cas = {
    root-ca-a = file("${path.module}/root-ca-a.crt")
  }

  # Every node's journal to the log server.
  journal_upload = {
    url = "https://logs.lab.example:19532/insert/journald"
  }

  # The nodes' ACME certificates live 24 hours: check for renewal every
  # four hours instead of PVE's daily run at a random time.
  daily_update_timer = {
    on_calendar          = "00/4:00"
    randomized_delay_sec = 0
  }

  tuned_profile = "latency-performance"

  # The ConnectX-3 port's rings: 2048 (4096 measured worse).
  storage_nic_ring = { rx = 2048, tx = 2048 }
}
