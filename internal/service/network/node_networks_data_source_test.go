package network_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

func TestAccNodeNetworksDataSource(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	node := e.Node(t, 0)
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
		Config: e.Config(fmt.Sprintf(`
resource "pve_node_network" "br" {
  node  = %[1]q
  iface = "vmbr50"
  type  = "bridge"
  cidr  = "10.50.0.1/24"
}

data "pve_node_networks" "eth" {
  node = %[1]q
  type = "eth"
}

data "pve_node_networks" "all" {
  node       = %[1]q
  depends_on = [pve_node_network.br]
}
`, node)),
		Check: resource.ComposeAggregateTestCheckFunc(
			resource.TestCheckResourceAttr("data.pve_node_networks.all", "pending_changes", ""),
			resource.TestCheckTypeSetElemNestedAttrs("data.pve_node_networks.all", "interfaces.*", map[string]string{
				"iface": "vmbr50", "type": "bridge", "cidr": "10.50.0.1/24", "active": "true",
			}),
			func(s *terraform.State) error {
				attrs := s.RootModule().Resources["data.pve_node_networks.eth"].Primary.Attributes
				n, _ := strconv.Atoi(attrs["interfaces.#"])
				if n == 0 {
					return fmt.Errorf("no eth interfaces listed")
				}
				for i := 0; i < n; i++ {
					if typ := attrs[fmt.Sprintf("interfaces.%d.type", i)]; typ != "eth" {
						return fmt.Errorf("type filter let through %s (%s)", attrs[fmt.Sprintf("interfaces.%d.iface", i)], typ)
					}
					if strings.HasPrefix(attrs[fmt.Sprintf("interfaces.%d.iface", i)], "vmbr") {
						return fmt.Errorf("bridge listed as eth")
					}
				}
				return nil
			},
		),
	}}})
}
