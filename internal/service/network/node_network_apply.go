package network

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

type diagList = diag.Diagnostics

func networkCacheKey(node string) string { return "network/" + node }

// listNetwork returns the node's interface list, fetched once per command
// and shared by every resource and data source that reads the node.
func listNetwork(ctx context.Context, pd *framework.ProviderData, node string) (*pve.NetworkList, error) {
	return framework.CachedRead(ctx, pd.Reads, networkCacheKey(node), func(ctx context.Context) (*pve.NetworkList, error) {
		c, err := pd.NodeClient(ctx, node)
		if err != nil {
			return nil, err
		}
		return c.Network(ctx, node)
	})
}

func findInterface(list []pve.NetworkInterface, iface string) *pve.NetworkInterface {
	for i := range list {
		if list[i].Iface == iface {
			return &list[i]
		}
	}
	return nil
}

func ifaceNames(list *pve.NetworkList, typ string) string {
	var names []string
	for _, in := range list.Interfaces {
		if typ == "" || in.Type == typ {
			names = append(names, in.Iface)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ", ")
}

// PendingChangesError says that a node has staged network changes that
// Terraform did not make; applying ours would apply them too.
type PendingChangesError struct {
	Node string
	Diff string
}

func (e *PendingChangesError) Error() string {
	return fmt.Sprintf("node %s has pending network changes that were not made by Terraform (interfaces.new exists). "+
		"Applying now would apply them too. Review them in the PVE UI (node > System > Network), then Apply or Revert them, and run Terraform again. Pending diff:\n%s",
		e.Node, strings.TrimSpace(e.Diff))
}

// networkApplyOptions tunes one applyNetworkChange: the dead-man rollback
// timer and the opt-out for nodes the provider cannot reach over SSH.
type networkApplyOptions struct {
	RollbackTimeout      time.Duration
	AllowWithoutRollback bool
}

// applyNetworkChange runs stage against a fresh list of the node's
// interfaces and, when it staged something, applies it (ifreload) and waits
// for the reload. It holds the node's network lock throughout, so no two
// reloads overlap on a node; nodes are independent. It refuses to start
// while the node has staged changes it did not make (they would be applied
// with ours), which is also what makes reverting after a failure safe.
func applyNetworkChange(ctx context.Context, pd *framework.ProviderData, node string, opts networkApplyOptions, stage func(context.Context, *pve.Client, *pve.NetworkList) error) ([]string, error) {
	unlock := pd.NodeLocks.Lock(networkCacheKey(node))
	defer unlock()
	// Whatever happens, later reads must see the node as it is now.
	defer pd.Reads.Invalidate(networkCacheKey(node))
	c, err := pd.NodeClient(ctx, node)
	if err != nil {
		return nil, err
	}

	current, err := c.Network(ctx, node)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(current.Changes) != "" {
		return nil, &PendingChangesError{Node: node, Diff: current.Changes}
	}
	if err := stage(ctx, c, current); err != nil {
		if !errors.Is(err, errNothingToDo) {
			revertStaged(ctx, c, node)
		}
		return nil, err
	}
	guard, err := guardManagementChange(ctx, pd, c, node, current.Interfaces, opts)
	if err != nil {
		revertStaged(ctx, c, node)
		return nil, err
	}
	if guard != nil {
		return guard.reload(ctx)
	}
	tflog.Info(ctx, "applying staged network configuration", map[string]any{"node": node})
	upid, lost, err := startReload(ctx, c, node)
	if pve.OutcomeUnknown(err) {
		// No answer and no task of it found: what is still staged tells
		// whether the reload ran.
		return nil, reloadFailed(ctx, c, node, fmt.Errorf("the reload request got no answer and no task of it was found: %w", err))
	}
	if err != nil {
		revertStaged(ctx, c, node)
		return nil, fmt.Errorf("staging succeeded but the network reload could not be started (the staged change was reverted): %w", err)
	}
	res, err := c.WaitTask(ctx, upid)
	if err != nil {
		return nil, reloadFailed(ctx, c, node, err)
	}
	if lost != nil {
		if err := reloadRan(ctx, c, node, upid, lost); err != nil {
			return nil, err
		}
	}
	var warnings []string
	if res.Warnings > 0 {
		warnings = append(warnings, fmt.Sprintf("ifreload finished with %d warning(s):\n%s", res.Warnings, strings.Join(res.Log, "\n")))
	}
	tflog.Info(ctx, "network configuration applied", map[string]any{"node": node, "upid": upid})
	return warnings, nil
}

// ReloadFailedError is a reload task that failed. PVE renames
// interfaces.new over interfaces before it runs ifreload, so unless
// something is still staged the new configuration is already persistent.
type ReloadFailedError struct {
	Node          string
	ConfigInPlace bool
	Err           error
}

func (e *ReloadFailedError) Error() string {
	if e.ConfigInPlace {
		return fmt.Sprintf("network reload on node %s failed: %v\n\nPVE had already written the new configuration to /etc/network/interfaces "+
			"before reloading, so the node keeps it and uses it at the next boot. Fix the cause above, then apply again.", e.Node, e.Err)
	}
	return fmt.Sprintf("network reload on node %s failed: %v\n\nThe staged change was reverted; nothing changed on the node.", e.Node, e.Err)
}

func (e *ReloadFailedError) Unwrap() error { return e.Err }

// reloadFailed works out what a failed reload left behind: a staged change
// still pending is ours (we started with none) and is reverted; otherwise
// the configuration is in place and the caller must record it.
func reloadFailed(ctx context.Context, c *pve.Client, node string, taskErr error) error {
	dctx, cancel := detached(ctx)
	defer cancel()
	list, err := c.Network(dctx, node)
	if err == nil && strings.TrimSpace(list.Changes) == "" {
		return &ReloadFailedError{Node: node, ConfigInPlace: true, Err: taskErr}
	}
	revertStaged(ctx, c, node)
	return &ReloadFailedError{Node: node, Err: taskErr}
}

// reloadRan checks, after a reload whose answer was lost and whose task
// (upid) ended, that the task was this reload: PVE's worker renames
// interfaces.new first, so a change still staged means the task followed
// was an earlier reload and this one never ran. That change is ours; it is
// reverted and the apply fails rather than report it applied.
func reloadRan(ctx context.Context, c *pve.Client, node, upid string, cause error) error {
	dctx, cancel := detached(ctx)
	defer cancel()
	list, err := c.Network(dctx, node)
	if err != nil {
		return fmt.Errorf("the network reload request on node %s got no answer (%w), and whether it ran cannot be read: %w", node, cause, err)
	}
	if strings.TrimSpace(list.Changes) == "" {
		return nil
	}
	revertStaged(ctx, c, node)
	return fmt.Errorf("the network reload request on node %s got no answer (%v), and the task taken for it (%s) ended with the change "+
		"still staged: the reload never ran. The staged change was reverted; nothing changed on the node. Apply again", node, cause, upid)
}

// revertStaged drops interfaces.new. It is safe because a change starts
// only when nothing else was staged, so all that is staged is ours.
func revertStaged(ctx context.Context, c *pve.Client, node string) {
	dctx, cancel := detached(ctx)
	defer cancel()
	// Dropping interfaces.new twice drops it once.
	if err := c.RevertNetwork(pve.Idempotent(dctx), node); err != nil {
		tflog.Warn(ctx, "could not revert staged network change", map[string]any{"node": node, "error": err.Error()})
	}
}

// cleanupTimeout bounds each clean-up request (revert, read-back, removing
// the rollback's files) made after the apply's own context may be done.
const cleanupTimeout = 30 * time.Second

// detached is ctx without its cancellation, for clean-up that must still
// run when the apply was interrupted or timed out, but with a deadline of
// its own: the node may be the one the change cut off, and a request to
// it would otherwise wait as long as the transport lets it.
func detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
}
