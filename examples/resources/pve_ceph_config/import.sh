# Import one section as <node>/<target>/<who>: the node runs the ceph
# commands, target is config_db or ceph_conf. Every key the section holds
# becomes managed.
terraform import pve_ceph_config.osd z2g4a/config_db/osd
terraform import pve_ceph_config.client z2g4a/ceph_conf/client
