package qemu

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// Where a VM is (DESIGN.md, "HA owns the placement of the VMs it
// manages"). The provider finds a VM wherever the cluster has it. For a VM
// the HA manager manages, `node` is where Terraform put it and
// `current_node` where it runs: HA moves it (maintenance, fencing, the
// CRS, an operator's `ha-manager migrate`) and Terraform does not move it
// back. Work that meets a migration waits for it and goes to the new node.

// haOwnsPlacement reports whether the HA manager may move the VM: it
// manages it (any state but ignored).
func haOwnsPlacement(st *pve.VMStatus) bool {
	return st != nil && st.HAManaged && st.HAState != "ignored"
}

// place sets the model's nodes after a read on actual: `node` stays what
// the prior model (state or plan) says when HA owns the placement, or
// with keepNode, when an update left the VM where HA had put it at plan
// (its HA resource may be gone by the read). A VM not in HA gets `node`
// = actual on the next refresh, so that plan migrates it back.
func (m *vmModel) place(actual string, st *pve.VMStatus, prior *vmModel, keepNode bool) {
	m.Node, m.CurrentNode = types.StringValue(actual), types.StringValue(actual)
	if (keepNode || haOwnsPlacement(st)) && prior != nil && !prior.Node.IsNull() && !prior.Node.IsUnknown() && prior.Node.ValueString() != "" {
		m.Node = prior.Node
	}
}

// haMoved reports a model of a VM that HA moved away from `node`.
func (m *vmModel) haMoved() bool {
	cur := m.CurrentNode
	return !cur.IsNull() && !cur.IsUnknown() && cur.ValueString() != "" && !cur.Equal(m.Node)
}

// migrating reports a row of a VM a migration holds: its config lock, or
// the HA manager's state while it moves the VM (from the CRM's decision
// until its LRM locked the config, and until the CRM saw the result).
func migrating(r *pve.ClusterResource) bool {
	return r.Lock == "migrate" || r.HAState == "migrate" || r.HAState == "relocate"
}

// pollVM reads the VM's row of the cluster's resource index until done
// accepts it, backing off from 100 ms to 2 s; the last row and error are
// in the timeout's error.
func pollVM(ctx context.Context, c *pve.Client, vmid int64, what string, done func(*pve.ClusterResource) bool) (*pve.ClusterResource, error) {
	delay := 100 * time.Millisecond
	for {
		r, err := c.VMResource(ctx, vmid)
		if err == nil && done(r) {
			return r, nil
		}
		if errors.Is(err, pve.ErrNotFound) {
			return nil, err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			last := "no answer"
			if r != nil {
				last = fmt.Sprintf("on %s, lock %q, HA state %q", r.Node, r.Lock, r.HAState)
			}
			return nil, fmt.Errorf("VM %d %s (last seen %s, %w): %w", vmid, what, last, err, ctx.Err())
		case <-t.C:
		}
		if delay < 2*time.Second {
			delay *= 2
		}
	}
}

// waitOnNode waits until the cluster's resource list shows the VM on
// node: after a migration task ends the config may take a moment to show
// up there (the race other providers hit, bpg #2025), and an HA
// migration only starts after its hamigrate task ended.
func waitOnNode(ctx context.Context, c *pve.Client, vmid int64, node string) error {
	_, err := pollVM(ctx, c, vmid, "did not arrive on node "+node, func(r *pve.ClusterResource) bool {
		return r.Node == node && !migrating(r)
	})
	return err
}

// migrationWait bounds how long work waits for a migration to end: a
// migration that died leaves `lock: migrate` behind until `qm unlock`.
const migrationWait = 15 * time.Minute

// settledNode is the node the VM is on once no migration holds it.
func settledNode(ctx context.Context, c *pve.Client, vmid int64) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, migrationWait)
	defer cancel()
	r, err := pollVM(ctx, c, vmid, "is still being migrated (if no migration runs, a failed one left the lock: qm unlock "+
		strconv.FormatInt(vmid, 10)+")", func(r *pve.ClusterResource) bool { return !migrating(r) })
	if err != nil {
		return "", err
	}
	return r.Node, nil
}

// vmMoveAttempts bounds how often onVMNode follows a VM that migrations
// keep moving.
const vmMoveAttempts = 5

