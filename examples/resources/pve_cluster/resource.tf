# Create the cluster on the node the provider's endpoint points at (z2g4a),
# with link0 on the corosync VLAN and link1 on the storage network as backup.
# Creating a cluster needs root@pam with a password in the provider block.
resource "pve_cluster" "lab" {
  name = "lab"
  links = [
    { address = "169.254.60.10" },
    { address = "169.254.50.10", priority = 10 },
  ]
}

output "cluster_fingerprint" {
  value = pve_cluster.lab.fingerprint
}
