package network_test

import (
	"context"
	"testing"
	"time"

	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
	"github.com/pvelab/terraform-provider-pve/internal/service/network"
)

// A confirmed change is disarmed even when the apply's context is done
// by then (interrupt, timeout): a timer left armed would undo the change.
func TestAccNodeNetworkRollback_disarmSurvivesCancel(t *testing.T) {
	t.Parallel()
	e, node := freshInstallEnv(t)
	ne := e.NodeExec(t)
	defer func() { _ = ne.Close() }()
	if _, err := ne.Run(context.Background(), node, nodeexec.Cmd("systemd-run", "--unit=pve-terraform-network-rollback", "--on-active=600",
		"systemctl", "is-active", "pveproxy.service")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := network.DisarmRollback(ctx, ne, node, 600*time.Second); err != nil {
		t.Fatalf("disarm with the apply's context done: %v", err)
	}
	res, err := ne.Run(context.Background(), node, nodeexec.Cmd("systemctl", "show", "--property=ActiveState", rollbackTimer))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res.Stdout); got != "ActiveState=inactive\n" {
		t.Fatalf("%s after disarm: %q, want inactive", rollbackTimer, got)
	}
}
