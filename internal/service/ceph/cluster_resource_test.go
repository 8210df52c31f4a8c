package ceph_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// Helpers shared by the cluster, monitor, manager and status tests carry
// the prefix "core" (other Ceph tests live in this package too).

var coreNodes = []string{"z2g4a", "z2g4b", "z2g4c"}

// coreEnv starts a clustered reference lab without Ceph. Against a real
// cluster the tests build Ceph from nothing, so they need one without it
// and PVE_ACC_CEPH_FRESH=1.
func coreEnv(t *testing.T) *acctest.Env {
	t.Helper()
	e := acctest.New(t)
	if e.Sim == nil && os.Getenv("PVE_ACC_CEPH_FRESH") == "" {
		t.Skip("initialises Ceph: needs a cluster without Ceph and PVE_ACC_CEPH_FRESH=1")
	}
	if e.Sim != nil {
		coreStorageNetwork(t, e)
	}
	return e
}

// coreStorageNetwork gives every node its reference-lab storage address
// (cx354ap1, 169.254.50.1x/24), the Ceph public network, as the user
// configures it before Ceph.
func coreStorageNetwork(t *testing.T, e *acctest.Env) {
	t.Helper()
	ctx := context.Background()
	for i, n := range coreNodes {
		cidr := fmt.Sprintf("169.254.50.%d/24", 10+i)
		auto := true
		if err := e.Client.UpdateNetworkInterface(ctx, n, "cx354ap1", pve.NetworkInterfaceRequest{Type: "eth", CIDR: &cidr, Autostart: &auto}); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		upid, err := e.Client.ApplyNetwork(ctx, n)
		if _, err := e.Client.Await(ctx, upid, err); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
	}
}

// coreRE compiles an expected error; spaces match any whitespace, since
// Terraform wraps long diagnostics.
func coreRE(pattern string) *regexp.Regexp {
	return regexp.MustCompile(strings.ReplaceAll(pattern, " ", `\s+`))
}

// coreConf reads /etc/pve/ceph.conf through PVE.
func coreConf(e *acctest.Env) (pve.CephConfig, error) {
	raw, err := e.Client.CephConfigRaw(context.Background(), "z2g4b")
	if err != nil {
		return nil, err
	}
	return pve.ParseCephConfig(raw), nil
}

func coreCheckConf(e *acctest.Env, want map[string]string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		conf, err := coreConf(e)
		if err != nil {
			return err
		}
		for k, v := range want {
			got := conf.Get("global", k)
			if k == "mon_host" { // in creation order, which is parallel
				f := strings.Fields(got)
				sort.Strings(f)
				got = strings.Join(f, " ")
			}
			if got != v {
				return fmt.Errorf("ceph.conf [global] %s = %q, want %q", k, got, v)
			}
		}
		return nil
	}
}

const coreClusterHCL = `
resource "pve_ceph_cluster" "lab" {
  node    = "z2g4a"
  network = "169.254.50.0/24"
}
`

// coreMonitorsHCL and coreManagersHCL declare one monitor and one manager
// per node (named resources: terraform-plugin-testing's state checks
// cannot address for_each instances).
var coreMonitorsHCL = coreEach(`
resource "pve_ceph_monitor" "%[1]s" {
  node       = "%[1]s"
  depends_on = [pve_ceph_cluster.lab]
}
`)

var coreManagersHCL = coreEach(`
resource "pve_ceph_manager" "%[1]s" {
  node       = "%[1]s"
  depends_on = [pve_ceph_monitor.z2g4a, pve_ceph_monitor.z2g4b, pve_ceph_monitor.z2g4c]
}
`)

func coreEach(format string) string {
	var b strings.Builder
	for _, n := range coreNodes {
		fmt.Fprintf(&b, format, n)
	}
	return b.String()
}

// coreForget ends a test by forgetting Ceph: PVE's API cannot remove it.
var coreForget = `
removed {
  from = pve_ceph_cluster.lab
  lifecycle { destroy = false }
}
` + coreEach(`
removed {
  from = pve_ceph_monitor.%[1]s
  lifecycle { destroy = false }
}
removed {
  from = pve_ceph_manager.%[1]s
  lifecycle { destroy = false }
}
`)

