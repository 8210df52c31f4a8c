package adopt

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

// The read-only provider the adoption reads through cannot write: a
// resource's Create fails with the read-only client's refusal, and no
// write request reaches PVE (the simulator's request log holds only the
// login and reads).
func TestReadOnlyProviderCreateRefused(t *testing.T) {
	sim, err := pvesim.Start(pvesim.Options{ClusterName: "ro"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	info := sim.Info()
	ctx := context.Background()
	rd, err := newReader(ctx, providerConfig(Config{Endpoint: info.Endpoint, Username: "root@pam", Password: info.RootPassword,
		TLSFingerprint: info.TLSFingerprint}))
	if err != nil {
		t.Fatal(err)
	}
	from := len(sim.Requests())
	const typ = "pve_ha_group"
	ot, ok := rd.types[typ].(tftypes.Object)
	if !ok {
		t.Fatalf("%s has no object type", typ)
	}
	planned, err := objectValue(ot, map[string]any{"group": "ro", "nodes": map[string]any{info.Nodes[0].Name: 1}})
	if err != nil {
		t.Fatal(err)
	}
	dv, err := tfprotov6.NewDynamicValue(ot, planned)
	if err != nil {
		t.Fatal(err)
	}
	prior, err := tfprotov6.NewDynamicValue(ot, tftypes.NewValue(ot, nil))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := rd.server.ApplyResourceChange(ctx, &tfprotov6.ApplyResourceChangeRequest{TypeName: typ,
		PriorState: &prior, PlannedState: &dv, Config: &dv})
	if err != nil {
		t.Fatal(err)
	}
	err = diagErr(resp.Diagnostics)
	if err == nil || !strings.Contains(err.Error(), pve.ErrReadOnly.Error()) {
		t.Errorf("Create through the read-only provider: %v, want %q", err, pve.ErrReadOnly)
	}
	for _, r := range sim.Requests()[from:] {
		if r.Method != "GET" && !strings.HasPrefix(r.Path, "/access/") {
			t.Errorf("the read-only provider sent %s %s", r.Method, r.Path)
		}
	}
}
