package ceph_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

func installHCL(node, extra string) string {
	return fmt.Sprintf(`
resource "pve_ceph_install" %[1]q {
  node = %[1]q
%[2]s}
`, node, extra)
}

// installEnv is a simulator whose nodes lack the Ceph daemons. Installing
// packages on a real cluster's nodes is not something a test does.
func installEnv(t *testing.T, opts pvesim.Options) *acctest.Env {
	t.Helper()
	opts.CephNotInstalled = true
	e := acctest.NewWithOptions(t, opts)
	if e.Sim == nil {
		t.Skip("installs Ceph packages on nodes; runs against the simulator only")
	}
	return e
}

// pvecephRuns lists the pveceph command lines node received.
func pvecephRuns(e *acctest.Env, node string) []string {
	var out []string
	for _, c := range e.Sim.SSHCommands() {
		if c.Node == node && len(c.Argv) > 0 && c.Argv[0] == "pveceph" {
			out = append(out, c.Line)
		}
	}
	return out
}

// checkDpkg asserts what dpkg on the node reports, not Terraform's state.
func checkDpkg(t *testing.T, e *acctest.Env, node, want string) resource.TestCheckFunc {
	ex := e.NodeExec(t)
	return func(*terraform.State) error {
		res, err := ex.Run(context.Background(), node, nodeexec.Cmd("dpkg-query", "-W", "-f", `${Version}`, "ceph-mon"))
		if err != nil {
			return err
		}
		if got := string(res.Stdout); got != want {
			return fmt.Errorf("node %s: ceph-mon %q, want %q", node, got, want)
		}
		return nil
	}
}

// On nodes without the daemons PVE refuses Ceph; pve_ceph_install makes
// the node's Ceph API work, is imported by node name, is reinstalled when
// the packages vanish, and leaves Ceph installed when destroyed.
func TestAccCephInstall_lifecycle(t *testing.T) {
	t.Parallel()
	e := installEnv(t, pvesim.Options{PVERelease: "9.1", CephTimeScale: -1})
	const addr = "pve_ceph_install.z2g4a"
	withCeph := installHCL("z2g4a", "  version = \"squid\"\n") + installHCL("z2g4b", "") + `
resource "pve_ceph_cluster" "lab" {
  node       = "z2g4a"
  network    = "172.27.2.0/24"
  depends_on = [pve_ceph_install.z2g4a]
}

resource "pve_ceph_monitor" "z2g4a" {
  node       = "z2g4a"
  depends_on = [pve_ceph_cluster.lab]
}
`
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			// Without pveceph install PVE refuses the node's Ceph.
			{
				Config:      e.Config(coreClusterHCL),
				ExpectError: coreRE(`(?s)Unable to Create Ceph cluster on z2g4a.*binary not installed: /usr/bin/ceph-mon`),
			},
			{
				Config: e.Config(withCeph),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("version"), knownvalue.StringExact("squid")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("package_version"), knownvalue.StringExact("19.2.3-pve2")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("repository"), knownvalue.StringExact("no-subscription")),
					statecheck.ExpectKnownValue("pve_ceph_install.z2g4b", tfjsonpath.New("version"), knownvalue.StringExact("squid")),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkDpkg(t, e, "z2g4a", "19.2.3-pve2"),
					checkDpkg(t, e, "z2g4b", "19.2.3-pve2"),
					// The node's Ceph API works now.
					func(*terraform.State) error {
						mons, err := e.Client.CephMons(context.Background(), "z2g4a")
						if err != nil {
							return err
						}
						if len(mons) != 1 || mons[0].Name != "z2g4a" {
							return fmt.Errorf("monitors %+v", mons)
						}
						if _, _, ok := e.Sim.CephInstalled("z2g4c"); ok {
							return fmt.Errorf("z2g4c got Ceph without a resource")
						}
						return nil
					},
				),
			},
			{ResourceName: addr, ImportState: true, ImportStateId: "z2g4a", ImportStateVerify: true,
				ImportStateVerifyIgnore: []string{"timeouts"}},
			// Ceph removed behind Terraform's back: the next apply installs it.
			{
				PreConfig: func() {
					if err := e.Sim.SetCephInstalled("z2g4b", ""); err != nil {
						t.Fatal(err)
					}
				},
				Config:   e.Config(withCeph),
				PlanOnly: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("pve_ceph_install.z2g4b", plancheck.ResourceActionCreate),
				}},
				ExpectNonEmptyPlan: true,
			},
			{Config: e.Config(withCeph), Check: checkDpkg(t, e, "z2g4b", "19.2.3-pve2")},
			// PVE's API cannot remove Ceph: forget the cluster, destroy the installs.
			{Config: e.Config(`
removed {
  from = pve_ceph_cluster.lab
  lifecycle { destroy = false }
}
removed {
  from = pve_ceph_monitor.z2g4a
  lifecycle { destroy = false }
}
` + installHCL("z2g4a", "  version = \"squid\"\n") + installHCL("z2g4b", ""))},
		},
	})
	for _, n := range []string{"z2g4a", "z2g4b"} {
		if cn, _, ok := e.Sim.CephInstalled(n); !ok || cn != "squid" {
			t.Errorf("destroy uninstalled Ceph on %s", n)
		}
	}
	// Installed twice on z2g4b (the second time after the removal), once on z2g4a.
	if runs := pvecephRuns(e, "z2g4a"); len(runs) != 1 || runs[0] != "pveceph install --version squid --repository no-subscription" {
		t.Errorf("pveceph on z2g4a: %q", runs)
	}
	if runs := pvecephRuns(e, "z2g4b"); len(runs) != 2 || runs[0] != "pveceph install --repository no-subscription" {
		t.Errorf("pveceph on z2g4b: %q", runs)
	}
}

