package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

const lvmThinTypeName = "pve_node_lvmthin"

var (
	_ resource.Resource                = (*lvmThinResource)(nil)
	_ resource.ResourceWithConfigure   = (*lvmThinResource)(nil)
	_ resource.ResourceWithImportState = (*lvmThinResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*lvmThinResource)(nil)
)

// NewLVMThinResource is the constructor the provider registers.
func NewLVMThinResource() resource.Resource {
	return &lvmThinResource{ResourceBase: framework.ResourceBase{TypeName: lvmThinTypeName}}
}

type lvmThinResource struct{ framework.ResourceBase }

type lvmThinModel struct {
	ID           types.String `tfsdk:"id"`
	Node         types.String `tfsdk:"node"`
	Name         types.String `tfsdk:"name"`
	Device       types.String `tfsdk:"device"`
	DestroyData  types.Bool   `tfsdk:"destroy_data"`
	Size         types.Int64  `tfsdk:"size"`
	Used         types.Int64  `tfsdk:"used"`
	MetadataSize types.Int64  `tfsdk:"metadata_size"`
}

const destroyDataDesc = "Allow destroying the resource (default false). Destroying it deletes every volume on the pool and wipes its disks; " +
	"while false, a destroy is refused at plan. Set it to true and apply that first."

func deviceValidator() validator.String {
	return stringvalidator.RegexMatches(devPathRE, "must be a block device path such as /dev/sdb")
}

func (r *lvmThinResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "An LVM thin pool on a free disk of a node (GUI: node → Disks → LVM-Thin → Create: Thinpool): PVE makes " +
			"the disk a volume group named `name` with one thin pool `name` in it, sized to the disk (1% metadata). Add the " +
			"storage for it with `pve_storage` (type `lvmthin`, `vgname` and `thinpool` = `name`, `nodes` = the node).\n\n" +
			"PVE refuses disks in use (partitions, LVM, ZFS, a Ceph OSD: `device '/dev/sdb' is already in use`). Nothing here " +
			"can change in place: a different node, name or disk is refused at plan, because replacing the pool would delete " +
			"its volumes. Destroying it needs `destroy_data = true` first; it then removes the pool with its volumes and wipes " +
			"the disk (`cleanup-disks`).\n\n" +
			"Credentials: an API token with `Sys.Modify` on `/` (reading needs `Sys.Audit`).",
		Attributes: map[string]schema.Attribute{
			"id":   framework.IDAttribute("`<node>/<name>`."),
			"node": framework.NodeAttribute("Node whose disk holds the pool.", framework.NodeInPlace),
			"name": schema.StringAttribute{
				Required: true, MarkdownDescription: "Name of the volume group and of its thin pool (a storage id: letters, digits, `-`, `_`, `.`).",
				Validators: []validator.String{stringvalidator.RegexMatches(storageIDRE, "must start with a letter, end with a letter or digit, and hold only letters, digits, '-', '_' and '.'")},
			},
			"device": schema.StringAttribute{
				Required: true, MarkdownDescription: "The free disk, such as `/dev/sdb`. PVE's API does not report it back, so after an import the first apply records it.",
				Validators: []validator.String{deviceValidator()},
			},
			"destroy_data": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(false), MarkdownDescription: destroyDataDesc,
			},
			"size":          schema.Int64Attribute{Computed: true, MarkdownDescription: "Size of the thin pool's data in bytes."},
			"used":          schema.Int64Attribute{Computed: true, MarkdownDescription: "Bytes of the pool in use."},
			"metadata_size": schema.Int64Attribute{Computed: true, MarkdownDescription: "Size of the thin pool's metadata in bytes."},
		},
	}
}

// refuseDestroy is the plan-time guard of resources whose destroy wipes
// data: refused while destroy_data is not true.
func refuseDestroy(what, id string, destroyData types.Bool, diags *diag.Diagnostics) {
	if destroyData.IsNull() || !destroyData.ValueBool() {
		framework.RefuseDestroy(diags, "destroy_data", what+" "+id,
			fmt.Sprintf("Destroying %s %s deletes every volume on it and wipes its disks, and destroy_data is false. To destroy "+
				"it, set destroy_data = true and apply that first. To stop managing it without destroying it, use a removed block "+
				"with lifecycle { destroy = false }.", what, id))
	}
}

// refuseChange refuses a changed attribute that PVE cannot change in place.
func refuseChange(diags *diag.Diagnostics, attr, what, id string, plan, state types.String, how string) {
	if plan.IsUnknown() || state.IsNull() || plan.Equal(state) {
		return
	}
	framework.RefuseChange(diags, attr, what+" "+id,
		fmt.Sprintf("PVE cannot change %s of %s %s in place (%q → %q), and replacing it would delete the volumes on it, so the "+
			"provider does not. %s", attr, what, id, state.ValueString(), plan.ValueString(), how))
}

func (r *lvmThinResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	r.checkRefs(ctx, req, resp)
	if req.State.Raw.IsNull() {
		return
	}
	var state lvmThinModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id := state.ID.ValueString()
	if req.Plan.Raw.IsNull() {
		refuseDestroy("LVM thin pool", id, state.DestroyData, &resp.Diagnostics)
		return
	}
	var plan lvmThinModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	how := "Keep the old value; to move, create a second pool, move the disks to a storage on it, then destroy this one."
	refuseChange(&resp.Diagnostics, "node", "LVM thin pool", id, plan.Node, state.Node, how)
	refuseChange(&resp.Diagnostics, "name", "LVM thin pool", id, plan.Name, state.Name, how)
	refuseChange(&resp.Diagnostics, "device", "LVM thin pool", id, plan.Device, state.Device, how)
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("size"), state.Size)...)
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("metadata_size"), state.MetadataSize)...)
}

