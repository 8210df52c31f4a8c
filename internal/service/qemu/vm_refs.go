package qemu

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// Plan-time reference checks of pve_vm and pve_vm_disk (issue #13): what
// they name must exist where the apply will look, or the apply stops
// after other resources of the plan were applied.

// planRefs notes the VM for resources that refer to it and checks its
// node and its NICs' bridges.
func (r *vmResource) planRefs(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan vmResourceModel
	if d := req.Plan.Get(ctx, &plan); d.HasError() {
		return
	}
	if !plan.VMID.IsNull() && !plan.VMID.IsUnknown() {
		node := ""
		if !plan.Node.IsUnknown() {
			node = plan.Node.ValueString()
		}
		r.PD.PlanNote(framework.PlannedVMs, strconv.FormatInt(plan.VMID.ValueInt64(), 10), node)
	}
	planCdromSlots(r.PD, &plan.vmModel, &resp.Diagnostics) // vm_cdrom.go
	if r.PD == nil || r.PD.Client == nil {
		return
	}
	framework.PlanCheckNodeAttr(ctx, r.PD, req, resp, vmTypeName)
	if resp.Diagnostics.HasError() || plan.Node.IsUnknown() || plan.Network.IsNull() || plan.Network.IsUnknown() {
		return
	}
	var prior vmResourceModel
	hasPrior := !req.State.Raw.IsNull() && !req.State.Get(ctx, &prior).HasError()
	var nets, priorNets map[string]types.Object
	if plan.Network.ElementsAs(ctx, &nets, false).HasError() {
		return
	}
	if hasPrior && prior.Node.Equal(plan.Node) && !prior.Network.IsNull() && !prior.Network.IsUnknown() {
		_ = prior.Network.ElementsAs(ctx, &priorNets, false)
	}
	node := plan.Node.ValueString()
	slots := make([]string, 0, len(nets))
	for k := range nets {
		slots = append(slots, k)
	}
	sort.Strings(slots)
	for _, slot := range slots {
		b, _ := nets[slot].Attributes()["bridge"].(types.String)
		if b.IsNull() || b.IsUnknown() {
			continue
		}
		// A bridge the VM already uses on this node was checked before.
		if po, ok := priorNets[slot]; ok {
			if pb, _ := po.Attributes()["bridge"].(types.String); pb.Equal(b) {
				continue
			}
		}
		checkBridge(ctx, r.PD, node, b.ValueString(), path.Root("network").AtMapKey(slot).AtName("bridge"), plan.VMID, &resp.Diagnostics)
	}
}

// checkBridge refuses a bridge the node does not have: PVE writes the
// config, then fails the start ("bridge 'x' does not exist", from
// PVE/Network.pm's tap_plug) or the hotplug of the NIC.
func checkBridge(ctx context.Context, pd *framework.ProviderData, node, bridge string, at path.Path, vmid types.Int64, diags *diag.Diagnostics) {
	if _, ok := pd.PlanNoted(framework.PlannedIfaces, node+"/"+bridge); ok {
		return
	}
	list, err := pd.PlanNodeNetwork(ctx, node)
	if err != nil {
		return
	}
	var bridges []string
	for _, in := range list.Interfaces {
		if in.Type == "bridge" || in.Type == "OVSBridge" {
			if in.Iface == bridge {
				return
			}
			bridges = append(bridges, in.Iface)
		}
	}
	// SDN VNets are bridges too; PVE lists them with type any_bridge. Asked
	// only on a miss, which is rare.
	c, err := pd.NodeClient(ctx, node)
	if err != nil {
		return
	}
	var rows []struct {
		Iface string `json:"iface"`
	}
	if err := c.Get(ctx, "/nodes/"+pve.PathEscape(node)+"/network", pve.Params{"type": "any_bridge"}, &rows); err == nil {
		for _, row := range rows {
			if row.Iface == bridge {
				return
			}
		}
	}
	if len(bridges) == 0 && len(rows) == 0 {
		// A node without any bridge or VNet is not one PVE's installer
		// leaves (it makes vmbr0), and there is nothing to offer instead:
		// let the apply report what the node says. (pvesim's bare default
		// node is such a node.)
		return
	}
	sort.Strings(bridges)
	what := "The VM"
	if !vmid.IsNull() && !vmid.IsUnknown() {
		what = fmt.Sprintf("VM %d", vmid.ValueInt64())
	}
	diags.AddAttributeError(at, fmt.Sprintf("Unable to plan %s: bridge %s does not exist on node %s", vmTypeName, bridge, node),
		fmt.Sprintf("%s = %q, but node %s has no such bridge (GET /nodes/%s/network lists the bridges %s). PVE would write "+
			"the config and then fail to start %s or plug the NIC (\"bridge '%s' does not exist\"). Use one of those "+
			"bridges, or create the bridge with a pve_node_network (or pve_node_network_config) resource and refer to it "+
			"(bridge = pve_node_network.<name>.name) so that Terraform creates it first.",
			at.String(), bridge, node, node, framework.ListOrNone(bridges), what, bridge))
}

