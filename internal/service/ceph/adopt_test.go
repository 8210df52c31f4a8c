package ceph_test

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

// adoptCephHCL is the configuration the hand-built lab's user writes for
// its Ceph (examples/homelab/ceph.tf's shape, pg_num left to the
// autoscaler), with an import block per resource. Resources per node are
// written out (not for_each): the testing framework's state shim cannot
// hold for_each keys. osdBackfills adds the config-database-only leftover
// to the HCL.
func adoptCephHCL(nodes []string, osdBackfills bool, memTarget string) string {
	first := nodes[0]
	var b strings.Builder
	imp := func(to, id string) { fmt.Fprintf(&b, "import {\n  to = %s\n  id = %q\n}\n", to, id) }
	var installs, osds []string
	for i, n := range nodes {
		fmt.Fprintf(&b, `
resource "pve_ceph_install" %[1]q {
  node       = %[1]q
  version    = "squid"
  repository = "no-subscription"
}
resource "pve_ceph_monitor" %[1]q {
  node       = %[1]q
  depends_on = [pve_ceph_cluster.lab]
}
resource "pve_ceph_manager" %[1]q {
  node       = %[1]q
  depends_on = [pve_ceph_monitor.%[1]s]
}
`, n)
		imp("pve_ceph_install."+n, n)
		imp("pve_ceph_monitor."+n, n)
		imp("pve_ceph_manager."+n, n)
		installs = append(installs, "pve_ceph_install."+n)
		for j, dev := range []string{"sdb", "sdc"} {
			name := n + "_" + dev
			fmt.Fprintf(&b, "resource \"pve_ceph_osd\" %q {\n  node = %q\n  device = \"/dev/%s\"\n  depends_on = [pve_ceph_manager.%s]\n}\n", name, n, dev, n)
			// By device (the OSD on it is looked up), and once by id: the
			// build log created sdb then sdc node by node, so the first
			// node's sdc is osd.1.
			id := n + "/" + dev
			if i == 0 && j == 1 {
				id = n + "/1"
			}
			imp("pve_ceph_osd."+name, id)
			osds = append(osds, "pve_ceph_osd."+name)
		}
	}
	fmt.Fprintf(&b, `
resource "pve_ceph_cluster" "lab" {
  node       = %q
  network    = "169.254.50.0/24"
  depends_on = [%s]
}

resource "pve_ceph_pool" "ceph" {
  name              = "ceph"
  node              = %q
  size              = 3
  min_size          = 2
  application       = "rbd"
  pg_autoscale_mode = "on"
  depends_on        = [%s]
}

resource "pve_ceph_config" "osd_conf" {
  node   = %q
  who    = "osd"
  target = "ceph_conf"
  apply  = "rolling_restart"
  settings = {
    osd_memory_target   = %q
    bdev_enable_discard = "true"
  }
}

resource "pve_ceph_config" "client" {
  node   = %q
  who    = "client"
  target = "ceph_conf"
  settings = {
    rbd_cache                          = "true"
    rbd_cache_writethrough_until_flush = "true"
  }
}
`, first, strings.Join(installs, ", "), first, strings.Join(osds, ", "), first, memTarget, first)
	// No OSD flag is set in the lab: the user adopts the (empty) set so
	// that a maintenance flag left set later shows in the plan.
	b.WriteString("resource \"pve_ceph_flags\" \"this\" {}\n")
	imp("pve_ceph_flags.this", "cluster")
	imp("pve_ceph_cluster.lab", first)
	imp("pve_ceph_pool.ceph", first+"/ceph")
	// apply is the provider's own setting: the import records it; keys
	// limits each section to the lines set by hand, so that PVE's own
	// (the [client] keyring) stay unmanaged.
	imp("pve_ceph_config.osd_conf", first+"/ceph_conf/osd?apply=rolling_restart&keys=bdev_enable_discard,osd_memory_target")
	imp("pve_ceph_config.client", first+"/ceph_conf/client?keys=rbd_cache,rbd_cache_writethrough_until_flush")
	if osdBackfills {
		fmt.Fprintf(&b, `
resource "pve_ceph_config" "osd_db" {
  node     = %q
  who      = "osd"
  settings = { osd_max_backfills = "2" }
}
`, first)
		imp("pve_ceph_config.osd_db", first+"/config_db/osd")
	}
	return b.String()
}

