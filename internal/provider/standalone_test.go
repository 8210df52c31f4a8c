package provider_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

// Before a cluster exists every node is its own PVE with its own API,
// password and certificate. One provider reaches the nodes listed in
// standalone_nodes through their own endpoints.
func TestProviderStandaloneNodes(t *testing.T) {
	clearPVEEnv(t)
	sim, err := pvesim.Start(pvesim.Options{}) // three standalone nodes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	info := sim.Info()
	a, b := info.Nodes[0], info.Nodes[1]
	acctest.SetupCLI(t)
	e := &acctest.Env{Sim: sim}

	bClient, err := pve.NewClient(pve.Config{Endpoint: b.Endpoint, APIToken: b.APIToken, TLSFingerprint: b.TLSFingerprint})
	if err != nil {
		t.Fatal(err)
	}
	provider := fmt.Sprintf(`
provider "pve" {
  endpoint        = %q
  api_token       = %q
  tls_fingerprint = %q
  standalone_nodes = {
    %s = {
      endpoint        = %q
      username        = "root@pam"
      password        = %q
      tls_fingerprint = %q
    }
  }
}
`, a.Endpoint, a.APIToken, a.TLSFingerprint, b.Name, b.Endpoint, b.RootPassword, b.TLSFingerprint)

	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		{
			Config: provider + fmt.Sprintf(`
resource "pve_node_network" "on_b" {
  node  = %q
  iface = "vmbr9"
  type  = "bridge"
  cidr  = "10.9.0.2/24"
}
`, b.Name),
			Check: func(*terraform.State) error {
				list, err := bClient.Network(context.Background(), b.Name)
				if err != nil {
					return err
				}
				for _, in := range list.Interfaces {
					if in.Iface == "vmbr9" && in.Address == "10.9.0.2" {
						return nil
					}
				}
				return fmt.Errorf("vmbr9 not configured on %s through its own endpoint", b.Name)
			},
		},
		{
			// A standalone node the provider was not told about surfaces
			// PVE's own answer from the endpoint.
			Config: provider + fmt.Sprintf(`
data "pve_node_networks" "c" {
  node = %q
}
`, info.Nodes[2].Name),
			ExpectError: regexp.MustCompile(`hostname lookup '` + info.Nodes[2].Name + `' failed`),
		},
	}})
}
