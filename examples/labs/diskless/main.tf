# The diskless lab (lab.json): three storage nodes jpl-proxmox7/8/9 and a
# diskless jpl-proxmox6 that runs VMs from their Ceph, from four nodes as
# the PVE installer leaves them (vmbr0 on enp1s0f0 with the management
# address and gateway, enterprise repositories on, no cluster, no Ceph) to
# one cluster in one apply. Each node has two 10 GbE ports: enp1s0f0 on the
# public network 10.33.80.0/24 (management, guests, Ceph public), enp1s0f1
# on the cluster network 192.168.100.0/24 (corosync, Ceph replication,
# migration). Run it with: make lab LAB=examples/labs/diskless/lab.json

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
  nodes = {
    jpl-proxmox6 = 16
    jpl-proxmox7 = 17
    jpl-proxmox8 = 18
    jpl-proxmox9 = 19
  }
  # The nodes with a disk for Ceph; jpl-proxmox6 has only its boot SSD.
  storage_nodes = {
    for name, octet in local.nodes : name => octet if name != "jpl-proxmox6"
  }
}

# Each node's interfaces, as one set: the installer's vmbr0 stays the public
# bridge (listed, so it is kept as it is: the management address does not
# move), and the second port gets its cluster-network address, MTU 9000.
# One reload per node; the provider's dead-man rollback guards it.
resource "pve_node_network_config" "lab" {
  for_each = local.nodes

  node = each.key
  interfaces = {
    vmbr0 = {
      type         = "bridge"
      bridge_ports = ["enp1s0f0"]
      cidr         = "10.33.80.${each.value}/24"
      gateway      = "10.33.80.1"
      comments     = "public: management, guests, Ceph public"
    }
    enp1s0f1 = {
      type     = "eth"
      cidr     = "192.168.100.${each.value}/24"
      mtu      = 9000
      comments = "cluster: corosync link0, Ceph replication, migration"
    }
  }
}

# The cluster, founded on jpl-proxmox7: link0 on the cluster network, link1
# on the public network as the backup ring.
resource "pve_cluster" "lab" {
  name = "jpl"
  links = [
    { address = split("/", pve_node_network_config.lab[var.founding_node].interfaces["enp1s0f1"].cidr)[0] },
    { address = split("/", pve_node_network_config.lab[var.founding_node].interfaces["vmbr0"].cidr)[0] },
  ]
}

# The other three join one at a time, the diskless node too: it runs guests
# whose disks live on the storage nodes.
resource "pve_cluster_node" "member" {
  for_each = { for name, octet in local.nodes : name => octet if name != var.founding_node }

  node = each.key
  links = [
    { address = split("/", pve_node_network_config.lab[each.key].interfaces["enp1s0f1"].cidr)[0] },
    { address = split("/", pve_node_network_config.lab[each.key].interfaces["vmbr0"].cidr)[0] },
  ]
  depends_on = [pve_cluster.lab]
}

resource "pve_cluster_options" "lab" {
  migration = {
    type    = "secure"
    network = "192.168.100.0/24"
  }
  ha_shutdown_policy = "migrate"
  depends_on         = [pve_cluster_node.member]
}

# No subscription: the no-subscription repositories on, the enterprise ones
# (on after the installer, 401 without a subscription) off. The Ceph ones
# after pveceph install, which rewrites the Ceph repository file.
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
