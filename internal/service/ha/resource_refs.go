package ha

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
)

// planGuest refuses, at plan, an HA resource for a guest the cluster does
// not have and no pve_vm of the plan creates (issue #13): PVE's
// POST /cluster/ha/resources answers "resource 'vm:N' does not exist in
// cluster" only in the apply. prior is the state (nil on create); only a new or
// changed guest is checked.
func (r *haResource) planGuest(ctx context.Context, plan, config, prior *haResourceModel, diags *diag.Diagnostics) {
	if r.PD == nil || r.PD.Client == nil || plan.VMID.IsUnknown() || plan.VMID.IsNull() {
		return
	}
	if prior != nil && prior.VMID.Equal(plan.VMID) {
		return
	}
	vmid := plan.VMID.ValueInt64()
	if _, ok := r.PD.PlanNoted(framework.PlannedVMs, strconv.FormatInt(vmid, 10)); ok {
		return
	}
	row, found, rows, err := r.PD.PlanFindGuest(ctx, vmid)
	if err != nil {
		return
	}
	at, attr := path.Root("vmid"), fmt.Sprintf("vmid = %d", vmid)
	if !config.SID.IsNull() && !config.SID.IsUnknown() {
		at, attr = path.Root("sid"), fmt.Sprintf("sid = %q", config.SID.ValueString())
	}
	wantType := ""
	if !config.SID.IsNull() && !config.SID.IsUnknown() {
		wantType = map[string]string{"vm": "qemu", "ct": "lxc"}[strings.SplitN(config.SID.ValueString(), ":", 2)[0]]
	}
	if found && (wantType == "" || row.Type == wantType) {
		return
	}
	var guests []string
	for _, g := range rows {
		switch g.Type {
		case "qemu":
			guests = append(guests, fmt.Sprintf("vm:%d", g.VMID))
		case "lxc":
			guests = append(guests, fmt.Sprintf("ct:%d", g.VMID))
		}
	}
	if len(guests) > 20 {
		guests = append(guests[:20], fmt.Sprintf("and %d more", len(guests)-20))
	}
	if found {
		prefix := map[string]string{"qemu": "vm", "lxc": "ct"}[row.Type]
		noun := map[string]string{"qemu": "a VM", "lxc": "a container"}[row.Type]
		diags.AddAttributeError(at, fmt.Sprintf("Unable to plan %s: guest %d is not of the type in sid", resourceTypeName, vmid),
			fmt.Sprintf("%s, but guest %d on node %s is %s. Use sid = \"%s:%d\", or set vmid alone and let PVE find the type.",
				attr, vmid, row.Node, noun, prefix, vmid))
		return
	}
	diags.AddAttributeError(at, fmt.Sprintf("Unable to plan %s: guest %d does not exist", resourceTypeName, vmid),
		fmt.Sprintf("%s, but the cluster has no guest %d (GET /cluster/resources lists %s), so PVE would refuse it in the "+
			"apply (\"resource '%s' does not exist in cluster\"). Use an existing guest, or refer to the pve_vm that creates it "+
			"(vmid = pve_vm.<name>.vmid) so that Terraform creates the VM first.", attr, vmid, framework.ListOrNone(guests), sid(config, vmid)))
}

// sid is the HA id PVE's refusal names: sid as configured, else vm:<vmid>.
func sid(config *haResourceModel, vmid int64) string {
	if !config.SID.IsNull() && !config.SID.IsUnknown() {
		return config.SID.ValueString()
	}
	return fmt.Sprintf("vm:%d", vmid)
}
