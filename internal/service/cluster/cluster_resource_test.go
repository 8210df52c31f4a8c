package cluster_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

// labAddresses configures the reference lab's corosync (i219 stands in for
// bridge0.60) and storage addresses on the given nodes out of band, through
// each node's own API, as a user would before creating the cluster.
func labAddresses(t *testing.T, e *acctest.Env, nodes ...string) {
	t.Helper()
	ctx := context.Background()
	for _, n := range e.Sim.Info().Nodes {
		idx := -1
		for i, want := range []string{"z2g4a", "z2g4b", "z2g4c"} {
			if n.Name == want {
				idx = i
			}
		}
		selected := false
		for _, s := range nodes {
			selected = selected || s == n.Name
		}
		if idx < 0 || !selected {
			continue
		}
		c, err := pve.NewClient(pve.Config{Endpoint: n.Endpoint, APIToken: n.APIToken, TLSFingerprint: n.TLSFingerprint})
		if err != nil {
			t.Fatal(err)
		}
		for iface, cidr := range map[string]string{"i219": fmt.Sprintf("169.254.60.%d/24", 10+idx), "cx354ap1": fmt.Sprintf("169.254.50.%d/24", 10+idx)} {
			auto := true
			if err := c.UpdateNetworkInterface(ctx, n.Name, iface, pve.NetworkInterfaceRequest{Type: "eth", CIDR: &cidr, Autostart: &auto}); err != nil {
				t.Fatalf("%s %s: %v", n.Name, iface, err)
			}
		}
		upid, err := c.ApplyNetwork(ctx, n.Name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.WaitTask(ctx, upid); err != nil {
			t.Fatal(err)
		}
	}
}

func nodeInfo(e *acctest.Env, name string) pvesim.NodeInfo {
	for _, n := range e.Sim.Info().Nodes {
		if n.Name == name {
			return n
		}
	}
	return pvesim.NodeInfo{}
}

const clusterConfig = `
resource "pve_cluster" "lab" {
  name  = "lab"
  links = [
    { address = "169.254.60.10" },
    { address = "169.254.50.10", priority = 10 },
  ]
}
`

func nodeConfig(name string, i int) string {
	return fmt.Sprintf(`
resource "pve_cluster_node" %[1]q {
  node  = %[1]q
  links = [
    { address = "169.254.60.%[2]d" },
    { address = "169.254.50.%[2]d" },
  ]
  depends_on = [pve_cluster.lab]
}
`, name, 10+i)
}

// forgetNodes keeps the members but stops managing them.
const forgetNodes = `
removed {
  from = pve_cluster_node.z2g4b
  lifecycle { destroy = false }
}
removed {
  from = pve_cluster_node.z2g4c
  lifecycle { destroy = false }
}
`

// forget ends a test without destroying: PVE cannot dissolve a cluster, and
// removing members needs them powered off.
const forget = `
removed {
  from = pve_cluster.lab
  lifecycle { destroy = false }
}
removed {
  from = pve_cluster_node.z2g4b
  lifecycle { destroy = false }
}
removed {
  from = pve_cluster_node.z2g4c
  lifecycle { destroy = false }
}
`

func TestAccCluster_createJoinImport(t *testing.T) {
	t.Parallel()
	e := acctest.NewStandalone(t)
	before := map[string]pvesim.NodeInfo{}
	for _, n := range e.Sim.Info().Nodes {
		before[n.Name] = n
	}
	cfg := e.Config(clusterConfig, nodeConfig("z2g4b", 1), nodeConfig("z2g4c", 2))
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				PreConfig: func() { labAddresses(t, e, "z2g4a", "z2g4b", "z2g4c") },
				Config:    cfg,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("pve_cluster.lab", "id", "lab"),
					resource.TestCheckResourceAttr("pve_cluster.lab", "node", "z2g4a"),
					resource.TestCheckResourceAttr("pve_cluster.lab", "nodeid", "1"),
					resource.TestCheckResourceAttr("pve_cluster.lab", "links.1.priority", "10"),
					resource.TestCheckResourceAttr("pve_cluster.lab", "fingerprint", before["z2g4a"].TLSFingerprint),
					resource.TestCheckResourceAttr("pve_cluster_node.z2g4b", "cluster", "lab"),
					resource.TestCheckResourceAttr("pve_cluster_node.z2g4b", "votes", "1"),
					resource.TestCheckResourceAttr("pve_cluster_node.z2g4c", "links.1.address", "169.254.50.12"),
					func(*terraform.State) error {
						// What the nodes report, not only state: every node
						// is in the cluster's trust domain, with a reissued
						// certificate, and the founding node lists all.
						a := nodeInfo(e, "z2g4a")
						for _, n := range []string{"z2g4b", "z2g4c"} {
							got := nodeInfo(e, n)
							if got.RootPassword != a.RootPassword || got.CACertPEM != a.CACertPEM {
								return fmt.Errorf("%s did not move into the cluster's /etc/pve", n)
							}
							if got.TLSFingerprint == before[n].TLSFingerprint {
								return fmt.Errorf("%s kept its certificate", n)
							}
						}
						st, err := e.Client.ClusterStatus(context.Background())
						if err != nil {
							return err
						}
						if !st.Clustered || st.Name != "lab" || !st.Quorate || len(st.Nodes) != 3 {
							return fmt.Errorf("cluster status %+v", st)
						}
						for _, n := range st.Nodes {
							if !n.Online {
								return fmt.Errorf("%s offline", n.Name)
							}
						}
						return nil
					},
				),
			},
			{Config: cfg, PlanOnly: true},
			{
				// Timeouts alone change in place; what PVE reported stays.
				Config: e.Config(strings.Replace(clusterConfig, "  name  = \"lab\"\n", "  name  = \"lab\"\n  timeouts {\n    create = \"45m\"\n  }\n", 1),
					strings.Replace(nodeConfig("z2g4b", 1), "  depends_on", "  timeouts {\n    delete = \"20m\"\n  }\n  depends_on", 1), nodeConfig("z2g4c", 2)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("pve_cluster.lab", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("pve_cluster_node.z2g4b", plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("pve_cluster.lab", "timeouts.create", "45m"),
					resource.TestCheckResourceAttr("pve_cluster.lab", "fingerprint", before["z2g4a"].TLSFingerprint),
					resource.TestCheckResourceAttr("pve_cluster_node.z2g4b", "timeouts.delete", "20m"),
					resource.TestCheckResourceAttr("pve_cluster_node.z2g4b", "cluster", "lab"),
				),
			},
			{ResourceName: "pve_cluster.lab", ImportState: true, ImportStateId: "lab", ImportStateVerify: true, ImportStateVerifyIgnore: []string{"timeouts", "nodes"}, Config: cfg},
			{ResourceName: "pve_cluster_node.z2g4c", ImportState: true, ImportStateId: "z2g4c", ImportStateVerify: true, ImportStateVerifyIgnore: []string{"timeouts"}, Config: cfg},
			{
				// The cluster outlives a destroy: the provider refuses.
				Config:      e.Config(forgetNodes),
				ExpectError: regexp.MustCompile(`PVE cannot dissolve a cluster through its API`),
			},
			{Config: e.Config(forget)},
		},
	})
}

