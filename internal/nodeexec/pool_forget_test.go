package nodeexec_test

import (
	"context"
	"testing"

	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
)

// After a network change a kept connection proves nothing: Forget closes
// it and the next command dials anew.
func TestForgetDropsTheNodesConnection(t *testing.T) {
	l := newLab(t)
	p := l.pool(t, nil)
	ctx := context.Background()
	p.Forget("z2g4a") // nothing cached yet: a no-op
	if _, err := p.Run(ctx, "z2g4a", nodeexec.Cmd("tuned-adm", "active")); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Run(ctx, "z2g4b", nodeexec.Cmd("tuned-adm", "active")); err != nil {
		t.Fatal(err)
	}
	p.Forget("z2g4a")
	waitFor(t, func() bool { return l.sim.SSHConnections("z2g4a") == 0 })
	if n := l.sim.SSHConnections("z2g4b"); n != 1 {
		t.Errorf("z2g4b has %d connections after forgetting z2g4a, want its one kept", n)
	}
	if _, err := p.Run(ctx, "z2g4a", nodeexec.Cmd("tuned-adm", "active")); err != nil {
		t.Fatalf("after Forget: %v", err)
	}
	if n := l.sim.SSHConnections("z2g4a"); n != 1 {
		t.Errorf("%d connections after Forget and a command, want a new one", n)
	}
	addr, err := p.Address(ctx, "z2g4a")
	if want, _ := l.resolve(ctx, "z2g4a"); err != nil || addr != want {
		t.Errorf("Address = %v, %v; want %v", addr, err, want)
	}
}
