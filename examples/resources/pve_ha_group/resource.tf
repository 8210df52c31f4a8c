# PVE 8: VM 100 of the reference lab prefers z2g4a, then z2g4b, and stays
# on those two (restricted).
resource "pve_ha_group" "ab" {
  group      = "ab"
  nodes      = { z2g4a = 2, z2g4b = 1 }
  restricted = true
}

resource "pve_ha_resource" "vm100" {
  sid   = "vm:100"
  group = pve_ha_group.ab.group
}
