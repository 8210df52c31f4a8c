# By the rule id.
terraform import pve_ha_rule.vm100_placement vm100_placement
