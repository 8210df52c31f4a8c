# By the group id.
terraform import pve_ha_group.ab ab
