# Import the Ceph configuration by the name of any node of the cluster
# (/etc/pve/ceph.conf is shared; the node is used to read it).
terraform import pve_ceph_cluster.lab z2g4a
