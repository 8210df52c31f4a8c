# The reference lab: Ceph Squid from the no-subscription repository on every
# node, as the GUI's "Install Ceph" wizard did it. Nodes that have Squid
# already are adopted without running anything.
resource "pve_ceph_install" "lab" {
  for_each = toset(["z2g4a", "z2g4b", "z2g4c"])

  node       = each.key
  version    = "squid"
  repository = "no-subscription"
}

# Ceph's API answers only on nodes with the daemons installed.
resource "pve_ceph_cluster" "lab" {
  node       = "z2g4a"
  network    = "169.254.50.0/24"
  depends_on = [pve_ceph_install.lab]
}

# Removing pve_ceph_install from the configuration leaves Ceph installed:
# the provider never runs pveceph purge.
