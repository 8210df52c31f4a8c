# An 802.3ad bond of two NICs under a VLAN-aware bridge, with a VLAN
# interface for corosync and a jumbo-frame storage NIC.
resource "pve_node_network" "bond0" {
  node      = "z2g4a"
  iface     = "bond0"
  type      = "bond"
  slaves    = ["bcm5720p0", "bcm5720p1"]
  bond_mode = "802.3ad"
}

resource "pve_node_network" "bridge0" {
  node              = "z2g4a"
  iface             = "bridge0"
  type              = "bridge"
  bridge_ports      = [pve_node_network.bond0.iface]
  bridge_vlan_aware = true
  cidr              = "172.27.2.10/24"
  gateway           = "172.27.2.254"
}

resource "pve_node_network" "corosync" {
  node  = "z2g4a"
  iface = "bridge0.60"
  type  = "vlan"
  cidr  = "169.254.60.10/24"
}

resource "pve_node_network" "storage" {
  node  = "z2g4a"
  iface = "cx354ap1"
  type  = "eth"
  cidr  = "169.254.50.10/24"
  mtu   = 9000
}
