package adopt_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// The storages of the reference lab built by hand (the installer's local
// and local-lvm, the RBD storage ceph from pveceph pool create): imports
// only, nothing written, empty plan after. shared, which only dir, lvm and
// a few others take, is not written for rbd and lvmthin (the resource
// would refuse it), nor where it is false.
func TestAccAdoptStorage(t *testing.T) {
	t.Parallel()
	a := adoptLab(t, "reference", "storage")
	checkImports(t, a.res, map[string]string{"pve_storage.local": "local", "pve_storage.local_lvm": "local-lvm", "pve_storage.ceph": "ceph"})
	tf := string(a.files["storage.tf"])
	for _, s := range []string{`pool    = "ceph"`, `path    = "/var/lib/vz"`, `thinpool = "data"`} {
		if !strings.Contains(tf, s) {
			t.Errorf("storage.tf lacks %q:\n%s", s, tf)
		}
	}
	if strings.Contains(tf, "shared") {
		t.Errorf("storage.tf sets shared:\n%s", tf)
	}
	a.env.Run(t, resource.TestCase{Steps: a.steps(t)})
}

// The diskless lab's pool and storage are testpool.
func TestAccAdoptStorageDiskless(t *testing.T) {
	t.Parallel()
	a := adoptLab(t, "diskless", "storage")
	checkImports(t, a.res, map[string]string{"pve_storage.local": "local", "pve_storage.local_lvm": "local-lvm", "pve_storage.testpool": "testpool"})
	checkImportCount(t, a.res, 3)
	if tf := string(a.files["storage.tf"]); !strings.Contains(tf, `pool    = "testpool"`) {
		t.Errorf("storage.tf lacks the pool testpool:\n%s", tf)
	}
	a.env.Run(t, resource.TestCase{Steps: a.steps(t)})
}

// Storages added besides the lab's: two directory storages whose ids map
// to one resource name (bk-1, bk_1) get distinct names; one shared by
// other means keeps shared = true (dir takes it).
func TestAccAdoptStorageNames(t *testing.T) {
	t.Parallel()
	e := acctest.HandBuiltLab(t, "reference")
	for _, s := range []struct {
		id, path string
		shared   bool
	}{{"bk-1", "/srv/bk1", true}, {"bk_1", "/srv/bk2", false}} {
		p := pve.Params{}
		p.Set("path", s.path)
		p.Set("content", "backup")
		if s.shared {
			p.SetBool("shared", true)
		}
		if err := e.Client.CreateStorage(context.Background(), s.id, "dir", p); err != nil {
			t.Fatal(err)
		}
	}
	a := adoptEnv(t, e, "storage")
	checkImports(t, a.res, map[string]string{"pve_storage.bk_1": "bk-1", "pve_storage.bk_1_2": "bk_1"})
	tf := string(a.files["storage.tf"])
	if strings.Count(tf, "shared") != 1 || !strings.Contains(tf, "shared  = true") {
		t.Errorf("want shared = true on bk-1 only:\n%s", tf)
	}
	a.env.Run(t, resource.TestCase{Steps: a.steps(t)})
}
