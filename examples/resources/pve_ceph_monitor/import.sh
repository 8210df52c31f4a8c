# Import a monitor by its id, which PVE makes the node name.
terraform import 'pve_ceph_monitor.mon["z2g4a"]' z2g4a
