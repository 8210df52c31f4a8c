# By the HA resource id, or by the guest's id.
terraform import pve_ha_resource.vm100 vm:100
terraform import pve_ha_resource.vm100 100
