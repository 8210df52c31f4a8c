package network_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

// A network reload (srvreload) that fails, at ifreload or after it, fails
// the apply: PVE renamed the new file in place before ifreload, so the
// interface is recorded tainted and the next apply replaces it; one
// vmbr45, active, nothing staged.
func TestAccNodeNetwork_reloadTaskFails(t *testing.T) {
	t.Parallel()
	for _, action := range acctest.TaskActions {
		t.Run(action, func(t *testing.T) {
			t.Parallel()
			e := acctest.New(t)
			if e.Sim == nil {
				t.Skip("needs the simulator's fault injection")
			}
			node := e.Node(t, 0)
			config := e.Config(fmt.Sprintf(`
resource "pve_node_network" "test" {
  node  = %q
  iface = "vmbr45"
  type  = "bridge"
  cidr  = "10.45.0.1/24"
}
`, node))
			e.Run(t, e.TaskFaultCase("task srvreload="+action+":1x", config, regexp.MustCompile(`Unable to Create network interface`),
				func(*terraform.State) error {
					list, err := e.Client.Network(context.Background(), node)
					if err != nil {
						return err
					}
					n := 0
					for _, i := range list.Interfaces {
						if i.Iface == "vmbr45" {
							n++
							if !i.Active {
								return fmt.Errorf("vmbr45 not active")
							}
						}
					}
					if n != 1 || list.Changes != "" {
						return fmt.Errorf("%d vmbr45, staged %q", n, list.Changes)
					}
					return nil
				}))
		})
	}
}