func findThinPool(ctx context.Context, c *pve.Client, node, name string) (*pve.ThinPool, error) {
	pools, err := c.ThinPools(ctx, node)
	if err != nil {
		return nil, err
	}
	for _, p := range pools {
		if p.VG == name && p.LV == name {
			return &p, nil
		}
	}
	return nil, nil
}

func (m *lvmThinModel) fromAPI(p *pve.ThinPool) {
	m.ID = types.StringValue(m.Node.ValueString() + "/" + m.Name.ValueString())
	m.Size, m.Used, m.MetadataSize = types.Int64Value(p.Size), types.Int64Value(p.Used), types.Int64Value(p.MetadataSize)
	if m.DestroyData.IsNull() || m.DestroyData.IsUnknown() {
		m.DestroyData = types.BoolValue(false)
	}
}

func (r *lvmThinResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan lvmThinModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	node, name, dev := plan.Node.ValueString(), plan.Name.ValueString(), plan.Device.ValueString()
	id := node + "/" + name
	c := r.NodeClient(ctx, node, &resp.Diagnostics)
	if c == nil {
		return
	}
	before, err := findThinPool(ctx, c, node, name)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Create", "LVM thin pool", id, err)
		return
	}
	tflog.Info(ctx, "creating LVM thin pool", map[string]any{"node": node, "name": name, "device": dev})
	upid, err := c.CreateThinPool(ctx, node, name, dev, false)
	_, taskErr := c.Await(ctx, upid, err)
	// A worker that dies after lvcreate leaves the thin pool (Disks/LVMThin.pm
	// removes nothing): one absent before is the one it made, adopted.
	if taskErr != nil && (before != nil || !framework.FailedTask(taskErr)) {
		framework.AddUnable(&resp.Diagnostics, "Create", "LVM thin pool", id, taskErr)
		return
	}
	p, err := findThinPool(ctx, c, node, name)
	if taskErr != nil && (err != nil || p == nil) {
		framework.AddUnable(&resp.Diagnostics, "Create", "LVM thin pool", id, taskErr)
		return
	}
	if err != nil || p == nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "LVM thin pool", id, cmpErr(err, "PVE does not list the pool after creating it"))
		return
	}
	if taskErr != nil {
		framework.WarnAdopted(&resp.Diagnostics, "LVM thin pool", id, taskErr)
	}
	plan.fromAPI(p)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func cmpErr(err error, msg string) error {
	if err != nil {
		return err
	}
	return errors.New(msg)
}

func (r *lvmThinResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m lvmThinModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	node, name := m.Node.ValueString(), m.Name.ValueString()
	c := r.NodeClient(ctx, node, &resp.Diagnostics)
	if c == nil {
		return
	}
	p, err := findThinPool(ctx, c, node, name)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "LVM thin pool", node+"/"+name, err)
		return
	}
	if p == nil {
		tflog.Warn(ctx, "LVM thin pool is gone; removing it from the state", map[string]any{"node": node, "name": name})
		resp.State.RemoveResource(ctx)
		return
	}
	m.fromAPI(p)
	noteDisksInState(r.PD, m.Node, m.Device.ValueString())
	noteNameInState(r.PD, vgNames.kind, m.Node, m.Name)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// Update only records destroy_data (and the device after an import):
// everything else is refused at plan.
func (r *lvmThinResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan lvmThinModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	c := r.NodeClient(ctx, plan.Node.ValueString(), &resp.Diagnostics)
	if c == nil {
		return
	}
	p, err := findThinPool(ctx, c, plan.Node.ValueString(), plan.Name.ValueString())
	if err != nil || p == nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "LVM thin pool", plan.ID.ValueString(), cmpErr(err, "the pool is gone"))
		return
	}
	plan.fromAPI(p)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *lvmThinResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m lvmThinModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	node, name := m.Node.ValueString(), m.Name.ValueString()
	id := node + "/" + name
	if !m.DestroyData.ValueBool() {
		framework.AddUnable(&resp.Diagnostics, "Delete", "LVM thin pool", id,
			errors.New("destroy_data is false. Set destroy_data = true and apply that before destroying the pool; destroying it deletes its volumes and wipes its disk"))
		return
	}
	c := r.NodeClient(ctx, node, &resp.Diagnostics)
	if c == nil {
		return
	}
	if p, err := findThinPool(ctx, c, node, name); err != nil {
		framework.AddUnable(&resp.Diagnostics, "Delete", "LVM thin pool", id, err)
		return
	} else if p == nil {
		return
	}
	tflog.Info(ctx, "destroying LVM thin pool with its volumes and wiping its disk", map[string]any{"node": node, "name": name})
	upid, err := c.DeleteThinPool(ctx, node, name, name, true, false)
	_, err = c.Await(ctx, upid, err)
	freedOnNode(r.PD, vgNames, node)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Delete", "LVM thin pool", id, err)
	}
}

// ImportState takes "<node>/<name>".
func (r *lvmThinResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	node, name, ok := strings.Cut(req.ID, "/")
	if !ok || node == "" || !storageIDRE.MatchString(name) {
		resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf("Import an LVM thin pool as <node>/<name>, such as z2g4a/fast; got %q.", req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("node"), node)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), name)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("destroy_data"), false)...)
}