// The reference lab's Ceph from nothing: init on the storage network,
// three monitors and three managers in one configuration (Terraform
// creates them in parallel), then imports, each checked against PVE.
func TestAccCephCluster_lab(t *testing.T) {
	t.Parallel()
	e := coreEnv(t)
	ctx := context.Background()
	cfg := e.Config(coreClusterHCL, coreMonitorsHCL, coreManagersHCL, `
data "pve_ceph_status" "lab" {
  depends_on = [pve_ceph_manager.z2g4a, pve_ceph_manager.z2g4b, pve_ceph_manager.z2g4c]
}
`)
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				Config: cfg,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("pve_ceph_cluster.lab", "network", "169.254.50.0/24"),
					resource.TestCheckResourceAttr("pve_ceph_cluster.lab", "cluster_network", "169.254.50.0/24"),
					resource.TestCheckResourceAttr("pve_ceph_cluster.lab", "size", "3"),
					resource.TestCheckResourceAttr("pve_ceph_cluster.lab", "min_size", "2"),
					resource.TestCheckResourceAttrPair("pve_ceph_cluster.lab", "id", "pve_ceph_cluster.lab", "fsid"),
					resource.TestCheckResourceAttrPair("pve_ceph_cluster.lab", "fsid", "data.pve_ceph_status.lab", "fsid"),
					resource.TestCheckResourceAttr("pve_ceph_monitor.z2g4b", "id", "z2g4b"),
					resource.TestCheckResourceAttr("pve_ceph_monitor.z2g4b", "addresses.#", "1"),
					resource.TestCheckResourceAttr("pve_ceph_monitor.z2g4b", "addresses.0", "169.254.50.11"),
					resource.TestCheckResourceAttr("pve_ceph_monitor.z2g4c", "quorum", "true"),
					resource.TestCheckResourceAttr("pve_ceph_monitor.z2g4c", "state", "running"),
					resource.TestCheckResourceAttr("pve_ceph_manager.z2g4c", "id", "z2g4c"),
					resource.TestCheckResourceAttr("data.pve_ceph_status.lab", "monitors.total", "3"),
					resource.TestCheckResourceAttr("data.pve_ceph_status.lab", "monitors.in_quorum", "3"),
					resource.TestCheckResourceAttr("data.pve_ceph_status.lab", "managers.available", "true"),
					resource.TestCheckResourceAttr("data.pve_ceph_status.lab", "managers.standbys", "2"),
					coreCheckConf(e, map[string]string{"public_network": "169.254.50.0/24", "cluster_network": "169.254.50.0/24",
						"osd_pool_default_size": "3", "osd_pool_default_min_size": "2",
						"mon_host": "169.254.50.10 169.254.50.11 169.254.50.12"}),
					func(s *terraform.State) error {
						if e.Sim != nil {
							if split := e.Sim.CephSplitMonitors(); len(split) > 0 {
								return fmt.Errorf("monitors outside the cluster's monmap: %v", split)
							}
						}
						mons, err := e.Client.CephMons(ctx, "z2g4a")
						if err != nil {
							return err
						}
						var names []string
						for _, m := range mons {
							if !m.Quorum {
								return fmt.Errorf("mon.%s not in quorum (%s)", m.Name, m.State)
							}
							names = append(names, m.Name+"@"+m.Host)
						}
						if strings.Join(names, ",") != "z2g4a@z2g4a,z2g4b@z2g4b,z2g4c@z2g4c" {
							return fmt.Errorf("PVE lists monitors %v", names)
						}
						mgrs, err := e.Client.CephMgrs(ctx, "z2g4a")
						if err != nil {
							return err
						}
						states := map[string]int{}
						names = nil
						for _, m := range mgrs {
							states[m.State]++
							names = append(names, m.Name+"@"+m.Host)
						}
						sort.Strings(names)
						if strings.Join(names, ",") != "z2g4a@z2g4a,z2g4b@z2g4b,z2g4c@z2g4c" || states["active"] != 1 || states["standby"] != 2 {
							return fmt.Errorf("PVE lists managers %v (%v)", names, states)
						}
						st, err := e.Client.CephClusterStatus(ctx)
						if err != nil {
							return err
						}
						return resource.TestCheckResourceAttr("data.pve_ceph_status.lab", "health", st.Health)(s)
					},
				),
			},
			{
				ResourceName:                         "pve_ceph_cluster.lab",
				ImportState:                          true,
				ImportStateId:                        "z2g4a",
				ImportStateVerify:                    true,
				ImportStateVerifyIdentifierAttribute: "fsid",
			},
			{
				ResourceName:            "pve_ceph_monitor.z2g4b",
				ImportState:             true,
				ImportStateId:           "z2g4b",
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
			{
				ResourceName:            "pve_ceph_manager.z2g4a",
				ImportState:             true,
				ImportStateId:           "z2g4a",
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
			{
				Config: e.Config(coreForget),
				Check: func(*terraform.State) error {
					mons, err := e.Client.CephMons(ctx, "z2g4a")
					if err != nil || len(mons) != 3 {
						return fmt.Errorf("forgetting removed monitors from Ceph: %v %w", mons, err)
					}
					return nil
				},
			},
		},
	})
}

