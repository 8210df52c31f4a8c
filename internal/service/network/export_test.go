package network

import (
	"context"
	"time"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
)

// DisarmRollback runs the disarm of a rollback armed just now on node
// with the given timer time, as the reload does after confirming.
func DisarmRollback(ctx context.Context, ne *nodeexec.Pool, node string, timeout time.Duration) error {
	now := time.Now()
	g := &managementGuard{pd: &framework.ProviderData{NodeExec: ne}, node: node, change: "changes vmbr0 (test)",
		timeout: timeout, armed: true, armedAt: now, armedDone: now}
	return g.disarm(ctx)
}