func TestAccClusterNode_failedJoinLeavesNodeStandalone(t *testing.T) {
	t.Parallel()
	e := acctest.NewStandalone(t)
	cBefore := map[string]pvesim.NodeInfo{}
	for _, n := range e.Sim.Info().Nodes {
		cBefore[n.Name] = n
	}
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				// z2g4c lacks its link addresses: PVE's join check fails.
				PreConfig:   func() { labAddresses(t, e, "z2g4a", "z2g4b") },
				Config:      e.Config(clusterConfig, nodeConfig("z2g4c", 2)),
				ExpectError: regexp.MustCompile(`(?s)Unable to Join node z2g4c.*Check if node may join a\s+cluster\s+failed!.*link0: cannot use IP '169.254.60.12', not found on\s+local\s+node!`),
			},
			{
				// Nothing half-joined: z2g4c still answers with its own
				// credentials and certificate, the cluster lists only z2g4a,
				// and once its addresses exist joining it works.
				PreConfig: func() {
					if got := nodeInfo(e, "z2g4c"); got != cBefore["z2g4c"] {
						t.Errorf("z2g4c changed: %+v", got)
					}
					nodes, err := e.Client.Nodes(context.Background())
					if err != nil || len(nodes) != 1 {
						t.Errorf("cluster nodes %v %v", nodes, err)
					}
					labAddresses(t, e, "z2g4c")
				},
				Config: e.Config(clusterConfig, nodeConfig("z2g4b", 1), nodeConfig("z2g4c", 2)),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttrSet("pve_cluster_node.z2g4b", "nodeid"),
					resource.TestCheckResourceAttrSet("pve_cluster_node.z2g4c", "nodeid"),
				),
			},
			{
				// A member that still runs Ceph daemons is not removed.
				PreConfig: func() {
					root := e.RootClient(t)
					ctx := context.Background()
					if err := root.InitCeph(ctx, "z2g4a", pve.CephInitRequest{Network: "169.254.50.0/24"}); err != nil {
						t.Fatal(err)
					}
					for _, n := range []string{"z2g4a", "z2g4b"} {
						upid, err := root.CreateCephMon(ctx, n, "")
						if _, err := root.Await(ctx, upid, err); err != nil {
							t.Fatal(err)
						}
					}
					upid, err := root.CreateCephMgr(ctx, "z2g4b", "")
					if _, err := root.Await(ctx, upid, err); err != nil {
						t.Fatal(err)
					}
				},
				Config:      e.Config(clusterConfig, nodeConfig("z2g4c", 2)),
				ExpectError: regexp.MustCompile(`(?s)Node z2g4b still runs Ceph daemons: monitor mon.z2g4b, manager\s+mgr.z2g4b`),
			},
			{
				// Removing a member that is still up is refused.
				PreConfig: func() {
					root := e.RootClient(t)
					ctx := context.Background()
					for _, destroy := range []func() (string, error){
						func() (string, error) { return root.DestroyCephMgr(ctx, "z2g4b", "z2g4b") },
						func() (string, error) { return root.DestroyCephMon(ctx, "z2g4b", "z2g4b") },
					} {
						upid, err := destroy()
						if _, err := root.Await(ctx, upid, err); err != nil {
							t.Fatal(err)
						}
					}
				},
				Config:      e.Config(clusterConfig, nodeConfig("z2g4c", 2)),
				ExpectError: regexp.MustCompile(`(?s)Node z2g4b is online.*shut it\s+down`),
			},
			{
				// Once it is shut down, it leaves the cluster configuration.
				PreConfig: func() { e.Sim.PowerOff("z2g4b") },
				Config:    e.Config(clusterConfig, nodeConfig("z2g4c", 2)),
				Check: func(*terraform.State) error {
					nodes, err := e.Client.ClusterConfigNodes(context.Background())
					if err != nil || len(nodes) != 2 || nodes[0].Name != "z2g4a" || nodes[1].Name != "z2g4c" {
						return fmt.Errorf("corosync nodes after removal: %v (%w)", nodes, err)
					}
					return nil
				},
			},
			{Config: e.Config(forget)},
		},
	})
}

