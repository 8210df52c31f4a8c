package ceph_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

// adoptReadOnly are the programs (and ceph subcommands) an adoption may
// run over SSH: reading only.
func adoptReadOnlySSH(line string) bool {
	f := strings.Fields(line)
	if len(f) == 0 {
		return false
	}
	switch f[0] {
	case "cat", "stat", "dpkg-query":
		return true
	case "systemctl":
		return len(f) > 1 && f[1] == "show"
	case "ceph":
		for _, w := range f[1:] {
			switch w {
			case "set", "rm", "restart", "create", "destroy", "out", "in", "unset":
				return false
			}
		}
		return true
	}
	return false
}

// adoptCephHCL is the configuration the hand-built lab's user writes for
// its Ceph (examples/homelab/ceph.tf's shape, pg_num left to the
// autoscaler), with an import block per resource. osdBackfills adds the
// config-database-only leftover to the HCL.
func adoptCephHCL(nodes []string, osdBackfills bool, memTarget string) string {
	first := nodes[0]
	var b strings.Builder
	fmt.Fprintf(&b, `
locals {
  nodes = toset(%s)
  osds = {
    for pair in setproduct(tolist(local.nodes), ["sdb", "sdc"]) :
    "${pair[0]}/${pair[1]}" => { node = pair[0], device = "/dev/${pair[1]}" }
  }
}

resource "pve_ceph_install" "lab" {
  for_each   = local.nodes
  node       = each.key
  version    = "squid"
  repository = "no-subscription"
}

resource "pve_ceph_cluster" "lab" {
  node       = %q
  network    = "169.254.50.0/24"
  depends_on = [pve_ceph_install.lab]
}

resource "pve_ceph_monitor" "lab" {
  for_each   = local.nodes
  node       = each.key
  depends_on = [pve_ceph_cluster.lab]
}

resource "pve_ceph_manager" "lab" {
  for_each   = local.nodes
  node       = each.key
  depends_on = [pve_ceph_monitor.lab]
}

resource "pve_ceph_osd" "lab" {
  for_each   = local.osds
  node       = each.value.node
  device     = each.value.device
  depends_on = [pve_ceph_manager.lab]
}

resource "pve_ceph_pool" "ceph" {
  name              = "ceph"
  node              = %q
  size              = 3
  min_size          = 2
  application       = "rbd"
  pg_autoscale_mode = "on"
  depends_on        = [pve_ceph_osd.lab]
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
    keyring                            = "/etc/pve/priv/$cluster.$name.keyring"
    rbd_cache                          = "true"
    rbd_cache_writethrough_until_flush = "true"
  }
}
`, hclList(nodes), first, first, first, memTarget, first)
	if osdBackfills {
		fmt.Fprintf(&b, `
resource "pve_ceph_config" "osd_db" {
  node     = %q
  who      = "osd"
  settings = { osd_max_backfills = "2" }
}

import {
  to = pve_ceph_config.osd_db
  id = "%s/config_db/osd"
}
`, first, first)
	}
	fmt.Fprintf(&b, `
import {
  to = pve_ceph_cluster.lab
  id = %q
}
import {
  to = pve_ceph_pool.ceph
  id = "%s/ceph"
}
import {
  to = pve_ceph_config.osd_conf
  id = "%s/ceph_conf/osd"
}
import {
  to = pve_ceph_config.client
  id = "%s/ceph_conf/client"
}
`, first, first, first, first)
	for i, n := range nodes {
		fmt.Fprintf(&b, `
import {
  to = pve_ceph_install.lab[%[1]q]
  id = %[1]q
}
import {
  to = pve_ceph_monitor.lab[%[1]q]
  id = %[1]q
}
import {
  to = pve_ceph_manager.lab[%[1]q]
  id = %[1]q
}
import {
  to = pve_ceph_osd.lab["%[1]s/sdb"]
  id = "%[1]s/%[2]d"
}
import {
  to = pve_ceph_osd.lab["%[1]s/sdc"]
  id = "%[1]s/%[3]d"
}
`, n, 2*i, 2*i+1)
	}
	return b.String()
}

func hclList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// adoptAddrs are the resource addresses of adoptCephHCL.
func adoptAddrs(nodes []string, osdBackfills bool) []string {
	a := []string{"pve_ceph_cluster.lab", "pve_ceph_pool.ceph", "pve_ceph_config.osd_conf", "pve_ceph_config.client"}
	if osdBackfills {
		a = append(a, "pve_ceph_config.osd_db")
	}
	for _, n := range nodes {
		a = append(a, fmt.Sprintf("pve_ceph_install.lab[%q]", n), fmt.Sprintf("pve_ceph_monitor.lab[%q]", n),
			fmt.Sprintf("pve_ceph_manager.lab[%q]", n), fmt.Sprintf(`pve_ceph_osd.lab["%s/sdb"]`, n), fmt.Sprintf(`pve_ceph_osd.lab["%s/sdc"]`, n))
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
			if acctest.Live() {
				t.Skip("needs pvesim's hand-built lab")
			}
			lab, err := pvesim.ShippedLab("reference")
			if err != nil {
				t.Fatal(err)
			}
			lab.Start = pvesim.StartHandBuilt
			e := acctest.NewWithOptions(t, pvesim.Options{Lab: lab})
			config := e.Config(adoptCephHCL(e.Nodes, backfills, "8589934592"))
			var checks []plancheck.PlanCheck
			for _, a := range adoptAddrs(e.Nodes, backfills) {
				checks = append(checks, plancheck.ExpectResourceAction(a, plancheck.ResourceActionNoop))
			}
			var from, sshFrom int
			e.Run(t, resource.TestCase{Steps: []resource.TestStep{
				{
					PreConfig:        func() { from, sshFrom = len(e.Sim.Requests()), len(e.Sim.SSHCommands()) },
					Config:           config,
					ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: checks},
					Check: func(*terraform.State) error {
						for _, r := range e.Sim.Requests()[from:] {
							if r.Method != "GET" && !strings.HasPrefix(r.Path, "/access/") {
								return fmt.Errorf("adoption wrote to the cluster: %s %s", r.Method, r.Path)
							}
						}
						for _, c := range e.Sim.SSHCommands()[sshFrom:] {
							if !adoptReadOnlySSH(c.Line) {
								return fmt.Errorf("adoption ran a writing command on %s: %s", c.Node, c.Line)
							}
						}
						return nil
					},
				},
				{Config: config, PlanOnly: true},
			}})
		})
	}
}
