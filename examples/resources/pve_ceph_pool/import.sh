# Ceph pools are imported as <node>/<pool>, the node being the one whose API
# the provider uses. The first apply after an import records add_storages.
terraform import pve_ceph_pool.ceph z2g4a/ceph
