# The consumer-drives lab (lab.json): three nodes cons1/2/3 with 10 GbE,
# WD Green SATA SSDs on two of them and SAS 15K HDDs on the third, from
# nodes as the PVE installer leaves them (vmbr0 on the 1 GbE eno1 with the
# management address and gateway) to a cluster with Ceph in one apply.
# What its users did was make the six drives OSDs and a pool on them: sync
# writes under 100 IOPS, a benchmark run on the OSD devices that corrupted
# them, and a pool rebuilt from backups. This configuration does what a
# careful user does instead (ceph.tf): it measures the unused drives first
# and makes OSDs only of those that pass; with none passing it builds the
# cluster and Ceph's monitors and managers, reports the measurements, and
# creates no pool. Run it with: make lab LAB=examples/labs/consumer/lab.json

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
  nodes = {
    cons1 = 11
    cons2 = 12
    cons3 = 13
  }
}

# Each node's interfaces as one set, one reload: the installer's vmbr0 on
# eno1 stays (management and guests; listed, so it is kept as it is), and
# the two 10 GbE ports become an LACP bond for the storage network (Ceph,
# corosync link 1, migration) with jumbo frames.
resource "pve_node_network_config" "lab" {
  for_each = local.nodes

  node = each.key
  interfaces = {
    vmbr0 = {
      type         = "bridge"
      bridge_ports = ["eno1"]
      cidr         = "192.168.10.${each.value}/24"
      gateway      = "192.168.10.1"
    }
    bond0 = {
      type      = "bond"
      slaves    = ["enp3s0f0", "enp3s0f1"]
      bond_mode = "802.3ad"
      cidr      = "10.10.10.${each.value}/24"
      mtu       = 9000
      comments  = "storage network"
    }
  }
}

resource "pve_cluster" "lab" {
  name = "cons"
  links = [
    { address = split("/", pve_node_network_config.lab[var.founding_node].interfaces["vmbr0"].cidr)[0] },
    { address = split("/", pve_node_network_config.lab[var.founding_node].interfaces["bond0"].cidr)[0] },
  ]
}

resource "pve_cluster_node" "member" {
  for_each = { for name, octet in local.nodes : name => octet if name != var.founding_node }

  node = each.key
  links = [
    { address = split("/", pve_node_network_config.lab[each.key].interfaces["vmbr0"].cidr)[0] },
    { address = split("/", pve_node_network_config.lab[each.key].interfaces["bond0"].cidr)[0] },
  ]
  depends_on = [pve_cluster.lab]
}

resource "pve_cluster_options" "lab" {
  migration = {
    type    = "secure"
    network = "10.10.10.0/24"
  }
  ha_shutdown_policy = "migrate"
  depends_on         = [pve_cluster_node.member]
}

# No subscription: no-subscription repositories on, enterprise off; the
# Ceph ones once pveceph install has rewritten the Ceph repository file.
locals {
  apt_repositories = {
    "no-subscription" = true
    "enterprise"      = false
  }
  ceph_apt_repositories = {
    "ceph-squid-no-subscription" = true
    "ceph-squid-enterprise"      = false
  }
}

resource "pve_apt_repository" "lab" {
  for_each = {
    for pair in setproduct(keys(local.nodes), keys(local.apt_repositories)) :
    "${pair[0]}/${pair[1]}" => { node = pair[0], handle = pair[1] }
  }

  node    = each.value.node
  handle  = each.value.handle
  enabled = local.apt_repositories[each.value.handle]
  # After the join: it reissues the node's certificate, and a request
  # through the node's own API racing it fails the fingerprint pin.
  depends_on = [pve_node_network_config.lab, pve_cluster_node.member]
}

resource "pve_apt_repository" "ceph" {
  for_each = {
    for pair in setproduct(keys(local.nodes), keys(local.ceph_apt_repositories)) :
    "${pair[0]}/${pair[1]}" => { node = pair[0], handle = pair[1] }
  }

  node       = each.value.node
  handle     = each.value.handle
  enabled    = local.ceph_apt_repositories[each.value.handle]
  depends_on = [pve_ceph_install.lab, pve_cluster_node.member]
}
