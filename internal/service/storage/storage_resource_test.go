package storage_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

func getenv(k string) string { return os.Getenv(k) }

// A storage of every type the resource knows, including the LINSTOR and
// Vitastor plugin types (installed on every node), each checked in PVE's
// storage.cfg; then imported back.
func TestAccStorage_everyType(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	simOnly(t, e)
	node := e.Node(t, 0)
	if e.Sim != nil {
		for _, n := range e.Nodes {
			for _, p := range []string{"drbd", "vitastor"} {
				if err := e.Sim.InstallStoragePlugin(n, p); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	gluster := ""
	ids := []string{"acc-dir", "acc-nfs", "acc-lvm", "acc-thin", "acc-rbd", "acc-cephfs", "acc-linstor", "acc-vitastor"}
	if os.Getenv("PVESIM_RELEASE") == "8.4" {
		gluster = `
resource "pve_storage" "glusterfs" {
  storage = "acc-gluster"
  type    = "glusterfs"
  server  = "10.0.0.7"
  volume  = "gv0"
  content = ["images", "iso"]
}
`
		ids = append(ids, "acc-gluster")
	}
	cfg := e.Config(fmt.Sprintf(`
resource "pve_storage" "dir" {
  storage       = "acc-dir"
  type          = "dir"
  path          = "/srv/images"
  content       = ["iso", "vztmpl", "backup"]
  prune_backups = "keep-last=3"
  shared        = false
}

resource "pve_storage" "nfs" {
  storage       = "acc-nfs"
  type          = "nfs"
  server        = "10.0.0.5"
  export        = "/srv/backup"
  content       = ["backup"]
  mount_options = "vers=4.2"
}

resource "pve_storage" "lvm" {
  storage = "acc-lvm"
  type    = "lvm"
  vgname  = "pve"
  content = ["images"]
  nodes   = [%[1]q]
}

resource "pve_storage" "thin" {
  storage  = "acc-thin"
  type     = "lvmthin"
  vgname   = "pve"
  thinpool = "data"
  nodes    = [%[1]q]
}

resource "pve_storage" "rbd" {
  storage  = "acc-rbd"
  type     = "rbd"
  monhost  = "10.1.1.20 10.1.1.21 10.1.1.22"
  pool     = "vms"
  username = "admin"
  keyring  = "[client.admin]\n  key = AQBxyz==\n"
  krbd     = false
  content  = ["images", "rootdir"]
}

resource "pve_storage" "cephfs" {
  storage = "acc-cephfs"
  type    = "cephfs"
  monhost = "10.1.1.20"
  content = ["iso", "backup"]
  fs_name = "cephfs"
}

resource "pve_storage" "linstor" {
  storage = "acc-linstor"
  type    = "drbd"
  content = ["images", "rootdir"]
  options = {
    resourcegroup = "pve-rg"
    controller    = "10.0.0.5"
    preferlocal   = "yes"
  }
}

resource "pve_storage" "vitastor" {
  storage = "acc-vitastor"
  type    = "vitastor"
  options = {
    vitastor_pool         = "testpool"
    vitastor_etcd_address = "10.0.0.1:2379"
    vitastor_nbd          = "0"
  }
}
%[2]s
`, node, gluster))
	steps := []resource.TestStep{{
		Config: cfg,
		Check: resource.ComposeAggregateTestCheckFunc(
			checkStorage(e, "acc-dir", wantOptions(map[string]string{"type": "dir", "path": "/srv/images", "content": "backup,iso,vztmpl", "prune-backups": "keep-last=3"})),
			checkStorage(e, "acc-nfs", wantOptions(map[string]string{"server": "10.0.0.5", "export": "/srv/backup", "path": "/mnt/pve/acc-nfs", "options": "vers=4.2"})),
			checkStorage(e, "acc-lvm", wantOptions(map[string]string{"vgname": "pve", "nodes": node})),
			checkStorage(e, "acc-thin", wantOptions(map[string]string{"vgname": "pve", "thinpool": "data", "content": "images,rootdir"})),
			checkStorage(e, "acc-rbd", wantOptions(map[string]string{"monhost": "10.1.1.20 10.1.1.21 10.1.1.22", "pool": "vms", "krbd": "0", "keyring": ""})),
			checkStorage(e, "acc-cephfs", wantOptions(map[string]string{"fs-name": "cephfs", "path": "/mnt/pve/acc-cephfs", "content": "backup,iso"})),
			checkStorage(e, "acc-linstor", wantOptions(map[string]string{"type": "drbd", "resourcegroup": "pve-rg", "controller": "10.0.0.5", "preferlocal": "yes"})),
			checkStorage(e, "acc-vitastor", wantOptions(map[string]string{"type": "vitastor", "vitastor_pool": "testpool", "vitastor_nbd": "0", "content": "images"})),
			resource.TestCheckResourceAttr("pve_storage.nfs", "path", "/mnt/pve/acc-nfs"),
			resource.TestCheckResourceAttr("pve_storage.nfs", "shared", "true"),
			resource.TestCheckResourceAttr("pve_storage.vitastor", "content.#", "1"),
			resource.TestCheckResourceAttr("pve_storage.linstor", "shared", "true"),
		),
	}}
	for _, r := range []string{"dir", "nfs", "lvm", "thin", "rbd", "cephfs", "linstor", "vitastor"} {
		steps = append(steps, resource.TestStep{
			Config: cfg, ResourceName: "pve_storage." + r, ImportState: true, ImportStateVerify: true,
			ImportStateVerifyIgnore: []string{"keyring"},
		})
	}
	e.Run(t, resource.TestCase{CheckDestroy: checkStoragesGone(e, ids...), Steps: steps})
}

// Every changeable setting is updated in place; changes made outside
// Terraform show as drift and are put back.
func TestAccStorage_updateInPlaceAndDrift(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	simOnly(t, e)
	node := e.Node(t, 0)
	cfg := func(body string) string {
		return e.Config(`
resource "pve_storage" "rbd" {
  storage = "acc-ext"
  type    = "rbd"
  monhost = "10.1.1.20"
` + body + `
}
`)
	}
	const addr = "pve_storage.rbd"
	update := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)}}
	e.Run(t, resource.TestCase{
		CheckDestroy: checkStoragesGone(e, "acc-ext"),
		Steps: []resource.TestStep{
			{
				Config: cfg(`  pool = "vms"`),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkStorage(e, "acc-ext", wantOptions(map[string]string{"pool": "vms", "content": "images", "krbd": "", "disable": "false"})),
					resource.TestCheckResourceAttr(addr, "content.#", "1"),
					resource.TestCheckResourceAttr(addr, "content.0", "images"),
				),
			},
			{
				Config: cfg(fmt.Sprintf(`
  pool      = "vms-ssd"
  krbd      = true
  content   = ["images", "rootdir"]
  nodes     = [%q]
  disable   = true
  namespace = "lab"
  options   = { bwlimit = "migration=102400" }
`, node)),
				ConfigPlanChecks: update,
				Check: checkStorage(e, "acc-ext", wantOptions(map[string]string{
					"pool": "vms-ssd", "krbd": "1", "content": "images,rootdir", "nodes": node, "disable": "true", "namespace": "lab", "bwlimit": "migration=102400",
				})),
			},
			{
				// Back: unset keys are deleted in PVE, not left behind.
				Config:           cfg(`  pool = "vms"`),
				ConfigPlanChecks: update,
				Check: checkStorage(e, "acc-ext", wantOptions(map[string]string{
					"pool": "vms", "krbd": "", "nodes": "", "disable": "false", "namespace": "", "bwlimit": "",
				})),
			},
			{
				PreConfig: func() {
					p := pve.Params{"pool": "other", "bwlimit": "clone=1000"}
					p.SetBool("krbd", true)
					updateStorage(t, e, "acc-ext", p)
				},
				Config:             cfg(`  pool = "vms"`),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				Config:           cfg(`  pool = "vms"`),
				ConfigPlanChecks: update,
				Check:            checkStorage(e, "acc-ext", wantOptions(map[string]string{"pool": "vms", "krbd": "", "bwlimit": ""})),
			},
			{
				// Gone outside Terraform: planned again as a create.
				PreConfig: func() {
					if err := e.RootClient(t).DeleteStorage(t.Context(), "acc-ext"); err != nil {
						t.Fatal(err)
					}
				},
				Config:             cfg(`  pool = "vms"`),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
		},
	})
}

