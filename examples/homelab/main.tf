# The reference lab: three workstations z2g4a/b/c, from three nodes as the
# PVE installer leaves them (vmbr0 on bcm5720p0 holding the management
# address and gateway, enterprise repositories on, no cluster, no Ceph) to a
# cluster with hyper-converged Ceph (ceph.tf), RBD storage and an HA VM
# (vm.tf), in one apply. The order: each node's network cutover, then the
# repositories, the cluster and Ceph. examples/labs/reference/lab.json is
# this lab's hardware for pvesim (make lab, make sim).

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
  nodes = {
    z2g4a = 10
    z2g4b = 11
    z2g4c = 12
  }
}

# Each node's network in one resource: it owns the node's bridges, bonds and
# VLANs, stages them together and activates them with one reload. That is
# the only way to move the management address off the installer's vmbr0
# (bridged to bcm5720p0) onto bridge0 over bond0: interface by interface PVE
# refuses bond0 (bcm5720p0 is still vmbr0's port) and a second default
# gateway, and removing vmbr0 first cuts the node off. vmbr0 is not listed,
# so it is removed in the same reload. The reload changes the management
# path, so the provider arms a dead-man rollback over SSH first: if the API
# and SSH do not answer on the management address afterwards, the node puts
# its old /etc/network/interfaces back by itself and the apply fails naming
# the change. Physical NICs that are not listed stay as they are (manual).
resource "pve_node_network_config" "lab" {
  for_each = local.nodes

  node = each.key
  interfaces = {
    # Both onboard 1 GbE ports bonded with LACP.
    bond0 = {
      type      = "bond"
      slaves    = ["bcm5720p0", "bcm5720p1"]
      bond_mode = "802.3ad"
    }
    # The VLAN-aware management and guest bridge: the installer's address
    # and gateway, now on the bond.
    bridge0 = {
      type              = "bridge"
      bridge_ports      = ["bond0"]
      bridge_vlan_aware = true
      bridge_vids       = "2-4094"
      cidr              = "172.27.2.${each.value}/24"
      gateway           = "172.27.2.254"
    }
    # Corosync link 0 on VLAN 60.
    "bridge0.60" = {
      type     = "vlan"
      cidr     = "169.254.60.${each.value}/24"
      comments = "corosync link0"
    }
    # The 40 GbE storage network (Ceph, migration, corosync link 1).
    cx354ap1 = {
      type     = "eth"
      cidr     = "169.254.50.${each.value}/24"
      mtu      = 9000
      comments = "storage network"
    }
  }
}

# The cluster, founded on z2g4a: link0 on the corosync VLAN, link1 on the
# storage network as the backup ring.
resource "pve_cluster" "lab" {
  name = "lab"
  links = [
    { address = split("/", pve_node_network_config.lab[var.founding_node].interfaces["bridge0.60"].cidr)[0] },
    { address = split("/", pve_node_network_config.lab[var.founding_node].interfaces["cx354ap1"].cidr)[0] },
  ]
}

# The other nodes join one at a time, through their own API, with the same
# two links. Their networks are configured first (the links must exist:
# the references above order the cluster after each node's cutover).
resource "pve_cluster_node" "member" {
  for_each = { for name, octet in local.nodes : name => octet if name != var.founding_node }

  node = each.key
  links = [
    { address = split("/", pve_node_network_config.lab[each.key].interfaces["bridge0.60"].cidr)[0] },
    { address = split("/", pve_node_network_config.lab[each.key].interfaces["cx354ap1"].cidr)[0] },
  ]
  depends_on = [pve_cluster.lab]
}

# Datacenter options, once every node has joined: migrations go encrypted
# over the storage network, and HA moves guests away from a node that shuts
# down instead of freezing them.
resource "pve_cluster_options" "lab" {
  migration = {
    type    = "secure"
    network = "169.254.50.0/24"
  }
  ha_shutdown_policy = "migrate"
  depends_on         = [pve_cluster_node.member]
}

# Package repositories of every node: no subscription, so the
# no-subscription repositories of PVE and Ceph are on and the enterprise
# ones (which answer 401 without a subscription, and the installer leaves
# on) off. The PVE ones first, after the network cutover; the Ceph ones
# once pve_ceph_install (ceph.tf) has run, because pveceph install rewrites
# the Ceph repository file (ceph.sources) with the one repository it
# installs from.
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
