package network

import (
	"context"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// Staging writes whose answer was lost. PVE's GET shows the staged view
// (interfaces.new), and a change starts only with nothing staged (the
// node's lock held), so reading back the one interface a step touched
// tells whether PVE staged it: a step it staged counts as answered, a step
// it did not is sent again (pve.Client.WriteVerified). Nothing is sent
// again blindly where a second copy would be refused.

// createInterface stages a new interface. It did not exist when the change
// started, so an interface of that name and type in the staged view after
// a lost answer is this create.
func createInterface(ctx context.Context, c *pve.Client, node, iface string, req pve.NetworkInterfaceRequest) error {
	return c.WriteVerified(ctx, "create network interface "+iface+" on node "+node,
		func() error { return c.CreateNetworkInterface(ctx, node, iface, req) },
		func() (bool, error) {
			in, err := c.NetworkInterface(ctx, node, iface)
			if pve.IsNotFound(err) {
				return false, nil
			}
			if err != nil {
				return false, err
			}
			return in.Type == req.Type, nil
		})
}

// updateInterface stages a change of an interface. The request sets every
// value it carries absolutely (and deletes by name), with no digest: sent
// twice it stages what it stages once.
func updateInterface(ctx context.Context, c *pve.Client, node, iface string, req pve.NetworkInterfaceRequest) error {
	return c.UpdateNetworkInterface(pve.Idempotent(ctx), node, iface, req)
}

// deleteInterface stages the removal of an interface of type typ. A
// physical NIC stays listed without its stanza (PVE adds every NIC the
// kernel has), so deleting it again drops nothing more: idempotent. Any
// other interface is gone from the staged view once PVE staged its
// removal, and a second delete would be refused ("interface does not
// exist"): it is read back.
func deleteInterface(ctx context.Context, c *pve.Client, node, iface, typ string) error {
	if typ == typeEth {
		return c.DeleteNetworkInterface(pve.Idempotent(ctx), node, iface)
	}
	return c.WriteVerified(ctx, "delete network interface "+iface+" on node "+node,
		func() error { return c.DeleteNetworkInterface(ctx, node, iface) },
		func() (bool, error) {
			_, err := c.NetworkInterface(ctx, node, iface)
			if pve.IsNotFound(err) {
				return true, nil
			}
			return false, err
		})
}

// startReload starts the reload of the staged configuration (srvreload).
// A lost answer is followed through its task, and the write sent again
// when no task of it exists (pve.Client.StartTask). lost is the error of
// the first lost answer, nil when none was: the task StartTask then found
// may be an earlier reload by the same user seconds before (it takes the
// newest of type srvreload, id networking), which the caller tells by
// whether the change is still staged once the task ended (PVE's worker
// renames interfaces.new first).
func startReload(ctx context.Context, c *pve.Client, node string) (upid string, lost, err error) {
	upid, err = c.StartTask(ctx, node, "srvreload", "networking", func() (string, error) {
		upid, err := c.ApplyNetwork(ctx, node)
		if lost == nil && pve.OutcomeUnknown(err) {
			lost = err
		}
		return upid, err
	})
	return upid, lost, err
}
