package storage_test

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

// The storages of the lab built by hand (the installer's local and
// local-lvm, the RBD storage ceph that pveceph pool create added) adopted
// with import blocks: imports only, no write, empty plan after (issue #12).
func TestAccStorage_adoptHandBuilt(t *testing.T) {
	t.Parallel()
	if acctest.Live() {
		t.Skip("needs pvesim's hand-built lab")
	}
	e := acctest.HandBuilt(t)
	config := e.Config(`
resource "pve_storage" "local" {
  storage = "local"
  type    = "dir"
  path    = "/var/lib/vz"
  content = ["iso", "vztmpl", "backup"]
}

resource "pve_storage" "local_lvm" {
  storage  = "local-lvm"
  type     = "lvmthin"
  vgname   = "pve"
  thinpool = "data"
  content  = ["rootdir", "images"]
}

resource "pve_storage" "ceph" {
  storage = "ceph"
  type    = "rbd"
  pool    = "ceph"
  content = ["images", "rootdir"]
  krbd    = false
}

import {
  to = pve_storage.local
  id = "local"
}

import {
  to = pve_storage.local_lvm
  id = "local-lvm"
}

import {
  to = pve_storage.ceph
  id = "ceph"
}
`)
	e.Run(t, resource.TestCase{Steps: e.AdoptSteps(config, "pve_storage.local", "pve_storage.local_lvm", "pve_storage.ceph")})
}
