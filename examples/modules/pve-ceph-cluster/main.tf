# The order of the build: each node's network cutover, the cluster (founded
# on var.founding_node, the others joining one at a time), then per node
# the repositories, the trusted CAs, log shipping, timers and tuning, and
# Ceph (ceph.tf).

locals {
  storage_nodes = { for name, n in var.nodes : name => n if n.storage_node }
  members       = { for name, n in var.nodes : name => n if name != var.founding_node }

  # The interface that carries each network on every node.
  ifname = {
    management = var.network.bridge
    corosync   = var.network.corosync_vlan == null ? null : "${var.network.bridge}.${var.network.corosync_vlan}"
    storage    = var.network.storage_bond == null ? null : var.network.storage_bond.name
  }
  storage_if = {
    for name, n in var.nodes : name => coalesce(local.ifname.storage, n.storage.nics[0])
  }
  cidr = {
    for name, n in var.nodes : name => {
      management = n.management.cidr
      corosync   = n.corosync_cidr
      storage    = n.storage.cidr
    }
  }
  # A network as CIDR (host bits cleared), from the founding node's address.
  network_cidr = {
    for net, c in local.cidr[var.founding_node] : net => c == null ? null : "${cidrhost(c, 0)}/${split("/", c)[1]}"
  }
}

# Each node's network in one resource: it owns the node's bridges, bonds and
# VLANs, stages them together and activates them with one reload, guarded
# by a dead-man rollback over SSH (the node restores its previous
# /etc/network/interfaces by itself if the API and SSH stop answering).
# That is how the management address moves off the installer's vmbr0 in
# one step; a bridge of the same name as the installer's is kept. Physical
# NICs that are not listed stay as they are.
resource "pve_node_network_config" "this" {
  for_each = var.nodes

  node = each.key
  interfaces = merge(
    # The management NICs bonded, under the bridge.
    {
      for b in var.network.management_bond == null ? [] : [var.network.management_bond] : b.name => {
        type      = "bond"
        slaves    = each.value.management.nics
        bond_mode = b.mode
      }
    },
    # The management (and guest) bridge with the node's address and gateway.
    {
      (var.network.bridge) = {
        type              = "bridge"
        bridge_ports      = var.network.management_bond == null ? each.value.management.nics : [var.network.management_bond.name]
        bridge_vlan_aware = var.network.bridge_vlan_aware ? true : null
        bridge_vids       = var.network.bridge_vids
        cidr              = each.value.management.cidr
        gateway           = each.value.management.gateway
        comments          = var.network.bridge_comment
      }
    },
    # Corosync on a VLAN of the bridge.
    {
      for v in var.network.corosync_vlan == null ? [] : [var.network.corosync_vlan] : local.ifname.corosync => {
        type     = "vlan"
        cidr     = each.value.corosync_cidr
        comments = var.network.corosync_comment
      }
    },
    # The storage network: the NIC, or the NICs bonded.
    {
      (local.storage_if[each.key]) = {
        type      = var.network.storage_bond == null ? "eth" : "bond"
        slaves    = var.network.storage_bond == null ? null : each.value.storage.nics
        bond_mode = var.network.storage_bond == null ? null : var.network.storage_bond.mode
        cidr      = each.value.storage.cidr
        mtu       = var.network.storage_mtu
        comments  = var.network.storage_comment
      }
    },
  )

  lifecycle {
    precondition {
      condition     = var.network.management_bond != null || length(each.value.management.nics) == 1
      error_message = "${each.key} has ${length(each.value.management.nics)} management NICs: set network.management_bond to bond them, or give one."
    }
    precondition {
      condition     = var.network.storage_bond != null || length(each.value.storage.nics) == 1
      error_message = "${each.key} has ${length(each.value.storage.nics)} storage NICs: set network.storage_bond to bond them, or give one."
    }
    precondition {
      condition     = var.network.corosync_vlan == null || each.value.corosync_cidr != null
      error_message = "${each.key} has no corosync_cidr for the corosync VLAN ${coalesce(var.network.corosync_vlan, 0)}."
    }
  }
}

# The address of every node on every network, taken from its network
# configuration, so that what uses an address waits for its cutover.
locals {
  address = {
    for name, n in var.nodes : name => {
      for net, ifn in merge(local.ifname, { storage = local.storage_if[name] }) :
      net => split("/", pve_node_network_config.this[name].interfaces[ifn].cidr)[0] if ifn != null
    }
  }
}

# The cluster, founded on var.founding_node with the links in order.
resource "pve_cluster" "this" {
  name  = var.cluster.name
  links = [for l in var.cluster.links : { address = local.address[var.founding_node][l] }]
}

# The other nodes join one at a time, through their own API, with the same
# links.
resource "pve_cluster_node" "member" {
  for_each = local.members

  node       = each.key
  links      = [for l in var.cluster.links : { address = local.address[each.key][l] }]
  depends_on = [pve_cluster.this]
}

# Datacenter options once every node has joined.
resource "pve_cluster_options" "this" {
  migration = {
    type    = var.cluster.migration_type
    network = local.network_cidr[var.cluster.migration_network]
  }
  ha_shutdown_policy = var.cluster.ha_shutdown_policy
  depends_on         = [pve_cluster_node.member]
}

# Package repositories: the PVE ones after the join (it reissues the node's
# certificate, and a request through the node's own API racing it fails
# the fingerprint pin); the Ceph ones once pveceph install (ceph.tf) has
# rewritten the Ceph repository file with the one it installs from.
locals {
  ceph_repositories = coalesce(var.ceph_repositories, {
    "ceph-${var.ceph.version}-no-subscription" = true
    "ceph-${var.ceph.version}-enterprise"      = false
  })
}

resource "pve_apt_repository" "pve" {
  for_each = {
    for pair in setproduct(keys(var.nodes), keys(var.repositories)) :
    "${pair[0]}/${pair[1]}" => { node = pair[0], handle = pair[1] }
  }

  node       = each.value.node
  handle     = each.value.handle
  enabled    = var.repositories[each.value.handle]
  depends_on = [pve_node_network_config.this, pve_cluster_node.member]
}

resource "pve_apt_repository" "ceph" {
  for_each = {
    for pair in setproduct(keys(var.nodes), keys(local.ceph_repositories)) :
    "${pair[0]}/${pair[1]}" => { node = pair[0], handle = pair[1] }
  }

  node       = each.value.node
  handle     = each.value.handle
  enabled    = local.ceph_repositories[each.value.handle]
  depends_on = [pve_ceph_install.this, pve_cluster_node.member]
}
