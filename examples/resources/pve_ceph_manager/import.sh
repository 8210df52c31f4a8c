# Import a manager by its id, which PVE makes the node name.
terraform import 'pve_ceph_manager.mgr["z2g4a"]' z2g4a
