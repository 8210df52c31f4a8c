# The diskless lab (lab.json): three storage nodes jpl-proxmox7/8/9 and a
# diskless jpl-proxmox6 that runs VMs from their Ceph, from four nodes as
# the PVE installer leaves them (vmbr0 on enp1s0f0 with the management
# address and gateway, enterprise repositories on, no cluster, no Ceph) to
# one cluster in one apply, through the same module as examples/homelab.
# Each node has two 10 GbE ports: enp1s0f0 on the public network
# 10.33.80.0/24 (management, guests, Ceph public), enp1s0f1 on the cluster
# network 192.168.100.0/24 (corosync, Ceph replication, migration).
# Run it with: make lab LAB=diskless

terraform {
  required_providers {
    pve = {
      source = "pvelab/pve"
    }
  }
}

# One provider for the whole lab: the founding node's API, and the other
# nodes' own APIs until they have joined the cluster.
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
  # Last address octet of each node on both networks.
  octets = {
    jpl-proxmox6 = 16
    jpl-proxmox7 = 17
    jpl-proxmox8 = 18
    jpl-proxmox9 = 19
  }
  nodes = {
    for name, octet in local.octets : name => {
      endpoint = nonsensitive(var.nodes[name].endpoint)
      management = {
        cidr    = "10.33.80.${octet}/24"
        gateway = "10.33.80.1"
        nics    = ["enp1s0f0"]
      }
      storage = {
        cidr = "192.168.100.${octet}/24"
        nics = ["enp1s0f1"]
      }
      # jpl-proxmox6 has only its boot SSD: no Ceph daemon, no OSD; PVE's
      # Ceph client and the cluster-wide /etc/pve/ceph.conf are all it
      # needs to run guests from the pool. The others: their Samsung 850 EVO.
      storage_node = name != "jpl-proxmox6"
      osd_disks    = name == "jpl-proxmox6" ? [] : ["/dev/sdb"]
    }
  }
}

module "lab" {
  source = "../../modules/pve-ceph-cluster"

  nodes         = local.nodes
  founding_node = var.founding_node

  # The installer's vmbr0 stays the public bridge (its address does not
  # move); the second port gets its cluster-network address, MTU 9000.
  network = {
    bridge          = "vmbr0"
    bridge_comment  = "public: management, guests, Ceph public"
    storage_mtu     = 9000
    storage_comment = "cluster: corosync link0, Ceph replication, migration"
  }

  # link0 on the cluster network, link1 on the public network as the
  # backup ring.
  cluster = {
    name              = "jpl"
    links             = ["storage", "management"]
    migration_network = "storage"
  }

  # Public network on the public ports, replication and recovery on the
  # cluster network; the pool testpool the lab compares storage systems
  # with (three copies on three hosts, I/O only while two are up).
  ceph = {
    public_network  = "management"
    cluster_network = "storage"
    pool            = { name = "testpool", pg_num = 128 }
  }

  # The Samsung 850 EVO has no power-loss protection and measures about
  # 1,100 4K sync-write IOPS: acceptable for this lab's throw-away
  # comparison pool, not for guest disks anyone keeps (the homelab asks
  # 2000).
  osd_gate = {
    min_sync_write_iops = 1000
  }
}
