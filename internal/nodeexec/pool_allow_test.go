package nodeexec_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
)

// A command Config.Allow refuses never reaches the node: no connection,
// nothing in the node's command log, and the guard's reason in the error.
// A command it allows runs.
func TestAllowGuardRefusesBeforeConnecting(t *testing.T) {
	l := newLab(t)
	p := l.pool(t, func(c *nodeexec.Config) {
		c.Allow = func(argv []string) error {
			if argv[0] == "cat" {
				return nil
			}
			return errors.New("guard: refused")
		}
	})
	_, err := p.Run(context.Background(), "z2g4a", nodeexec.Cmd("tuned-adm", "profile", "latency-performance"))
	if err == nil || !strings.Contains(err.Error(), "guard: refused") {
		t.Fatalf("refused command: %v", err)
	}
	if n := len(l.sim.SSHCommands()); n != 0 || l.sim.SSHConnections("z2g4a") != 0 {
		t.Errorf("a refused command reached the node (%d commands logged)", n)
	}
	if _, err := p.Run(context.Background(), "z2g4a", nodeexec.Cmd("cat", "/etc/hostname")); err != nil {
		t.Fatalf("allowed command: %v", err)
	}
	if n := len(l.sim.SSHCommands()); n != 1 {
		t.Errorf("%d commands logged after the allowed one, want 1", n)
	}
}
