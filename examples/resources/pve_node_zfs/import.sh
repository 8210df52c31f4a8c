# ZFS pools are imported as <node>/<name>; devices and raidlevel are read
# from zpool status, ashift and compression recorded by the first apply.
terraform import pve_node_zfs.tank z2g4b/tank