// A node that has the release is adopted without running pveceph; a
// repository change runs it again with the installed release.
func TestAccCephInstall_adoptsInstalled(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	if e.Sim == nil {
		t.Skip("runs pveceph install on a node; simulator only")
	}
	node := e.Node(t, 1)
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				Config: e.Config(installHCL(node, "  version = \"squid\"\n")),
				Check: func(*terraform.State) error {
					if runs := pvecephRuns(e, node); len(runs) != 0 {
						return fmt.Errorf("pveceph ran on a node that has Squid: %q", runs)
					}
					return nil
				},
			},
			{
				Config: e.Config(installHCL(node, "  version = \"squid\"\n  repository = \"test\"\n")),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("pve_ceph_install."+node, plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error {
					if runs := pvecephRuns(e, node); len(runs) != 1 || runs[0] != "pveceph install --version squid --repository test" {
						return fmt.Errorf("pveceph runs %q", runs)
					}
					return nil
				},
			},
		},
	})
}

// PVE 8: without version pveceph installs its default (Quincy); a newer
// release upgrades in place; an older one is refused at plan time.
func TestAccCephInstall_pve8UpgradeAndDowngrade(t *testing.T) {
	t.Parallel()
	e := installEnv(t, pvesim.Options{PVERelease: "8.4"})
	const addr = "pve_ceph_install.z2g4c"
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				Config: e.Config(installHCL("z2g4c", "")),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("version"), knownvalue.StringExact("quincy")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("package_version"), knownvalue.StringExact("17.2.8-pve2")),
				},
			},
			{
				Config: e.Config(installHCL("z2g4c", "  version = \"reef\"\n")),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: checkDpkg(t, e, "z2g4c", "18.2.7-pve1"),
			},
			{
				Config:      e.Config(installHCL("z2g4c", "  version = \"quincy\"\n")),
				PlanOnly:    true,
				ExpectError: coreRE(`(?s)Ceph cannot be downgraded.*Node z2g4c runs Ceph reef \(18.2.7-pve1\); version = "quincy" is older`),
			},
			// Without version the node keeps what it has.
			{Config: e.Config(installHCL("z2g4c", "")), PlanOnly: true},
		},
	})
	if runs := pvecephRuns(e, "z2g4c"); strings.Join(runs, "\n") != "pveceph install --repository no-subscription\npveceph install --version reef --repository no-subscription" {
		t.Errorf("pveceph runs %q", runs)
	}
}

func TestAccCephInstall_errors(t *testing.T) {
	t.Parallel()
	e := installEnv(t, pvesim.Options{PVERelease: "9.1"})
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{Config: e.Config(installHCL("z2g4a", "  version = \"sqiud\"\n")), PlanOnly: true,
				ExpectError: regexp.MustCompile(`(?s)Invalid Attribute Value Match.*version.*squid`)},
			// PVE 9.1 offers Squid only: pveceph's own refusal.
			{Config: e.Config(installHCL("z2g4a", "  version = \"reef\"\n")),
				ExpectError: coreRE(`(?s)Unable to Create Ceph packages on node z2g4a.*version: value 'reef' does not have a value in the enumeration 'squid'.*does not offer that Ceph release`)},
			// The enterprise repository without a subscription.
			{Config: e.Config(installHCL("z2g4b", "  repository = \"enterprise\"\n")),
				ExpectError: coreRE(`(?s)401 Unauthorized.*apt failed during ceph installation.*needs a subscription`)},
			// pveceph claims success without installing: the read-back catches it.
			{
				PreConfig: func() {
					e.Sim.InjectSSHFault(pvesim.SSHFault{Node: "z2g4c", Program: "pveceph", Count: 1, Answer: &pvesim.SSHAnswer{
						Stdout: "update available package list\nstart installation\n\ninstalled Ceph 19.2 Squid successfully!\n"}})
				},
				Config:      e.Config(installHCL("z2g4c", "  version = \"squid\"\n")),
				ExpectError: coreRE(`(?s)pveceph install reported success, but dpkg reports no Ceph daemons \(missing ceph-mon, ceph-mgr, ceph-osd, ceph-volume\)`),
			},
			{Config: e.ProviderConfigWithoutSSH(t) + installHCL("z2g4a", ""), PlanOnly: true,
				ExpectError: regexp.MustCompile(`(?s)pve_ceph_install needs SSH access to the nodes`)},
		},
	})
	for _, n := range []string{"z2g4a", "z2g4b", "z2g4c"} {
		if _, _, ok := e.Sim.CephInstalled(n); ok {
			t.Errorf("%s has Ceph after failed installs", n)
		}
	}
}
