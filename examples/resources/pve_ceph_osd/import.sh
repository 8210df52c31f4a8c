# Import an OSD by node and OSD id (the OSD on the disk is found from PVE's disk list).
terraform import 'pve_ceph_osd.lab["z2g4a_sdb"]' z2g4a/0
# or by its disk:
terraform import 'pve_ceph_osd.lab["z2g4a_sdb"]' z2g4a/sdb
