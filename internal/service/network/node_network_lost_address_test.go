package network_test

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// A change that leaves the management address on no interface is refused
// at plan even with SSH: the provider could never confirm it, so the
// rollback would always undo it after its timer (and without one the node
// would stay cut off). Nothing is staged, and the node keeps vmbr0.
func TestAccNodeNetworkRollback_lostManagementAddressRefusedAtPlan(t *testing.T) {
	t.Parallel()
	e, node := freshInstallEnv(t)
	pc := e.ProviderConfig()
	lostAs := func(summary, desc string) resource.TestStep {
		return resource.TestStep{
			PlanOnly:    true,
			ExpectError: phrases(summary, desc, "reaches node "+node+" on 172.27.2.10/24 on vmbr0"),
		}
	}
	lost := func(desc string) resource.TestStep {
		return lostAs("Change would remove the management address of node "+node, desc)
	}
	readdress := lost("changes vmbr0, which holds the management address 172.27.2.10: cidr 172.27.2.10/24 -> 172.27.2.11/24")
	readdress.Config = pc + strings.Replace(vmbr0Config(node, ""), `"172.27.2.10/24"`, `"172.27.2.11/24"`, 1)
	destroy := lostAs("Refusing to destroy network interface vmbr0 of node "+node,
		"removes vmbr0 (port bcm5720p0), which holds the management address 172.27.2.10/24")
	destroy.Config = pc
	// pve_node_network_config without vmbr0 and without the address
	// elsewhere deletes vmbr0 with it.
	noAddress := lost("removes vmbr0 (port bcm5720p0), which holds the management address 172.27.2.10/24")
	noAddress.Config = pc + `
removed {
  from = pve_node_network.vmbr0
  lifecycle {
    destroy = false
  }
}
` + strings.NewReplacer(`"172.27.2.10/24"`, `"172.27.3.10/24"`, `"172.27.2.254"`, `"172.27.3.254"`).Replace(referenceLabConfig(node, ""))
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			importVMBR0(pc, node),
			readdress,
			destroy,
			noAddress,
			{
				Config: pc + vmbr0Config(node, ""),
				Check:  checkReachableWith(e, node, vmbr0Unchanged),
			},
			forgetVMBR0(pc),
		},
	})
}
