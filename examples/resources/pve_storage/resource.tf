# The reference lab's RBD storage on the cluster's own Ceph pool "ceph"
# (what pve_ceph_pool's add_storages creates; import it rather than adding
# it twice). Without monhost PVE uses the local Ceph cluster.
resource "pve_storage" "ceph" {
  storage = "ceph"
  type    = "rbd"
  pool    = "ceph"
  content = ["images", "rootdir"]
  krbd    = false
}

# ISO images and backups on an NFS server, mounted at /mnt/pve/nas.
resource "pve_storage" "nas" {
  storage       = "nas"
  type          = "nfs"
  server        = "10.0.0.5"
  export        = "/srv/pve"
  content       = ["iso", "vztmpl", "backup"]
  mount_options = "vers=4.2"
  prune_backups = "keep-last=3,keep-weekly=4"
}

# A thin pool on a data SSD of one node (see pve_node_lvmthin).
resource "pve_storage" "fast" {
  storage  = "fast"
  type     = "lvmthin"
  vgname   = "fast"
  thinpool = "fast"
  nodes    = ["z2g4a"]
}

# LINSTOR (the linstor-proxmox plugin, type drbd) with the resource group
# pve-rg; the plugin must be installed on every node.
resource "pve_storage" "linstor" {
  storage = "linstor"
  type    = "drbd"
  content = ["images", "rootdir"]
  options = {
    resourcegroup = "pve-rg"
    controller    = "10.33.80.7"
  }
}

# Vitastor's pool testpool (the vitastor plugin, installed on every node).
resource "pve_storage" "vitastor" {
  storage = "vitastor"
  type    = "vitastor"
  options = {
    vitastor_pool         = "testpool"
    vitastor_etcd_address = "10.33.80.7:2379"
  }
}
