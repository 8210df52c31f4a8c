package ceph_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

func coreMonitorHCL(nodes ...string) string {
	var b strings.Builder
	for _, n := range nodes {
		fmt.Fprintf(&b, `
resource "pve_ceph_monitor" %[1]q {
  node       = %[1]q
  depends_on = [pve_ceph_cluster.lab]
}
`, n)
	}
	return b.String()
}

func coreForgetMonitors(nodes ...string) string {
	var b strings.Builder
	b.WriteString("\nremoved {\n  from = pve_ceph_cluster.lab\n  lifecycle { destroy = false }\n}\n")
	for _, n := range nodes {
		fmt.Fprintf(&b, "removed {\n  from = pve_ceph_monitor.%s\n  lifecycle { destroy = false }\n}\n", n)
	}
	return b.String()
}

// coreMonitors checks what PVE lists: id -> in quorum.
func coreMonitors(e *acctest.Env, want map[string]bool) resource.TestCheckFunc {
	return func(*terraform.State) error {
		mons, err := e.Client.CephMons(context.Background(), "z2g4a")
		if err != nil {
			return err
		}
		got := map[string]bool{}
		for _, m := range mons {
			got[m.Name] = m.Quorum
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("PVE lists monitors (id: in quorum) %v, want %v", got, want)
		}
		return nil
	}
}

// Removing a monitor in quorum while another is down would leave the rest
// without a majority; Ceph's mon remove does not check that, so the
// provider refuses, and nothing is lost. Removing the monitor that is down
// is fine.
func TestAccCephMonitor_quorumRefused(t *testing.T) {
	t.Parallel()
	e := coreEnv(t)
	ctx := context.Background()
	all := e.Config(coreClusterHCL, coreMonitorHCL(coreNodes...))
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				Config: all,
				Check:  coreMonitors(e, map[string]bool{"z2g4a": true, "z2g4b": true, "z2g4c": true}),
			},
			{
				PreConfig: func() {
					upid, err := e.Client.StopCephService(ctx, "z2g4c", "mon.z2g4c")
					if _, err := e.Client.Await(ctx, upid, err); err != nil {
						t.Fatal(err)
					}
				},
				Config:      e.Config(coreClusterHCL, coreMonitorHCL("z2g4b", "z2g4c")),
				ExpectError: coreRE(`(?s)(Refusing to destroy|Unable to Delete) Ceph monitor z2g4a.*removing mon.z2g4a would break quorum.*in quorum: z2g4a, z2g4b; not in quorum: z2g4c \(stopped\)`),
			},
			{
				// Nothing lost: all three monitors, the quorum answers.
				Config: all,
				Check: resource.ComposeAggregateTestCheckFunc(
					coreMonitors(e, map[string]bool{"z2g4a": true, "z2g4b": true, "z2g4c": false}),
					func(*terraform.State) error {
						st, err := e.Client.CephClusterStatus(ctx)
						if err != nil {
							return fmt.Errorf("Ceph lost its quorum: %w", err)
						}
						if len(st.QuorumNames) != 2 {
							return fmt.Errorf("quorum %v", st.QuorumNames)
						}
						return nil
					},
				),
			},
			{
				// The monitor that is down can go.
				Config: e.Config(coreClusterHCL, coreMonitorHCL("z2g4a", "z2g4b")),
				Check:  coreMonitors(e, map[string]bool{"z2g4a": true, "z2g4b": true}),
			},
			{
				// With two left, either can go: one of one is a majority.
				Config: e.Config(coreClusterHCL, coreMonitorHCL("z2g4b")),
				Check:  coreMonitors(e, map[string]bool{"z2g4b": true}),
			},
			{
				Config:      e.Config(coreClusterHCL),
				ExpectError: coreRE(`(?s)Ceph monitor z2g4b.*last Ceph monitor.*can't remove last monitor`),
			},
			{Config: e.Config(coreForgetMonitors("z2g4b"))},
		},
	})
}