// onVMNode runs op against the VM on node. When op meets a migration (PVE
// answers "VM is locked (migrate)", or the node no longer has the VM's
// config because it moved), it waits until the migration ended and runs
// op again on the node the VM is on then, which it returns. op must be
// safe to run again: it reads what it needs before it writes.
func onVMNode(ctx context.Context, pd *framework.ProviderData, vmid int64, node string, op func(c *pve.Client, node string) error) (string, error) {
	for attempt := 1; ; attempt++ {
		c, err := pd.NodeClient(ctx, node)
		if err != nil {
			return node, err
		}
		err = op(c, node)
		moving := pve.IsVMMigrating(err)
		if err == nil || attempt >= vmMoveAttempts || (!moving && !pve.IsVMConfigMissing(err)) {
			return node, err
		}
		now, serr := settledNode(ctx, pd.Client, vmid)
		switch {
		case errors.Is(serr, pve.ErrNotFound):
			return node, err // gone, not moved
		case serr != nil:
			return node, fmt.Errorf("%w; waiting for the migration: %w", err, serr)
		case now == node && !moving:
			return node, err // not here, and not moved away either
		}
		tflog.Info(ctx, "VM was being migrated; continuing on its node", map[string]any{"vmid": vmid, "from": node, "node": now})
		node = now
	}
}

// warnHAPlacement tells at plan where HA put a VM that is not on its
// `node`, and that the plan leaves it there (unless it changes node).
func warnHAPlacement(state *vmResourceModel, plan *vmResourceModel, diags *diag.Diagnostics) {
	cur, node := state.CurrentNode, state.Node
	if !state.haMoved() || !plan.Node.Equal(node) {
		return
	}
	vmid := state.VMID.ValueInt64()
	diags.AddWarning(fmt.Sprintf("VM %d runs on %s, where the HA manager moved it", vmid, cur.ValueString()),
		fmt.Sprintf("node = %q is where Terraform created or last migrated VM %d; the HA manager has moved it to %s (node "+
			"maintenance, fencing, rebalancing or ha-manager migrate). HA owns the placement of the VMs it manages, so the plan "+
			"leaves it there; current_node shows where it runs. To move it, use ha-manager migrate (or HA rules or groups), or "+
			"change node, which migrates it through HA; node = %q records where it is now.", node.ValueString(), vmid, cur.ValueString(), cur.ValueString()))
}

// vmAt is the node a VM is on and the client that reaches it, for work
// of several steps (pve_vm_disk): a step that meets a migration waits for
// it, runs again where the VM went, and the later steps go there too.
type vmAt struct {
	pd   *framework.ProviderData
	vmid int64
	c    *pve.Client
	node string
}

// do runs op as onVMNode does and moves at along with the VM.
func (a *vmAt) do(ctx context.Context, op func(c *pve.Client, node string) error) error {
	node, err := onVMNode(ctx, a.pd, a.vmid, a.node, op)
	if node != a.node {
		if c, cerr := a.pd.NodeClient(ctx, node); cerr == nil {
			a.c, a.node = c, node
		}
	}
	return err
}

// awaitTask starts a VM task of type typ with start where the VM is and
// waits for it.
func (a *vmAt) awaitTask(ctx context.Context, typ string, start func(c *pve.Client, node string) (string, error)) error {
	return a.do(ctx, func(c *pve.Client, node string) error {
		_, err := c.AwaitVMTaskOf(ctx, node, typ, a.vmid, func() (string, error) { return start(c, node) })
		return err
	})
}

func (a *vmAt) updateConfig(ctx context.Context, u pve.VMConfigUpdate) error {
	return a.do(ctx, func(c *pve.Client, node string) error { return updateConfig(ctx, c, node, a.vmid, u) })
}

// readSlot reads the slot fresh (GET pending, remembered for the VM's
// next write: vm_known.go).
func (a *vmAt) readSlot(ctx context.Context, slot string) (*slotState, error) {
	var s *slotState
	err := a.do(ctx, func(c *pve.Client, node string) error {
		items, err := freshPending(ctx, a.pd, c, node, a.vmid)
		if err != nil {
			return err
		}
		s, err = slotFrom(items, slot)
		return err
	})
	return s, err
}

// slotForWrite is the slot as a write starts from: what this run last
// read of the VM on its node (vm_known.go) unless fresh, else read fresh.
func (a *vmAt) slotForWrite(ctx context.Context, slot string, fresh bool) (*slotState, error) {
	if k, ok := knownVMOf(a.pd, a.vmid); ok && k.node == a.node && !fresh {
		if s, err := slotFrom(k.items, slot); err == nil {
			return s, nil
		}
	}
	return a.readSlot(ctx, slot)
}

// reboot reboots the VM (a reboot task of an HA-managed VM goes through HA).
func (a *vmAt) reboot(ctx context.Context) error {
	return a.do(ctx, func(c *pve.Client, node string) error {
		// A reboot whose worker met the config lock did nothing and is
		// started again, as every VM task (AwaitVMTask).
		_, err := c.AwaitVMTaskOf(ctx, node, "qmreboot", a.vmid, func() (string, error) { return c.RebootVM(ctx, node, a.vmid) })
		return err
	})
}