func TestAccCluster_tokenNeedsRootPassword(t *testing.T) {
	t.Parallel()
	e := acctest.NewStandalone(t)
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				Config:      e.TokenProviderConfig() + clusterConfig,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`Creating a cluster needs root@pam with a password`),
			},
			{
				Config:      e.Config(`resource "pve_cluster" "x" { name = "bad_name" }`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`Attribute name must be letters, digits and hyphens`),
			},
			{
				Config:      e.Config(`resource "pve_cluster" "x" { name = "a-name-too-long-x" }`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`string length must be between 1 and 15`),
			},
		},
	})
}

func TestAccClusterDataSources(t *testing.T) {
	t.Parallel()
	e := acctest.NewStandalone(t)
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				Config: e.Config(`
data "pve_nodes" "all" {}
data "pve_cluster_status" "s" {}
data "pve_version" "v" {}
`),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("data.pve_nodes.all", "nodes.#", "1"),
					resource.TestCheckResourceAttr("data.pve_nodes.all", "nodes.0.name", "z2g4a"),
					resource.TestCheckResourceAttr("data.pve_nodes.all", "nodes.0.fingerprint", nodeInfo(e, "z2g4a").TLSFingerprint),
					resource.TestCheckResourceAttr("data.pve_cluster_status.s", "clustered", "false"),
					resource.TestCheckResourceAttr("data.pve_cluster_status.s", "quorate", "true"),
					resource.TestCheckResourceAttr("data.pve_cluster_status.s", "nodes.0.local", "true"),
					resource.TestCheckResourceAttrSet("data.pve_version.v", "release"),
				),
			},
			{
				Config:      e.Config(`data "pve_cluster_join_info" "j" {}`),
				ExpectError: regexp.MustCompile(`no\s+join\s+info\s+available!`),
			},
			{
				PreConfig: func() { labAddresses(t, e, "z2g4a", "z2g4b") },
				Config: e.Config(clusterConfig, nodeConfig("z2g4b", 1), `
data "pve_cluster_status" "s" { depends_on = [pve_cluster_node.z2g4b] }
data "pve_cluster_join_info" "j" { depends_on = [pve_cluster_node.z2g4b] }
`),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("data.pve_cluster_status.s", "name", "lab"),
					resource.TestCheckResourceAttr("data.pve_cluster_status.s", "nodes.#", "2"),
					resource.TestCheckResourceAttr("data.pve_cluster_status.s", "nodes.1.links.1", "169.254.50.11"),
					resource.TestCheckResourceAttr("data.pve_cluster_join_info.j", "preferred_node", "z2g4a"),
					resource.TestCheckResourceAttr("data.pve_cluster_join_info.j", "nodes.0.fingerprint", nodeInfo(e, "z2g4a").TLSFingerprint),
					resource.TestCheckResourceAttr("data.pve_cluster_join_info.j", "nodes.0.address", "172.27.2.10"),
				),
			},
			{Config: e.Config(forget)},
		},
	})
}

