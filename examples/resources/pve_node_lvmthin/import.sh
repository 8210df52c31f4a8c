# Thin pools are imported as <node>/<name>; PVE does not report the disk,
# so the first apply after an import records device.
terraform import pve_node_lvmthin.fast z2g4a/fast
