# Import an existing cluster by its name (the provider's endpoint must be a member).
terraform import pve_cluster.lab lab