// planRefs checks the disk's VM and storage.
func (r *vmDiskResource) planRefs(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || r.PD == nil || r.PD.Client == nil {
		return
	}
	var plan vmDiskModel
	if d := req.Plan.Get(ctx, &plan); d.HasError() || plan.VMID.IsUnknown() {
		return
	}
	planDiskSlot(r.PD, &plan, &resp.Diagnostics) // vm_cdrom.go
	var prior *vmDiskModel
	if !req.State.Raw.IsNull() {
		prior = &vmDiskModel{}
		if req.State.Get(ctx, prior).HasError() {
			return
		}
	}
	vmid := plan.VMID.ValueInt64()
	node, ok := r.planVMNode(ctx, vmid, prior == nil, &resp.Diagnostics)
	if !ok || plan.Storage.IsUnknown() || (prior != nil && prior.Storage.Equal(plan.Storage)) {
		return
	}
	r.planStorage(ctx, plan.Storage.ValueString(), vmid, node, &resp.Diagnostics)
}

// planVMNode is the node of VM vmid: planned in this run, or from the
// cluster's resource list. false when that is unknown or the VM does not
// exist (refused for a new disk).
func (r *vmDiskResource) planVMNode(ctx context.Context, vmid int64, isNew bool, diags *diag.Diagnostics) (string, bool) {
	if node, planned := r.PD.PlanNoted(framework.PlannedVMs, strconv.FormatInt(vmid, 10)); planned {
		return node, true
	}
	row, found, rows, err := r.PD.PlanFindGuest(ctx, vmid)
	if err != nil {
		return "", false
	}
	if !found || row.Type != "qemu" {
		if isNew {
			diags.AddAttributeError(path.Root("vm_id"), fmt.Sprintf("Unable to plan %s: VM %d does not exist", vmDiskTypeName, vmid),
				fmt.Sprintf("vm_id = %d, but the cluster has no VM %d (GET /cluster/resources lists the VMs %s). Use the id of "+
					"an existing VM, or refer to the pve_vm that creates it (vm_id = pve_vm.<name>.vmid) so that Terraform "+
					"creates the VM first.", vmid, vmid, vmList(rows)))
		}
		return "", false
	}
	return row.Node, true
}

// planStorage refuses a storage id that does not exist, does not take VM
// disks, is not on the VM's node or is disabled; one planned in this run
// passes.
func (r *vmDiskResource) planStorage(ctx context.Context, id string, vmid int64, node string, diags *diag.Diagnostics) {
	if _, ok := r.PD.PlanNoted(framework.PlannedStorages, id); ok {
		return
	}
	list, hit, err := r.PD.PlanStorages(ctx, id)
	if err != nil {
		return
	}
	at := path.Root("storage")
	usable := imageStorages(list, node)
	where := "the VM's node"
	if node != "" {
		where = "node " + node
	}
	fix := fmt.Sprintf("Storages that take VM disks (content images) on %s: %s. Use one of them, or add images to the storage's content "+
		"(pve_storage content, or Datacenter → Storage → Edit in the GUI).", where, framework.ListOrNone(usable))
	switch {
	case hit == nil:
		diags.AddAttributeError(at, fmt.Sprintf("Unable to plan %s: storage %s does not exist", vmDiskTypeName, id),
			fmt.Sprintf("storage = %q is not in storage.cfg (GET /storage). %s If a pve_storage in this configuration creates it, "+
				"refer to it (storage = pve_storage.<name>.storage) so that Terraform creates it first.", id, fix))
	case !contains(hit.Content, "images"):
		diags.AddAttributeError(at, fmt.Sprintf("Unable to plan %s: storage %s does not take VM disks", vmDiskTypeName, id),
			fmt.Sprintf("storage = %q has content %s, without images, so PVE refuses VM disks on it (\"storage '%s' does not "+
				"support vm images\"). %s", id, framework.ListOrNone(hit.Content), id, fix))
	case !storageOnNode(hit, node):
		diags.AddAttributeError(at, fmt.Sprintf("Unable to plan %s: storage %s is not available on node %s", vmDiskTypeName, id, node),
			fmt.Sprintf("storage = %q is limited to the nodes %s, and VM %d is on %s (PVE: \"storage '%s' is not available on "+
				"node '%s'\"). %s", id, framework.ListOrNone(hit.Nodes), vmid, node, id, node, fix))
	case hit.Disable:
		diags.AddAttributeError(at, fmt.Sprintf("Unable to plan %s: storage %s is disabled", vmDiskTypeName, id),
			fmt.Sprintf("storage = %q is disabled in storage.cfg, so PVE cannot allocate on it. Enable it, or use another storage. %s", id, fix))
	}
}

// storageOnNode reports whether node may use the storage (any node when
// node is unknown or the storage is not limited to some).
func storageOnNode(sc *pve.StorageConfig, node string) bool {
	if node == "" || len(sc.Nodes) == 0 {
		return true
	}
	for _, n := range sc.Nodes {
		if n == node {
			return true
		}
	}
	return false
}

// imageStorages lists the enabled storages with content images that node
// can use (every node's when node is "").
func imageStorages(list []pve.StorageConfig, node string) []string {
	var out []string
	for _, sc := range list {
		if sc.Disable || !contains(sc.Content, "images") {
			continue
		}
		ok := node == "" || len(sc.Nodes) == 0
		for _, n := range sc.Nodes {
			ok = ok || n == node
		}
		if ok {
			out = append(out, sc.Storage)
		}
	}
	return out
}

func vmList(rows []pve.ClusterResource) string {
	var ids []string
	for _, r := range rows {
		if r.Type == "qemu" {
			ids = append(ids, fmt.Sprintf("%d (%s)", r.VMID, r.Node))
		}
	}
	if len(ids) > 20 {
		ids = append(ids[:20], fmt.Sprintf("and %d more", len(ids)-20))
	}
	return framework.ListOrNone(ids)
}

func contains(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}