// Explicit addresses, addresses PVE refuses, a monitor removed outside
// Terraform, import.
func TestAccCephMonitor_addressesDriftImport(t *testing.T) {
	t.Parallel()
	e := coreEnv(t)
	ctx := context.Background()
	one := e.Config(coreClusterHCL, `
resource "pve_ceph_monitor" "z2g4a" {
  node       = "z2g4a"
  addresses  = ["169.254.50.10"]
  depends_on = [pve_ceph_cluster.lab]
}
`)
	two := one + coreMonitorHCL("z2g4b")
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				Config: e.Config(coreClusterHCL, `
resource "pve_ceph_monitor" "z2g4a" {
  node       = "z2g4a"
  addresses  = ["169.254.50.10/24"]
  depends_on = [pve_ceph_cluster.lab]
}
`),
				PlanOnly:    true,
				ExpectError: coreRE(`(?s)Invalid IP address.*must be an IPv4 or IPv6 address`),
			},
			{
				Config: one,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("pve_ceph_monitor.z2g4a", "addresses.0", "169.254.50.10"),
					coreMonitors(e, map[string]bool{"z2g4a": true}),
				),
			},
			{
				// PVE's own check, surfaced: not in the public network.
				Config: one + `
resource "pve_ceph_monitor" "z2g4b" {
  node       = "z2g4b"
  addresses  = ["172.27.2.11"]
  depends_on = [pve_ceph_cluster.lab]
}
`,
				ExpectError: coreRE(`(?s)Unable to Create Ceph monitor z2g4b.*Specified monitor IP '172.27.2.11' not configured or up on z2g4b`),
			},
			{
				Config: two,
				Check:  coreMonitors(e, map[string]bool{"z2g4a": true, "z2g4b": true}),
			},
			{
				ResourceName:            "pve_ceph_monitor.z2g4b",
				ImportState:             true,
				ImportStateId:           "z2g4b",
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
			{
				// Removed outside Terraform: planned again.
				PreConfig: func() {
					upid, err := e.Client.DestroyCephMon(ctx, "z2g4b", "z2g4b")
					if _, err := e.Client.Await(ctx, upid, err); err != nil {
						t.Fatal(err)
					}
				},
				Config:             two,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				Config: two,
				Check:  coreMonitors(e, map[string]bool{"z2g4a": true, "z2g4b": true}),
			},
			{
				ResourceName:  "pve_ceph_monitor.z2g4a",
				ImportState:   true,
				ImportStateId: "nope",
				ExpectError:   coreRE(`Ceph has no monitor "nope" \(monitors: z2g4a, z2g4b\)`),
			},
			{Config: e.Config(coreForgetMonitors("z2g4a", "z2g4b"))},
		},
	})
}

// The monitor create worker takes ceph.conf's cfs lock before doing
// anything (API2/Ceph/MON.pm): a task that failed on "got lock request
// timeout" did nothing and is started again. In the reference lab the
// pve_ceph_config ceph.conf edit holds that lock while the monitors are
// created, and the apply failed "Unable to Create Ceph monitor".
func TestAccCephMonitor_createRetriesConfLockTimeout(t *testing.T) {
	t.Parallel()
	e := coreEnv(t)
	if e.Sim == nil {
		t.Skip("needs the simulator's faults")
	}
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					if err := e.Sim.SetFaultSpec("task cephcreatemon/mon.z2g4b=lock:1x"); err != nil {
						t.Fatal(err)
					}
				},
				Config: e.Config(coreClusterHCL, coreMonitorHCL("z2g4a", "z2g4b")),
				Check: resource.ComposeTestCheckFunc(
					coreMonitors(e, map[string]bool{"z2g4a": true, "z2g4b": true}),
					func(*terraform.State) error {
						if n := e.Sim.CountRequests("POST", "/nodes/z2g4b/ceph/mon/z2g4b"); n != 2 {
							return fmt.Errorf("%d monitor create POSTs for z2g4b, want 2 (one failed on the lock, one again)", n)
						}
						return nil
					},
				),
			},
			{Config: e.Config(coreForgetMonitors("z2g4a", "z2g4b"))},
		},
	})
}
