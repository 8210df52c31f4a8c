# Import one section as <node>/<target>/<who>: the node runs the ceph
# commands, target is config_db or ceph_conf. Every key the section holds
# becomes managed.
terraform import pve_ceph_config.osd z2g4a/config_db/osd
terraform import pve_ceph_config.client z2g4a/ceph_conf/client

# apply and wait_for_active_clean are the provider's own settings, which
# Ceph cannot report: give them after ? as the configuration has them, and
# the plan after the import changes nothing.
terraform import pve_ceph_config.osd_conf 'z2g4a/ceph_conf/osd?apply=rolling_restart'
terraform import pve_ceph_config.mon 'z2g4a/config_db/mon?apply=rolling_restart&wait_for_active_clean=true'

# keys= imports only the named options (comma-separated) of a section, such
# as the ones set by hand in [global], which also holds what PVE writes
# itself (fsid, networks, mon_host): those stay with pve_ceph_cluster.
terraform import pve_ceph_config.global_conf 'z2g4a/ceph_conf/global?apply=rolling_restart&keys=mon_max_pg_per_osd'
