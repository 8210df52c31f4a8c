# The reference lab sets the rings of its storage NIC, the ConnectX-3 port
# cx354ap1 (mlx4_en, 40 GbE, MTU 9000), to 2048 on every node: 4096 measured
# worse, RX/TX queues stay at their defaults. The BCM5720 ports (tg3) would
# refuse this: their maxima are rx 2047 and tx 511.
#
# The sizes are applied now and by the enabled unit
# pve-nic-ring-cx354ap1.service whenever the device appears (every boot).
resource "pve_node_nic_ring" "storage" {
  for_each = toset(["z2g4a", "z2g4b", "z2g4c"])

  node  = each.key
  iface = "cx354ap1"
  rx    = 2048
  tx    = 2048
}
