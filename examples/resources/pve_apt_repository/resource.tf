# The reference lab's repositories on every node: the no-subscription
# repositories of PVE and Ceph Squid on, the enterprise ones off.
locals {
  nodes = ["z2g4a", "z2g4b", "z2g4c"]
}

resource "pve_apt_repository" "no_subscription" {
  for_each = toset(local.nodes)
  node     = each.key
  handle   = "no-subscription"
}

resource "pve_apt_repository" "enterprise" {
  for_each = toset(local.nodes)
  node     = each.key
  handle   = "enterprise"
  enabled  = false
}

resource "pve_apt_repository" "ceph_no_subscription" {
  for_each = toset(local.nodes)
  node     = each.key
  handle   = "ceph-squid-no-subscription"
}

resource "pve_apt_repository" "ceph_enterprise" {
  for_each = toset(local.nodes)
  node     = each.key
  handle   = "ceph-squid-enterprise"
  enabled  = false
}

# Any entry of a file can be managed by path and index, such as a
# hand-written repository (index counts entries from 0).
resource "pve_apt_repository" "debian_security" {
  node  = "z2g4a"
  path  = "/etc/apt/sources.list.d/debian.sources"
  index = 1
}