// adoptAddrs are the resource addresses of adoptCephHCL.
func adoptAddrs(nodes []string, osdBackfills bool) []string {
	a := []string{"pve_ceph_flags.this", "pve_ceph_cluster.lab", "pve_ceph_pool.ceph", "pve_ceph_config.osd_conf", "pve_ceph_config.client"}
	if osdBackfills {
		a = append(a, "pve_ceph_config.osd_db")
	}
	for _, n := range nodes {
		a = append(a, "pve_ceph_install."+n, "pve_ceph_monitor."+n, "pve_ceph_manager."+n, "pve_ceph_osd."+n+"_sdb", "pve_ceph_osd."+n+"_sdc")
	}
	return a
}

// The Ceph of the lab built by hand adopted with import blocks: the plan
// imports and changes nothing, the apply writes nothing (no API write, no
// writing command over SSH), the next plan is empty (issue #12). Both
// ways with the leftover osd_max_backfills: adopted into HCL, or left
// unmanaged (and untouched).
func TestAccCephAdoptHandBuilt(t *testing.T) {
	for _, backfills := range []bool{false, true} {
		t.Run(fmt.Sprintf("osd_max_backfills_in_hcl=%v", backfills), func(t *testing.T) {
			t.Parallel()
			e := acctest.HandBuilt(t)
			config := e.Config(adoptCephHCL(e.Nodes, backfills, "8589934592"))
			var checks []plancheck.PlanCheck
			for _, a := range adoptAddrs(e.Nodes, backfills) {
				checks = append(checks, plancheck.ExpectResourceAction(a, plancheck.ResourceActionNoop))
			}
			var from, sshFrom int
			var conf string
			e.Run(t, resource.TestCase{Steps: []resource.TestStep{
				{
					PreConfig: func() {
						from, sshFrom = len(e.Sim.Requests()), len(e.Sim.SSHCommands())
						conf = readCephConf(t, e, e.Node(t, 0))
					},
					Config:           config,
					ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: checks},
				},
				{
					// Checked here: Check's terraform.State cannot hold for_each keys.
					PreConfig: func() {
						checkNoWrites(t, e, from, sshFrom)
						// Adopted or not, the leftover stays as it was, and
						// ceph.conf (its hand comment included) is untouched.
						if got := e.Sim.CephConfigDB()["osd"]["osd_max_backfills"]; got != "2" {
							t.Errorf("osd_max_backfills in the config database is %q after the adoption, want 2", got)
						}
						if got := readCephConf(t, e, e.Node(t, 0)); got != conf || !strings.Contains(got, "# 8 GiB per OSD") {
							t.Errorf("ceph.conf after the adoption:\n%s\nbefore:\n%s", got, conf)
						}
					},
					Config: config, PlanOnly: true,
				},
				acctest.ForgetStep(e.Config(""), adoptAddrs(e.Nodes, backfills)...),
			}})
		})
	}
}

// checkNoWrites fails t if any API write or writing SSH command was sent
// since the request and SSH log lengths from and sshFrom.
func checkNoWrites(t *testing.T, e *acctest.Env, from, sshFrom int) {
	t.Helper()
	for _, r := range e.Sim.Requests()[from:] {
		if r.Method != "GET" && !strings.HasPrefix(r.Path, "/access/") {
			t.Errorf("adoption wrote to the cluster: %s %s", r.Method, r.Path)
		}
	}
	cmds := e.Sim.SSHCommands()[sshFrom:]
	if len(cmds) == 0 {
		t.Errorf("no SSH command recorded: the ceph.conf sections are read over SSH")
	}
	for _, c := range cmds {
		if !acctest.ReadOnlySSH(c.Argv) {
			t.Errorf("adoption ran a writing command on %s: %s", c.Node, c.Line)
		}
	}
}

