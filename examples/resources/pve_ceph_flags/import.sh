# The OSD flags are one per cluster; the ID is always "cluster". Import adopts
# every flag that is set, so the next plan shows which ones the configuration
# would clear.
terraform import pve_ceph_flags.this cluster
