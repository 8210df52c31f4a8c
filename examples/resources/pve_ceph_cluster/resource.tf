# Initialise Ceph for the reference lab: the public network (monitors,
# clients, OSDs) on the 40 GbE storage network, where every node has an
# address (169.254.50.10-12). Replication traffic uses it too, as
# cluster_network is not set. `pveceph install` must have run on every node.
#
# size 3 / min_size 2 are the defaults and the only safe choice on three
# nodes: min_size 1 lets Ceph accept writes with a single copy, and the
# next disk failure loses them. The provider refuses size < 3 and
# min_size 1 unless allow_unsafe_redundancy = true.
resource "pve_ceph_cluster" "lab" {
  node    = "z2g4a"
  network = "169.254.50.0/24"
}

output "ceph_fsid" {
  value = pve_ceph_cluster.lab.fsid
}