// Ceph's configuration changed outside Terraform shows in the next plan:
// networks are put back in place; a changed pool default is refused with
// the reason rather than replacing the cluster.
func TestAccCephCluster_drift(t *testing.T) {
	t.Parallel()
	e := coreEnv(t)
	if e.Sim == nil {
		t.Skip("edits /etc/pve/ceph.conf through the simulator")
	}
	ctx := context.Background()
	cfg := e.Config(coreClusterHCL)
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				// An administrator edits ceph.conf by hand.
				PreConfig:          func() { e.Sim.SetCephConf("global", "public_network", "172.27.2.0/24") },
				Config:             cfg,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("pve_ceph_cluster.lab", plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue("pve_ceph_cluster.lab", tfjsonpath.New("network"), knownvalue.StringExact("169.254.50.0/24")),
					plancheck.ExpectKnownValue("pve_ceph_cluster.lab", tfjsonpath.New("cluster_network"), knownvalue.StringExact("169.254.50.0/24")),
				}},
				Check: coreCheckConf(e, map[string]string{"public_network": "169.254.50.0/24", "cluster_network": "169.254.50.0/24"}),
			},
			{
				// Through PVE's API: init again with other networks.
				PreConfig: func() {
					if err := e.Client.InitCeph(ctx, "z2g4c", pve.CephInitRequest{Network: "172.27.2.0/24", ClusterNetwork: "10.9.9.0/24"}); err != nil {
						t.Fatal(err)
					}
				},
				Config:             cfg,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				// A separate cluster network is kept when only it is set.
				Config: e.Config(`
resource "pve_ceph_cluster" "lab" {
  node            = "z2g4a"
  network         = "169.254.50.0/24"
  cluster_network = "10.9.9.0/24"
}
`),
				Check: coreCheckConf(e, map[string]string{"public_network": "169.254.50.0/24", "cluster_network": "10.9.9.0/24"}),
			},
			{
				PreConfig:   func() { e.Sim.SetCephConf("global", "osd_pool_default_size", "2") },
				Config:      cfg,
				PlanOnly:    true,
				ExpectError: coreRE(`(?s)Cannot change size of an initialised Ceph cluster.*osd_pool_default_size = 2`),
			},
			{
				// Purged outside Terraform: the resource is gone, and a new
				// one would be created.
				PreConfig: func() {
					e.Sim.SetCephConf("global", "osd_pool_default_size", "3")
					e.Sim.SetCephConf("global", "fsid", "")
				},
				Config:             cfg,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				PreConfig: func() { e.Sim.SetCephConf("global", "fsid", "0f2c5b7e-0000-4000-8000-00000000c0de") },
				Config:    cfg,
				// Terraform would plan a create, which PVE's init would turn
				// into keeping the other cluster: refused at plan.
				ExpectError: coreRE(`(?s)Error: Ceph is already initialised.*Ceph is already initialised \(fsid 0f2c5b7e-0000-4000-8000-00000000c0de\).*terraform import pve_ceph_cluster.<name> z2g4a`),
			},
			{
				Config: e.Config(`
removed {
  from = pve_ceph_cluster.lab
  lifecycle { destroy = false }
}
`),
			},
		},
	})
}