// Fixed options, the id and the type are refused at plan with the reason,
// never replaced; type-foreign attributes and content are refused too.
func TestAccStorage_refusedAtPlan(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	simOnly(t, e)
	cfg := func(id, typ, body string) string {
		return e.Config(fmt.Sprintf(`
resource "pve_storage" "s" {
  storage = %q
  type    = %q
%s
}
`, id, typ, body))
	}
	thin := `
  vgname   = "pve"
  thinpool = "data"
`
	e.Run(t, resource.TestCase{
		CheckDestroy: checkStoragesGone(e, "acc-fixed"),
		Steps: []resource.TestStep{
			{Config: cfg("acc-fixed", "lvmthin", `  pool = "tank"`+thin), PlanOnly: true,
				ExpectError: errorRE(`(?s)Attribute does not apply to this storage type.*pool is an option of storage type zfspool or rbd, not of lvmthin`)},
			{Config: cfg("acc-fixed", "lvmthin", `  vgname = "pve"`), PlanOnly: true,
				ExpectError: errorRE(`(?s)Missing required attribute.*needs thinpool`)},
			{Config: cfg("acc-fixed", "lvmthin", `  content = ["iso"]`+thin), PlanOnly: true,
				ExpectError: errorRE(`(?s)Content type not supported.*cannot hold "iso"`)},
			{Config: cfg("acc-fixed", "rbd", `  shared = true`), PlanOnly: true,
				ExpectError: errorRE(`(?s)shared is not settable for this type`)},
			{Config: cfg("acc-fixed", "drbd", `  options = { controller = "10.0.0.5" }`), PlanOnly: true,
				ExpectError: errorRE(`(?s)Missing required option.*options.resourcegroup`)},
			{Config: cfg("acc-fixed", "lvmthin", thin)},
			{Config: cfg("acc-fixed", "lvmthin", `
  vgname   = "pve"
  thinpool = "other"
`), PlanOnly: true, ExpectError: errorRE(`(?s)Cannot change thinpool of a lvmthin storage.*fixed parameter 'thinpool'.*would orphan the volumes`)},
			{Config: cfg("acc-renamed", "lvmthin", thin), PlanOnly: true, ExpectError: errorRE(`(?s)Cannot change storage of a storage`)},
			{Config: cfg("acc-fixed", "lvm", `  vgname = "pve"`), PlanOnly: true, ExpectError: errorRE(`(?s)Cannot change type of a storage`)},
			{
				Config:           cfg("acc-fixed", "lvmthin", thin+`  content = ["images"]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("pve_storage.s", plancheck.ResourceActionUpdate)}},
				Check:            checkStorage(e, "acc-fixed", wantOptions(map[string]string{"content": "images"})),
			},
		},
	})
}

// A plugin type on nodes without the plugin is refused at plan with what
// to install.
func TestAccStorage_pluginNotInstalled(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	simOnly(t, e)
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{{
			Config: e.Config(`
resource "pve_storage" "linstor" {
  storage = "acc-linstor"
  type    = "drbd"
  options = { resourcegroup = "pve-rg" }
}
`),
			ExpectError: errorRE(`(?s)Storage plugin not installed.*PVE does not know storage type drbd.*value 'drbd' does not have a value in the enumeration.*linstor-proxmox`),
		}},
	})
}

// pve_storages lists storage.cfg and, with a node, that node's view.
func TestAccStoragesDataSource(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	node := e.Node(t, 0)
	const ds = "data.pve_storages.images"
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{{
			Config: e.Config(fmt.Sprintf(`
data "pve_storages" "all" {}

data "pve_storages" "images" {
  node    = %q
  content = "images"
}
`, node)),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckTypeSetElemNestedAttrs("data.pve_storages.all", "storages.*", map[string]string{"storage": "local", "type": "dir", "options.path": "/var/lib/vz"}),
				resource.TestCheckTypeSetElemNestedAttrs("data.pve_storages.all", "storages.*", map[string]string{"storage": "local-lvm", "type": "lvmthin", "options.vgname": "pve"}),
				resource.TestCheckNoResourceAttr("data.pve_storages.all", "storages.0.total"),
				resource.TestCheckTypeSetElemNestedAttrs(ds, "storages.*", map[string]string{"storage": "local-lvm", "active": "true", "enabled": "true"}),
				resource.TestCheckResourceAttrWith(ds, "storages.#", func(v string) error {
					list, err := e.Client.NodeStorage(t.Context(), node, pve.NodeStorageQuery{Content: "images"})
					if err != nil {
						return err
					}
					if v != fmt.Sprint(len(list)) {
						return fmt.Errorf("%s storages, PVE lists %d", v, len(list))
					}
					return nil
				}),
			),
		}},
	})
}

// A storage create (POST /storage) or update (PUT, with a digest) whose
// answer is lost, before PVE acted or after, converges in that apply:
// read back, sent again only when storage.cfg shows PVE did not act. The
// reference lab failed "Unable to Create storage ceph ... EOF".
func TestAccStorage_answerLost(t *testing.T) {
	t.Parallel()
	acctest.EachDrop(t, func(t *testing.T, drop string) {
		e := acctest.New(t)
		simOnly(t, e)
		cfg := func(pool string) string {
			return e.Config(fmt.Sprintf(`
resource "pve_storage" "rbd" {
  storage = "acc-lost"
  type    = "rbd"
  monhost = "10.1.1.20"
  pool    = %q
}
`, pool))
		}
		create := e.LostAnswerCase("POST", "/storage", drop, 1, cfg("vms"),
			checkStorage(e, "acc-lost", wantOptions(map[string]string{"pool": "vms"})))
		update := e.LostAnswerCase("PUT", "/storage/acc-lost", drop, 1, cfg("vms-ssd"),
			checkStorage(e, "acc-lost", wantOptions(map[string]string{"pool": "vms-ssd"})))
		e.Run(t, resource.TestCase{CheckDestroy: checkStoragesGone(e, "acc-lost"), Steps: append(create.Steps, update.Steps...)})
	})
}
