package network_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// The installer's vmbr0 cut over to bridge0 over bond0 in one reload, on a
// fresh-install node: first onto a bond whose slaves have no link (the
// node is cut off and restores itself), then, with the cables in, for
// real (confirmed and disarmed).
func TestAccNodeNetworkRollback_configCutover(t *testing.T) {
	t.Parallel()
	e, node := freshInstallEnv(t)
	config := func(slaves string) string {
		return e.Config(strings.Replace(referenceLabConfig(node, ""),
			`slaves = ["bcm5720p0", "bcm5720p1"]`, "slaves = "+slaves, 1))
	}
	short := func(s string) string {
		return strings.Replace(s, `resource "pve_node_network_config" "lab" {`,
			"resource \"pve_node_network_config\" \"lab\" {\n  rollback_timeout_seconds = 5", 1)
	}
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					for _, nic := range []string{"bcm5720p1", "i219"} {
						if err := e.Sim.SetNICLink(node, nic, false); err != nil {
							t.Fatal(err)
						}
					}
				},
				Config: short(config(`["bcm5720p1", "i219"]`)),
				ExpectError: phrases("moves 172.27.2.10/24 from vmbr0 (port bcm5720p0) to bridge0 (port bond0: bcm5720p1, i219)",
					"default gateway 172.27.2.254 from vmbr0 to bridge0", "restored the previous /etc/network/interfaces", "the node answers again"),
			},
			{
				PreConfig: func() {
					for _, nic := range []string{"bcm5720p1", "i219"} {
						if err := e.Sim.SetNICLink(node, nic, true); err != nil {
							t.Fatal(err)
						}
					}
				},
				Config: short(config(`["bcm5720p0", "bcm5720p1"]`)),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkGoneFromNode(e, node, "vmbr0"),
					checkOnNode(e, node, "bridge0", func(in *pve.NetworkInterface) error {
						if in.Address != "172.27.2.10" || strings.Join(in.BridgePorts, " ") != "bond0" {
							return fmt.Errorf("node reports %+v", *in)
						}
						return nil
					}),
					checkDisarmed(t, e, node),
				),
			},
		},
	})
}

// Without SSH the cutover is refused at plan, before anything is staged;
// with the explicit opt-out it is applied without a timer (and still
// confirmed reachable).
func TestAccNodeNetworkConfig_cutoverWithoutSSH(t *testing.T) {
	t.Parallel()
	e, node := freshInstallEnv(t)
	pc := e.ProviderConfigWithoutSSH(t)
	config := pc + referenceLabConfig(node, "")
	optOut := strings.Replace(config, `resource "pve_node_network_config" "lab" {`,
		"resource \"pve_node_network_config\" \"lab\" {\n  allow_management_change_without_rollback = true", 1)
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				Config:   config,
				PlanOnly: true,
				ExpectError: phrases("needs SSH for its rollback", "moves 172.27.2.10/24 from vmbr0 (port bcm5720p0) to bridge0",
					"allow_management_change_without_rollback = true"),
			},
			{
				PreConfig: func() {
					// The refused plan staged nothing: the installer's vmbr0 is live and nothing is pending.
					list, err := e.Client.Network(t.Context(), node)
					if err != nil {
						t.Fatal(err)
					}
					if strings.TrimSpace(list.Changes) != "" {
						t.Fatalf("refused plan left staged changes:\n%s", list.Changes)
					}
				},
				Config: optOut,
				Check: resource.ComposeAggregateTestCheckFunc(
					checkGoneFromNode(e, node, "vmbr0"),
					checkOnNode(e, node, "bridge0", func(in *pve.NetworkInterface) error {
						if in.Address != "172.27.2.10" || in.Gateway != "172.27.2.254" {
							return fmt.Errorf("node reports %+v", *in)
						}
						return nil
					}),
				),
			},
		},
	})
}
