data "pve_ceph_status" "lab" {
  depends_on = [pve_ceph_manager.mgr]
}

output "ceph_health" {
  value = {
    health    = data.pve_ceph_status.lab.health
    checks    = [for c in data.pve_ceph_status.lab.checks : "${c.name}: ${c.summary}"]
    quorum    = data.pve_ceph_status.lab.monitors.quorum_names
    osds_up   = "${data.pve_ceph_status.lab.osds.up}/${data.pve_ceph_status.lab.osds.total}"
    pgs_clean = "${data.pve_ceph_status.lab.pgs.active_clean}/${data.pve_ceph_status.lab.pgs.total}"
    degraded  = data.pve_ceph_status.lab.pgs.degraded_objects
    flags     = data.pve_ceph_status.lab.flags
  }
}

# Refuse to go on while Ceph is recovering, for example before replacing
# an OSD: every placement group must be active+clean.
resource "terraform_data" "ceph_healthy" {
  lifecycle {
    precondition {
      condition     = data.pve_ceph_status.lab.pgs.active_clean == data.pve_ceph_status.lab.pgs.total
      error_message = "Ceph is not clean: ${jsonencode(data.pve_ceph_status.lab.pgs.by_state)}"
    }
  }
}