// Configurations that would fail or be unsafe are refused at plan time,
// naming the attribute and the reason.
func TestAccCephCluster_invalidAtPlan(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	for _, tc := range []struct{ body, want string }{
		{`network = "169.254.50.0"`, `(?s)Invalid CIDR.*network must be an IPv4 or IPv6 address with a prefix`},
		{`network = "169.254.50.0/24"` + "\n" + `cluster_network = "10.0.0/24"`, `(?s)Invalid CIDR.*cluster_network`},
		{`network = "169.254.50.0/24"` + "\n" + `cluster_network = "fd00::/64"`, `(?s)Mixed address families.*cluster_network`},
		{`network = "169.254.50.0/24"` + "\n" + `size = 2` + "\n" + `min_size = 3`, `(?s)min_size greater than size.*min_size \(3\) must not be greater than size \(2\)`},
		{`network = "169.254.50.0/24"` + "\n" + `min_size = 1`, `(?s)Unsafe min_size 1.*single copy.*allow_unsafe_redundancy`},
		{`network = "169.254.50.0/24"` + "\n" + `size = 2`, `(?s)Unsafe size 2.*allow_unsafe_redundancy`},
		{`network = "169.254.50.0/24"` + "\n" + `size = 1` + "\n" + `min_size = 1`, `(?s)Unsafe size 1`},
		{`network = "169.254.50.0/24"` + "\n" + `size = 8`, `(?s)size.*value must be between 1 and 7`},
		{`network = "169.254.50.0/24"` + "\n" + `pg_bits = 20`, `(?s)pg_bits.*between 6 and 14`},
	} {
		e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
			Config:      e.Config("resource \"pve_ceph_cluster\" \"lab\" {\n  node = \"z2g4a\"\n  " + tc.body + "\n}\n"),
			PlanOnly:    true,
			ExpectError: coreRE(tc.want),
		}}})
	}
	// The explicit opt-in lets a throw-away cluster through the plan.
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
		Config: e.Config(`
resource "pve_ceph_cluster" "lab" {
  node                    = "z2g4a"
  network                 = "169.254.50.0/24"
  size                    = 2
  min_size                = 1
  allow_unsafe_redundancy = true
}
`),
		PlanOnly:           true,
		ExpectNonEmptyPlan: true,
	}}})
}

// Destroy without monitors: nothing runs, so the provider forgets the
// cluster with a warning; the configuration stays in /etc/pve, as PVE's
// API cannot remove it.
func TestAccCephCluster_destroyForgets(t *testing.T) {
	t.Parallel()
	e := coreEnv(t)
	e.Run(t, resource.TestCase{
		CheckDestroy: func(*terraform.State) error {
			conf, err := coreConf(e)
			if err != nil || conf.Get("global", "fsid") == "" {
				return fmt.Errorf("ceph.conf after forgetting: %v %w", conf, err)
			}
			return nil
		},
		Steps: []resource.TestStep{{Config: e.Config(coreClusterHCL)}},
	})
}

// Destroy with a monitor: refused with how to purge Ceph, nothing lost.
func TestAccCephCluster_destroyRefused(t *testing.T) {
	t.Parallel()
	e := coreEnv(t)
	ctx := context.Background()
	withMon := e.Config(coreClusterHCL, `
resource "pve_ceph_monitor" "mon" {
  node       = "z2g4a"
  depends_on = [pve_ceph_cluster.lab]
}
`)
	stillThere := func(*terraform.State) error {
		mons, err := e.Client.CephMons(ctx, "z2g4a")
		if err != nil || len(mons) != 1 || !mons[0].Quorum {
			return fmt.Errorf("monitors after a refused destroy: %v %w", mons, err)
		}
		return nil
	}
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{Config: withMon},
			{
				// The monitor is the last one: refused at plan.
				Config:      e.Config(coreClusterHCL),
				ExpectError: coreRE(`(?s)Refusing to destroy Ceph monitor z2g4a.*last Ceph monitor.*removed block`),
			},
			{
				Config: withMon,
				Check:  stillThere,
			},
			{
				Config: e.Config(coreClusterHCL, `
removed {
  from = pve_ceph_monitor.mon
  lifecycle { destroy = false }
}
`),
			},
			{
				Config:      e.Config(coreClusterHCL),
				Destroy:     true,
				ExpectError: coreRE(`(?s)Refusing to destroy Ceph cluster.*1 monitor\(s\) exist \(z2g4a\).*pveceph purge`),
			},
			{
				Config: e.Config(`
removed {
  from = pve_ceph_cluster.lab
  lifecycle { destroy = false }
}
`),
				Check: stillThere,
			},
		},
	})
}
