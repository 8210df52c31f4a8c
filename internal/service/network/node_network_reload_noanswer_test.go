package network_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

// The reload request of a management change never gets an answer and
// never ran (every connection drops before PVE acted; no task of it, so
// it is sent again, and drops again): the node still answers, but the
// change is only staged. The apply fails naming it and reverts its own
// staged change instead of reporting it applied and leaving interfaces.new
// behind (which the next apply would refuse as someone else's); the next
// apply, the faults gone, goes through.
func TestAccNodeNetworkRollback_reloadWithoutAnswerNotReportedApplied(t *testing.T) {
	t.Parallel()
	e, node := freshInstallEnv(t)
	pc := e.ProviderConfig()
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			importVMBR0(pc, node),
			{
				PreConfig: func() {
					e.Sim.InjectFault(pvesim.Fault{Method: "PUT", Path: "^/nodes/" + node + "/network$", Kind: pvesim.FaultConnectionReset})
				},
				Config:      pc + vmbr0Config(node, "  bridge_vlan_aware = true"),
				ExpectError: phrases("reload request on node "+node+" got no answer", "the reload never ran", "bridge_vlan_aware false -> true", "The staged change was reverted"),
			},
			{
				PreConfig: func() {
					e.Sim.ClearFaults()
					list, err := e.Client.Network(t.Context(), node)
					if err != nil {
						t.Fatal(err)
					}
					if strings.TrimSpace(list.Changes) != "" {
						t.Fatalf("staged change left behind:\n%s", list.Changes)
					}
				},
				Config: pc + vmbr0Config(node, "  bridge_vlan_aware = true"),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkReachableWith(e, node, func(in *pve.NetworkInterface) error {
						if !in.BridgeVLANAware {
							return fmt.Errorf("vmbr0 is not VLAN-aware: %+v", *in)
						}
						return nil
					}),
					checkDisarmed(t, e, node),
				),
			},
			forgetVMBR0(pc),
		},
	})
}
