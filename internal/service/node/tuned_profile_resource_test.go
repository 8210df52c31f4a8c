package node_test

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

const tunedAddr = "pve_node_tuned_profile.this"

func tunedConfig(node, profile string) string {
	return fmt.Sprintf(`
resource "pve_node_tuned_profile" "this" {
  node    = %q
  profile = %q
}
`, node, profile)
}

// checkActive asserts what tuned on the node reports over SSH, not what
// Terraform stored.
func checkActive(t *testing.T, e *acctest.Env, node, want string) resource.TestCheckFunc {
	ex := e.NodeExec(t)
	return func(*terraform.State) error {
		res, err := ex.Run(context.Background(), node, nodeexec.Cmd("tuned-adm", "active"))
		if err != nil {
			return err
		}
		if got := strings.TrimSpace(string(res.Stdout)); got != "Current active profile: "+want {
			return fmt.Errorf("node %s: tuned-adm active says %q, want profile %s", node, got, want)
		}
		return nil
	}
}

// switchOutside changes the profile behind Terraform's back.
func switchOutside(t *testing.T, e *acctest.Env, node string, args ...string) func() {
	ex := e.NodeExec(t)
	return func() {
		if _, err := ex.Run(context.Background(), node, nodeexec.Cmd(args[0], args[1:]...)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestAccNodeTunedProfile_lifecycle(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	node := e.Node(t, 0)
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				Config: e.Config(tunedConfig(node, "latency-performance")),
				Check:  checkActive(t, e, node, "latency-performance"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(tunedAddr, tfjsonpath.New("id"), knownvalue.StringExact(node)),
					statecheck.ExpectKnownValue(tunedAddr, tfjsonpath.New("profile"), knownvalue.StringExact("latency-performance")),
				},
			},
			{ResourceName: tunedAddr, ImportState: true, ImportStateId: node, ImportStateVerify: true},
			{
				Config: e.Config(tunedConfig(node, "throughput-performance")),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(tunedAddr, plancheck.ResourceActionUpdate),
				}},
				Check: checkActive(t, e, node, "throughput-performance"),
			},
			// Drift: an admin switches the profile on the node.
			{
				PreConfig: switchOutside(t, e, node, "tuned-adm", "profile", "powersave"),
				Config:    e.Config(tunedConfig(node, "throughput-performance")),
				PlanOnly:  true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(tunedAddr, plancheck.ResourceActionUpdate),
				}},
				ExpectNonEmptyPlan: true,
			},
			{
				Config: e.Config(tunedConfig(node, "throughput-performance")),
				Check:  checkActive(t, e, node, "throughput-performance"),
			},
		},
	})
	// Destroy leaves the node's profile alone.
	if e.Sim != nil && e.Sim.TunedProfile(node) != "throughput-performance" {
		t.Errorf("after destroy the node runs %q", e.Sim.TunedProfile(node))
	}
}

// tuned-adm profile exits 0 without the daemon; a stopped daemon is
// drift, and the apply brings it back and verifies the profile.
func TestAccNodeTunedProfile_daemonStopped(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	node := e.Node(t, 1)
	config := e.Config(tunedConfig(node, "latency-performance"))
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{Config: config, Check: checkActive(t, e, node, "latency-performance")},
			{
				PreConfig:          switchOutside(t, e, node, "systemctl", "stop", "tuned.service"),
				Config:             config,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				Config: config,
				Check:  checkActive(t, e, node, "latency-performance"),
			},
		},
	})
	if e.Sim != nil {
		if _, active, _ := e.Sim.UnitState(node, "tuned"); active != "active" {
			t.Errorf("tuned.service is %s after the apply", active)
		}
	}
}