// After the adoption, the one-line edit of osd_memory_target in the
// hand-written [osd] section plans exactly that change, and its apply
// restarts every OSD one host at a time (ceph.conf is read when a daemon
// starts), keeping the hand comment and the [client] lines (issue #12).
func TestAccCephAdoptHandBuilt_editRestarts(t *testing.T) {
	t.Parallel()
	e := acctest.HandBuiltLabWith(t, "reference", pvesim.Options{CephTimeScale: 10})
	first := e.Node(t, 0)
	addrs := adoptAddrs(e.Nodes, false)
	var noop []plancheck.PlanCheck
	for _, a := range addrs {
		if a != "pve_ceph_config.osd_conf" {
			noop = append(noop, plancheck.ExpectResourceAction(a, plancheck.ResourceActionNoop))
		}
	}
	cephConf := func() string { return readCephConf(t, e, first) }
	var before string
	var start time.Time
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		{Config: e.Config(adoptCephHCL(e.Nodes, false, "8589934592"))},
		{
			PreConfig: func() { before, start = cephConf(), time.Now() },
			Config:    e.Config(adoptCephHCL(e.Nodes, false, "6442450944")),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: append(noop,
				plancheck.ExpectResourceAction("pve_ceph_config.osd_conf", plancheck.ResourceActionUpdate),
				plancheck.ExpectKnownValue("pve_ceph_config.osd_conf", tfjsonpath.New("settings"), knownvalue.MapExact(map[string]knownvalue.Check{
					"osd_memory_target": knownvalue.StringExact("6442450944"), "bdev_enable_discard": knownvalue.StringExact("true"),
				})),
			)},
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("pve_ceph_config.osd_conf", "pending_restart.#", "0"),
				safeRestart(e),
				func(*terraform.State) error {
					if got, want := e.CephRestartsSince(start), []string{"osd.0", "osd.1", "osd.2", "osd.3", "osd.4", "osd.5"}; !reflect.DeepEqual(got, want) {
						return fmt.Errorf("restarted %v, want %v", got, want)
					}
					if n := e.Sim.CephMaxHostsDownAtOnce(); n != 1 {
						return fmt.Errorf("%d hosts had OSDs down at once, want exactly 1 (%v)", n, e.Sim.CephDownHistory())
					}
					// Only that line changed.
					if after, want := cephConf(), strings.Replace(before, "osd_memory_target = 8589934592", "osd_memory_target = 6442450944", 1); after != want || after == before {
						return fmt.Errorf("ceph.conf after the edit:\n%s\nwant:\n%s", after, want)
					}
					return nil
				},
			),
		},
		{Config: e.Config(adoptCephHCL(e.Nodes, false, "6442450944")), PlanOnly: true},
		acctest.ForgetStep(e.Config(""), addrs...),
	}})
}

// An OSD imported by device names what is wrong when the disk is not
// there or holds no OSD.
func TestAccCephAdoptHandBuilt_osdImportByDeviceErrors(t *testing.T) {
	t.Parallel()
	e := acctest.HandBuilt(t)
	node := e.Node(t, 0)
	cfg := func(id string) string {
		return e.Config(fmt.Sprintf(`
resource "pve_ceph_osd" "x" {
  node   = %q
  device = "/dev/sdb"
}
import {
  to = pve_ceph_osd.x
  id = %q
}
`, node, id))
	}
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		{Config: cfg(node + "/sdz"), PlanOnly: true, ExpectError: regexp.MustCompile(`node ` + node + ` has no disk /dev/sdz; PVE lists /dev/nvme0n1, /dev/sda`)},
		{Config: cfg(node + "//dev/sda"), PlanOnly: true, ExpectError: regexp.MustCompile(`/dev/sda on ` + node + ` holds no Ceph OSD`)},
	}})
}

// readCephConf is /etc/pve/ceph.conf as node reads it, over SSH.
func readCephConf(t *testing.T, e *acctest.Env, node string) string {
	t.Helper()
	res, err := e.NodeExec(t).Run(context.Background(), node, nodeexec.Cmd("cat", "/etc/pve/ceph.conf"))
	if err != nil {
		t.Fatal(err)
	}
	return string(res.Stdout)
}
