# The datacenter options are a singleton; the ID is always "cluster".
terraform import pve_cluster_options.this cluster
