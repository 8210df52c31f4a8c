package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

// A node is reached at the address PVE reports for it unless ssh.nodes
// overrides address or port; the API is asked once per command.
func TestNodeAddressResolver(t *testing.T) {
	sim, err := pvesim.Start(pvesim.Options{ClusterName: "lab", NoSSH: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	info := sim.Info()
	c, err := pve.NewClient(pve.Config{Endpoint: info.Endpoint, APIToken: info.APIToken, TLSFingerprint: info.TLSFingerprint})
	if err != nil {
		t.Fatal(err)
	}
	pd := framework.NewProviderData(c, nil)
	resolve := nodeAddressResolver(pd, map[string]sshNodeModel{
		"z2g4b": {Address: types.StringValue("z2g4b.lab.example"), Port: types.Int64Null()},
		"z2g4c": {Address: types.StringNull(), Port: types.Int64Value(2222)},
	}, 22)
	ctx := context.Background()
	sim.ResetRequests()
	for node, want := range map[string]nodeexec.Address{
		"z2g4a": {Host: "172.27.2.10", Port: 22},
		"z2g4b": {Host: "z2g4b.lab.example", Port: 22},
		"z2g4c": {Host: "172.27.2.12", Port: 2222},
	} {
		got, err := resolve(ctx, node)
		if err != nil || got != want {
			t.Errorf("%s: %+v, %v; want %+v", node, got, err, want)
		}
	}
	n := 0
	for _, r := range sim.Requests() {
		if r.Path == "/cluster/status" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d GET /cluster/status for three nodes, want 1", n)
	}
	_, err = resolve(ctx, "z2g4x")
	if err == nil || !strings.Contains(err.Error(), "ssh.nodes.z2g4x.address") {
		t.Errorf("unknown node: %v", err)
	}
}
