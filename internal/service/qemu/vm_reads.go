package qemu

import (
	"context"
	"fmt"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// The reads refreshes share: within one provider run (one Terraform
// command) every pve_vm, pve_vm_disk and VM data source of a node shares
// one VM list of that node (power state and lock; qemu-server's vmstatus
// checks the process, unlike /cluster/resources, whose status lags by
// pvestatd's 10 s), and the resources of one VM share one GET pending,
// which carries the config and its pending changes at once. A no-change
// plan thus costs one request per VM plus one per node. Every write drops
// them (framework.SharedRead); reads after a write load them fresh.

// listedVM is vmid's row of node's shared VM list; ok is false when the
// node does not have it.
func listedVM(ctx context.Context, pd *framework.ProviderData, c *pve.Client, node string, vmid int64, fresh bool) (pve.VMListEntry, bool, error) {
	list, err := framework.SharedRead(ctx, pd, fresh, "qemu/vms/"+node, func(ctx context.Context) ([]pve.VMListEntry, error) {
		return c.VMs(ctx, node)
	})
	if err != nil {
		return pve.VMListEntry{}, false, err
	}
	for _, e := range list {
		if e.VMID == vmid {
			return e, true, nil
		}
	}
	return pve.VMListEntry{}, false, nil
}

// sharedPending is the VM's GET pending, shared by its resources.
func sharedPending(ctx context.Context, pd *framework.ProviderData, c *pve.Client, node string, vmid int64, fresh bool) ([]pve.VMPendingItem, error) {
	return framework.SharedRead(ctx, pd, fresh, fmt.Sprintf("qemu/pending/%s/%d", node, vmid), func(ctx context.Context) ([]pve.VMPendingItem, error) {
		return c.VMPending(ctx, node, vmid)
	})
}

// findVM is the node that has vmid for a refresh: known (the node in the
// state) when its shared list has the VM, else wherever the cluster's
// resource index has it (a migration, HA, or the VM is gone:
// ErrNotFound). The index is read only then, so a refresh of a VM that
// stayed put costs no request of its own here, and the refreshes of VMs
// that moved share one (framework.ClusterGuests).
func findVM(ctx context.Context, pd *framework.ProviderData, vmid int64, known string) (string, error) {
	if known != "" {
		if c, err := pd.NodeClient(ctx, known); err == nil {
			_, ok, err := listedVM(ctx, pd, c, known, vmid, false)
			if err != nil {
				return "", err
			}
			if ok {
				return known, nil
			}
		}
	}
	row, err := pd.ClusterGuest(ctx, vmid)
	if err != nil {
		return "", err
	}
	if row.Type != "qemu" {
		return "", fmt.Errorf("VM %d: the id is a %s's: %w", vmid, row.Type, pve.ErrNotFound)
	}
	return row.Node, nil
}

// readVM reads the VM on node from the shared reads (fresh: loaded
// anew, for a read after a write): its config and pending changes from
// GET pending, its power state from the node's list. HA's hold on the
// placement (status/current) is read only when the VM is not on the node
// the prior model has, the one case place() looks at it.
func readVM(ctx context.Context, pd *framework.ProviderData, c *pve.Client, node string, vmid int64, prior *vmModel, keepNode, fresh bool) (*vmModel, error) {
	entry, ok, err := listedVM(ctx, pd, c, node, vmid, fresh)
	if err != nil {
		return nil, err
	}
	if !ok {
		// PVE's own answer for a VM the node does not have, which
		// onVMNode knows to follow.
		if _, err := c.VMStatus(ctx, node, vmid); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("VM %d is not in node %s's VM list: %w", vmid, node, pve.ErrNotFound)
	}
	items, err := sharedPending(ctx, pd, c, node, vmid, fresh)
	if err != nil {
		return nil, err
	}
	status := &pve.VMStatus{Status: entry.Status, Name: entry.Name, Lock: entry.Lock, Tags: entry.Tags}
	if prior != nil && !keepNode && prior.Node.ValueString() != node {
		if status, err = c.VMStatus(ctx, node, vmid); err != nil {
			return nil, err
		}
	}
	var m vmModel
	m.fromConfig(node, vmid, pve.EffectiveConfig(items), status.Running(), pve.PendingChanges(items), prior)
	m.place(node, status, prior, keepNode)
	return &m, nil
}