// A joining node whose pinned fingerprint is wrong (here: z2g4b's, copied
// by mistake) is refused before PVE is asked to join anything: the error
// names both fingerprints, and the node stays standalone and untouched.
func TestAccClusterNode_wrongFingerprintFailsBeforeJoining(t *testing.T) {
	t.Parallel()
	e := acctest.NewStandalone(t)
	a, b, c := nodeInfo(e, "z2g4a"), nodeInfo(e, "z2g4b"), nodeInfo(e, "z2g4c")
	provider := func(cFingerprint string) string {
		return fmt.Sprintf(`provider "pve" {
  endpoint        = %q
  username        = "root@pam"
  password        = %q
  tls_fingerprint = %q
  standalone_nodes = {
    z2g4c = {
      endpoint        = %q
      password        = %q
      tls_fingerprint = %q
    }
  }
}
`, a.Endpoint, a.RootPassword, a.TLSFingerprint, c.Endpoint, c.RootPassword, cFingerprint)
	}
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				PreConfig:   func() { labAddresses(t, e, "z2g4a", "z2g4c") },
				Config:      provider(b.TLSFingerprint) + clusterConfig + nodeConfig("z2g4c", 2),
				ExpectError: regexp.MustCompile(`(?s)Unable to Join node z2g4c.*does not match\s+tls_fingerprint: pinned\s+` + regexp.QuoteMeta(b.TLSFingerprint)),
			},
			{
				PreConfig: func() {
					if got := nodeInfo(e, "z2g4c"); got != c {
						t.Errorf("z2g4c changed by a refused join: %+v", got)
					}
					nodes, err := e.Client.Nodes(context.Background())
					if err != nil || len(nodes) != 1 || nodes[0].Node != "z2g4a" {
						t.Errorf("cluster nodes after a refused join: %v %v", nodes, err)
					}
					for _, r := range e.Sim.Requests() {
						if r.Method == "POST" && r.Path == "/cluster/config/join" {
							t.Errorf("the join reached PVE: %+v", r)
						}
					}
				},
				// With the right fingerprint the same node joins.
				Config: provider(c.TLSFingerprint) + clusterConfig + nodeConfig("z2g4c", 2),
				Check:  resource.TestCheckResourceAttr("pve_cluster_node.z2g4c", "cluster", "lab"),
			},
			{Config: provider(c.TLSFingerprint) + forget},
		},
	})
}

// A member that still hosts a guest is not removed: the provider refuses
// with the guests named, and the node stays in the cluster.
func TestAccClusterNode_removeRefusedWhileNodeHostsGuests(t *testing.T) {
	t.Parallel()
	e := acctest.NewStandalone(t)
	cfg := e.Config(clusterConfig, nodeConfig("z2g4b", 1), nodeConfig("z2g4c", 2))
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				PreConfig: func() { labAddresses(t, e, "z2g4a", "z2g4b", "z2g4c") },
				Config:    cfg,
			},
			{
				PreConfig:   func() { e.Sim.CreateTestVM("z2g4c", 100, "vm100") },
				Config:      e.Config(clusterConfig, nodeConfig("z2g4b", 1)),
				ExpectError: regexp.MustCompile(`(?s)Refusing to destroy cluster node z2g4c.*Node z2g4c still hosts guests\s+qemu/100`),
			},
			{
				Config: cfg,
				Check: func(*terraform.State) error {
					st, err := e.Client.ClusterStatus(context.Background())
					if err != nil {
						return err
					}
					if st.Node("z2g4c") == nil || len(st.Nodes) != 3 {
						return fmt.Errorf("z2g4c left the cluster: %+v", st)
					}
					return nil
				},
			},
			{Config: e.Config(forget)},
		},
	})
}
