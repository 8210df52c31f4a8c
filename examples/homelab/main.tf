# The reference lab: three workstations z2g4a/b/c, from three freshly
# installed standalone nodes to a cluster with hyper-converged Ceph
# (ceph.tf). Storage and VMs join it as the provider grows.

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

# Both onboard 1 GbE ports bonded with LACP.
resource "pve_node_network" "bond0" {
  for_each = local.nodes

  node      = each.key
  iface     = "bond0"
  type      = "bond"
  slaves    = ["bcm5720p0", "bcm5720p1"]
  bond_mode = "802.3ad"
}

# The VLAN-aware management and guest bridge.
resource "pve_node_network" "bridge0" {
  for_each = local.nodes

  node              = each.key
  iface             = "bridge0"
  type              = "bridge"
  bridge_ports      = [pve_node_network.bond0[each.key].iface]
  bridge_vlan_aware = true
  bridge_vids       = "2-4094"
  cidr              = "172.27.2.${each.value}/24"
  gateway           = "172.27.2.254"
}

# Corosync link 0 on VLAN 60.
resource "pve_node_network" "corosync" {
  for_each = local.nodes

  node     = each.key
  iface    = "${pve_node_network.bridge0[each.key].iface}.60"
  type     = "vlan"
  cidr     = "169.254.60.${each.value}/24"
  comments = "corosync link0"
}

# The 40 GbE storage network (Ceph, migration, corosync link 1).
resource "pve_node_network" "storage" {
  for_each = local.nodes

  node     = each.key
  iface    = "cx354ap1"
  type     = "eth"
  cidr     = "169.254.50.${each.value}/24"
  mtu      = 9000
  comments = "storage network"
}

# The cluster, founded on z2g4a: link0 on the corosync VLAN, link1 on the
# storage network as the backup ring.
resource "pve_cluster" "lab" {
  name = "lab"
  links = [
    { address = split("/", pve_node_network.corosync[var.founding_node].cidr)[0] },
    { address = split("/", pve_node_network.storage[var.founding_node].cidr)[0] },
  ]
}

# The other nodes join one at a time, through their own API, with the same
# two links. Their networks are configured first (the links must exist).
resource "pve_cluster_node" "member" {
  for_each = { for name, octet in local.nodes : name => octet if name != var.founding_node }

  node = each.key
  links = [
    { address = split("/", pve_node_network.corosync[each.key].cidr)[0] },
    { address = split("/", pve_node_network.storage[each.key].cidr)[0] },
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
# ones (which answer 401 without a subscription) off.
locals {
  apt_repositories = {
    "no-subscription"            = true
    "enterprise"                 = false
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
}