func TestAccNodeTunedProfile_errors(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	node := e.Node(t, 2)
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			// Refused at plan time, naming the attribute.
			{Config: e.Config(tunedConfig(node, "latency-performance; reboot")), PlanOnly: true,
				ExpectError: regexp.MustCompile(`(?s)Invalid profile.*tuned profile names`)},
			{Config: e.Config(tunedConfig("z2g4a.lab", "balanced")), PlanOnly: true,
				ExpectError: regexp.MustCompile(`(?s)Invalid node.*node name`)},
			// tuned's own refusal, with its text, now at plan (tuned-adm list).
			{Config: e.Config(tunedConfig(node, "latency-performanc")),
				ExpectError: regexp.MustCompile(`(?s)Unable to plan pve_node_tuned_profile ` + node + `.*Cannot\s+find\s+profile\s+'latency-performanc'`)},
			// Without SSH the plan says how to configure it.
			{Config: e.ProviderConfigWithoutSSH(t) + tunedConfig(node, "balanced"), PlanOnly: true,
				ExpectError: regexp.MustCompile(`(?s)pve_node_tuned_profile needs SSH access to the nodes.*ssh \{.*PVE_SSH_PRIVATE_KEY`)},
		},
	})
}

// A node whose host key changed is refused before any command runs, the
// error naming the node and both fingerprints.
func TestAccNodeTunedProfile_changedHostKeyRefused(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	if e.Sim == nil {
		t.Skip("rotates a simulated node's host key")
	}
	node := e.Node(t, 0)
	oldFP := ""
	for _, n := range e.Sim.Info().Nodes {
		if n.Name == node {
			oldFP = n.SSHHostKeyFingerprint
		}
	}
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{{
			PreConfig: func() {
				if err := e.Sim.RotateSSHHostKey(node); err != nil {
					t.Fatal(err)
				}
			},
			Config:      e.Config(tunedConfig(node, "latency-performance")),
			ExpectError: regexp.MustCompile(`(?s)host key of node ` + node + `.*has changed.*` + regexp.QuoteMeta(oldFP)),
		}},
	})
	if got := e.Sim.TunedProfile(node); got != "balanced" {
		t.Errorf("the profile changed to %q on a node with an unverified key", got)
	}
	for _, c := range e.Sim.SSHCommands() {
		t.Errorf("a command reached the node: %q", c.Line)
	}
}

// A non-root login runs tuned-adm through sudo -n.
func TestAccNodeTunedProfile_sudo(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	if e.Sim == nil {
		t.Skip("uses the simulator's sudo user")
	}
	node := e.Node(t, 1)
	config := strings.Replace(e.Config(tunedConfig(node, "virtual-host")), `username         = "root"`, `username         = "terraform"`, 1)
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{{Config: config, Check: checkActive(t, e, node, "virtual-host")}},
	})
	found := false
	for _, c := range e.Sim.SSHCommands() {
		if c.User == "terraform" && c.Line == "sudo -n -- tuned-adm profile virtual-host" {
			found = true
		}
	}
	if !found {
		t.Errorf("no sudo -n -- tuned-adm profile in %+v", e.Sim.SSHCommands())
	}
}

// Without its daemon tuned-adm profile prints a complaint and exits 0
// having changed nothing (seen on a real node); the apply checks with
// tuned-adm active and fails instead of recording a profile tuned does
// not run.
func TestAccNodeTunedProfile_verifiesTheActiveProfile(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	if e.Sim == nil {
		t.Skip("fakes tuned-adm's answer in the simulator")
	}
	node := e.Node(t, 2)
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{{
			PreConfig: func() {
				e.Sim.InjectSSHFault(pvesim.SSHFault{Node: node, Program: "tuned-adm", Args: "profile .*", Count: 1, Answer: &pvesim.SSHAnswer{
					Stdout: "Trying to (re)start tuned...\n",
					Stderr: "Cannot talk to TuneD daemon via DBus. Is TuneD daemon running?\nTuneD (re)start failed, you need to (re)start TuneD by hand for changes to apply.\n",
				}})
			},
			Config:      e.Config(tunedConfig(node, "latency-performance")),
			ExpectError: regexp.MustCompile(`(?s)Unable to Create tuned profile of node ` + node + `.*tuned-adm profile latency-performance\s+succeeded,\s+but\s+tuned-adm\s+active\s+reports\s+"balanced"`),
		}},
	})
}
