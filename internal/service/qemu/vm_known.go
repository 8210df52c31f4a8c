package qemu

import (
	"context"
	"strconv"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// What this provider run last read of a VM's config (GET pending, read
// fresh: a read-back after a write), kept for the VM's next write in the
// same run. Consecutive writes to one VM (its create, then each disk's
// attach, made under the VM's lock) need neither a search for the VM's
// node nor a read before the write. Writes to other objects do not change
// a VM's config, so unlike SharedRead's values these are not dropped by
// every write; the VM resource's own update and delete drop them.

// knownVM is a VM's node and its GET pending as read there.
type knownVM struct {
	node  string
	items []pve.VMPendingItem
}

func knownVMKey(vmid int64) string { return "qemu/known/" + strconv.FormatInt(vmid, 10) }

// rememberVM records a fresh GET pending of vmid on node.
func rememberVM(pd *framework.ProviderData, vmid int64, node string, items []pve.VMPendingItem) {
	pd.Reads.Put(knownVMKey(vmid), &knownVM{node: node, items: items})
}

// knownVMOf is what rememberVM recorded of vmid, if anything.
func knownVMOf(pd *framework.ProviderData, vmid int64) (*knownVM, bool) {
	v, ok := pd.Reads.Peek(knownVMKey(vmid))
	if !ok {
		return nil, false
	}
	k, ok := v.(*knownVM)
	return k, ok
}

// forgetVM drops what is known of vmid: the VM resource's own update or
// delete changes or removes its config.
func forgetVM(pd *framework.ProviderData, vmid int64) { pd.Reads.Invalidate(knownVMKey(vmid)) }

// freshPending is GET pending of vmid on node, remembered for the VM's
// next write.
func freshPending(ctx context.Context, pd *framework.ProviderData, c *pve.Client, node string, vmid int64) ([]pve.VMPendingItem, error) {
	items, err := c.VMPending(ctx, node, vmid)
	if err != nil {
		return nil, err
	}
	rememberVM(pd, vmid, node, items)
	return items, nil
}

// readCreated reads back a VM this run created: its config and pending
// changes fresh (remembered for its disks' attaches). Its power state is
// the one the create left (running when it was started), not read: a
// VM just created is in no HA resource and nothing else started it.
func readCreated(ctx context.Context, pd *framework.ProviderData, c *pve.Client, node string, vmid int64, prior *vmModel, running bool) (*vmModel, error) {
	items, err := freshPending(ctx, pd, c, node, vmid)
	if err != nil {
		return nil, err
	}
	status := &pve.VMStatus{Status: "stopped"}
	if running {
		status.Status = "running"
	}
	var m vmModel
	m.fromConfig(node, vmid, pve.EffectiveConfig(items), running, pve.PendingChanges(items), prior)
	m.place(node, status, prior, false)
	return &m, nil
}
