# The consumer-drives lab (lab.json): three nodes cons1/2/3 with 10 GbE,
# WD Green SATA SSDs on two of them and SAS 15K HDDs on the third, from
# nodes as the PVE installer leaves them (vmbr0 on the 1 GbE eno1 with the
# management address and gateway), through the same module as
# examples/homelab. What its users did was make the six drives OSDs and a
# pool on them: sync writes under 100 IOPS, a benchmark run on the OSD
# devices that corrupted them, and a pool rebuilt from backups. Here the
# module measures each candidate drive before it holds anything and the
# plan stops, before anything is built, with what each drive sustained
# (the WD Green 65-80 sync-write IOPS, the 15K HDDs about 190; an OSD
# needs var.min_osd_sync_write_iops). Replace the drives, or opt in per
# disk with var.accept_osd_disks for a pool you can lose.
# Run it with: make lab LAB=consumer (it stops at plan, as designed).

terraform {
  required_providers {
    pve = {
      source = "pvelab/pve"
    }
  }
}

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
    cons1 = 11
    cons2 = 12
    cons3 = 13
  }
  nodes = {
    for name, octet in local.octets : name => {
      endpoint = nonsensitive(var.nodes[name].endpoint)
      management = {
        cidr    = "192.168.10.${octet}/24"
        gateway = "192.168.10.1"
        nics    = ["eno1"]
      }
      # The two 10 GbE ports, bonded.
      storage = {
        cidr = "10.10.10.${octet}/24"
        nics = ["enp3s0f0", "enp3s0f1"]
      }
      # Every node's two data drives.
      osd_disks = ["/dev/sdb", "/dev/sdc"]
    }
  }
}

module "lab" {
  source = "../../modules/pve-ceph-cluster"

  nodes         = local.nodes
  founding_node = var.founding_node

  # The installer's vmbr0 on eno1 stays (management and guests); the two
  # 10 GbE ports become an LACP bond for the storage network (Ceph,
  # corosync link 1, migration) with jumbo frames.
  network = {
    bridge          = "vmbr0"
    storage_bond    = { name = "bond0", mode = "802.3ad" }
    storage_mtu     = 9000
    storage_comment = "storage network"
  }

  cluster = {
    name              = "cons"
    links             = ["management", "storage"]
    migration_network = "storage"
  }

  # The pool of the users' build log: vm-disks, 256 PGs, size 3 / min_size 2.
  ceph = {
    public_network = "storage"
    pool           = { name = "vm-disks", pg_num = 256 }
  }

  osd_gate = {
    min_sync_write_iops = var.min_osd_sync_write_iops
    runtime             = 10
    accept              = var.accept_osd_disks
  }
}
