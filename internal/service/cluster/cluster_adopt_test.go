package cluster_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

// The cluster of the lab built by hand (z2g4, created on the first node, joined
// by the others, link0 on the corosync VLAN 169.254.60.H, link1 on the
// storage network 169.254.50.H) adopted with import blocks: imports only,
// no write, empty plan after (issue #12).
func TestAccCluster_adoptHandBuilt(t *testing.T) {
	t.Parallel()
	if acctest.Live() {
		t.Skip("needs pvesim's hand-built lab")
	}
	e := acctest.HandBuilt(t)
	hcl := `
resource "pve_cluster" "lab" {
  name = "z2g4"
  links = [
    { address = "169.254.60.10" },
    { address = "169.254.50.10" },
  ]
}

import {
  to = pve_cluster.lab
  id = "z2g4"
}
`
	addrs := []string{"pve_cluster.lab"}
	for i, host := range []int{11, 12} {
		node := e.Node(t, i+1)
		hcl += fmt.Sprintf(`
resource "pve_cluster_node" "member_%[1]s" {
  node = %[1]q
  links = [
    { address = "169.254.60.%[2]d" },
    { address = "169.254.50.%[2]d" },
  ]
  depends_on = [pve_cluster.lab]
}

import {
  to = pve_cluster_node.member_%[1]s
  id = %[1]q
}
`, node, host)
		addrs = append(addrs, "pve_cluster_node.member_"+node)
	}
	// Forgotten, not destroyed: PVE refuses to remove members that
	// host guests and Ceph daemons.
	steps := append(e.AdoptSteps(e.Config(hcl), addrs...), acctest.ForgetStep(e.ProviderConfig(), addrs...))
	e.Run(t, resource.TestCase{Steps: steps})
}
