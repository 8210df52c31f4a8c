# A ZFS mirror "tank" on the two free data SSDs of z2g4b, with lz4
# compression, and a thin-provisioned zfspool storage on it.
resource "pve_node_zfs" "tank" {
  node        = "z2g4b"
  name        = "tank"
  devices     = ["/dev/sdb", "/dev/sdc"]
  raidlevel   = "mirror"
  ashift      = 12
  compression = "lz4"
}

resource "pve_storage" "tank" {
  storage   = "tank"
  type      = "zfspool"
  pool      = pve_node_zfs.tank.name
  sparse    = true
  blocksize = "16k"
  nodes     = [pve_node_zfs.tank.node]
}
