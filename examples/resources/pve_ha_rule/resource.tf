# PVE 9: VM 100 of the reference lab prefers z2g4a, then z2g4b, and may run
# anywhere when both are down (not strict).
resource "pve_ha_resource" "vm100" {
  sid = "vm:100"
}

resource "pve_ha_rule" "vm100_placement" {
  rule      = "vm100_placement"
  type      = "node-affinity"
  resources = [pve_ha_resource.vm100.sid]
  nodes     = { z2g4a = 2, z2g4b = 1 }
}

# Two VMs that must never share a node (such as two DNS servers).
resource "pve_ha_resource" "dns1" {
  sid = "vm:201"
}

resource "pve_ha_resource" "dns2" {
  sid = "vm:202"
}

resource "pve_ha_rule" "dns_apart" {
  rule      = "dns_apart"
  type      = "resource-affinity"
  resources = [pve_ha_resource.dns1.sid, pve_ha_resource.dns2.sid]
  affinity  = "negative"
}
