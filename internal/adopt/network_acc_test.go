package adopt_test

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// The network of the reference lab built by hand (bond0, bridge0 with the
// management address, bridge0.60, the storage NIC): one
// pve_node_network_config per node, imports only, nothing written, empty
// plan after.
func TestAccAdoptNetwork(t *testing.T) {
	t.Parallel()
	a := adoptLab(t, "reference", "network")
	a.env.Run(t, resource.TestCase{Steps: a.steps(t)})
}
