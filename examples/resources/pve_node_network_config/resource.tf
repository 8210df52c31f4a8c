# One node of the reference lab as one resource: the installer's vmbr0 is
# not listed, so it is deleted; the management address and gateway move to
# bridge0 over an 802.3ad bond in the same reload.
resource "pve_node_network_config" "z2g4a" {
  node = "z2g4a"
  interfaces = {
    bond0 = { type = "bond", slaves = ["bcm5720p0", "bcm5720p1"], bond_mode = "802.3ad" }
    bridge0 = {
      type              = "bridge"
      bridge_ports      = ["bond0"]
      bridge_vlan_aware = true
      bridge_vids       = "2-4094"
      cidr              = "172.27.2.10/24"
      gateway           = "172.27.2.254"
    }
    "bridge0.60" = { type = "vlan", cidr = "169.254.60.10/24", comments = "corosync link0" }
    cx354ap1     = { type = "eth", cidr = "169.254.50.10/24", mtu = 9000, comments = "storage network" }
  }
  rollback_timeout_seconds                 = 120
  allow_management_change_without_rollback = false
}
