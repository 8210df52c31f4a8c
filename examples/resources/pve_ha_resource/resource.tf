# VM 100 of the reference lab, kept running by the HA manager: restarted on
# its node once after a failed start, then tried once on another node.
resource "pve_ha_resource" "vm100" {
  sid          = "vm:100"
  state        = "started"
  max_restart  = 1
  max_relocate = 1
  comment      = "reference lab VM"
}

# By the guest's id; kept stopped, but still recovered on another node if
# its node fails.
resource "pve_ha_resource" "vm101" {
  vmid  = 101
  state = "stopped"
}
