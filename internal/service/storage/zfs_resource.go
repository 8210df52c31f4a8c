package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

const zfsTypeName = "pve_node_zfs"

var (
	_ resource.Resource                   = (*zfsResource)(nil)
	_ resource.ResourceWithConfigure      = (*zfsResource)(nil)
	_ resource.ResourceWithImportState    = (*zfsResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*zfsResource)(nil)
	_ resource.ResourceWithValidateConfig = (*zfsResource)(nil)
)

// NewZFSResource is the constructor the provider registers.
func NewZFSResource() resource.Resource {
	return &zfsResource{ResourceBase: framework.ResourceBase{TypeName: zfsTypeName}}
}

type zfsResource struct{ framework.ResourceBase }

type zfsModel struct {
	ID          types.String `tfsdk:"id"`
	Node        types.String `tfsdk:"node"`
	Name        types.String `tfsdk:"name"`
	Devices     types.List   `tfsdk:"devices"`
	RaidLevel   types.String `tfsdk:"raidlevel"`
	Ashift      types.Int64  `tfsdk:"ashift"`
	Compression types.String `tfsdk:"compression"`
	DestroyData types.Bool   `tfsdk:"destroy_data"`
	Size        types.Int64  `tfsdk:"size"`
	Free        types.Int64  `tfsdk:"free"`
	Health      types.String `tfsdk:"health"`
}

var zfsMinDisks = map[string]int{"single": 1, "mirror": 2, "raid10": 4, "raidz": 3, "raidz2": 4, "raidz3": 5, "draid": 3, "draid2": 4, "draid3": 5}

func (r *zfsResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A ZFS pool on free disks of a node (GUI: node → Disks → ZFS → Create: ZFS). Add the storage for it " +
			"with `pve_storage` (type `zfspool`, `pool` = `name`, `nodes` = the node).\n\n" +
			"PVE refuses disks in use (partitions, LVM, ZFS, a Ceph OSD: `device '/dev/sdb' is already in use`). PVE's API " +
			"cannot add disks to a pool, change its layout or ashift, or set properties, so changes to them are refused at plan " +
			"rather than replacing the pool (which would delete its data). Destroying it needs `destroy_data = true` first; it " +
			"then destroys the pool with its data and wipes its disks (`cleanup-disks`).\n\n" +
			"Credentials: an API token with `Sys.Modify` on `/` (reading needs `Sys.Audit`).",
		Attributes: map[string]schema.Attribute{
			"id":   framework.IDAttribute("`<node>/<name>`."),
			"node": framework.NodeAttribute("Node whose disks hold the pool.", framework.NodeInPlace),
			"name": schema.StringAttribute{
				Required: true, MarkdownDescription: "Pool name (a storage id: letters, digits, `-`, `_`, `.`).",
				Validators: []validator.String{stringvalidator.RegexMatches(storageIDRE, "must start with a letter, end with a letter or digit, and hold only letters, digits, '-', '_' and '.'")},
			},
			"devices": schema.ListAttribute{
				ElementType: types.StringType, Required: true,
				MarkdownDescription: "The free disks, such as `[\"/dev/sdb\", \"/dev/sdc\"]`; for `raid10` consecutive pairs become mirrors. " +
					"Read back from `zpool status` (by-id names mapped to the node's disks), so a replaced disk shows as drift.",
				Validators: []validator.List{listvalidator.SizeAtLeast(1), listvalidator.ValueStringsAre(deviceValidator()), listvalidator.UniqueValues()},
			},
			"raidlevel": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "Layout: `single` (one disk), `mirror` (2+), `raid10` (an even number, 4+), `raidz` (3+), " +
					"`raidz2` (4+), `raidz3` (5+), `draid`, `draid2`, `draid3`.",
				Validators: []validator.String{stringvalidator.OneOf("single", "mirror", "raid10", "raidz", "raidz2", "raidz3", "draid", "draid2", "draid3")},
			},
			"ashift": schema.Int64Attribute{
				Optional: true, Computed: true, Default: int64default.StaticInt64(12),
				MarkdownDescription: "Sector size exponent, 9 to 16 (default 12: 4 KiB sectors, right for SSDs). Fixed at creation; " +
					"PVE's API does not report it, so the provider keeps the configured value.",
				Validators: []validator.Int64{int64validator.Between(9, 16)},
			},
			"compression": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString("on"),
				MarkdownDescription: "Compression set at creation: `on` (default), `off`, `lz4`, `zstd`, `gzip`, `lzjb` or `zle`. " +
					"PVE's API neither reports nor changes it afterwards, so a change is refused at plan (use `zfs set compression=...` " +
					"on the node, then change the configuration and import the pool again).",
				Validators: []validator.String{stringvalidator.OneOf("on", "off", "gzip", "lz4", "lzjb", "zle", "zstd")},
			},
			"destroy_data": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(false), MarkdownDescription: destroyDataDesc,
			},
			"size":   schema.Int64Attribute{Computed: true, MarkdownDescription: "Raw size of the pool in bytes (`zpool list`)."},
			"free":   schema.Int64Attribute{Computed: true, MarkdownDescription: "Raw free bytes of the pool."},
			"health": schema.StringAttribute{Computed: true, MarkdownDescription: "Pool health, such as `ONLINE` or `DEGRADED`."},
		},
	}
}

func (r *zfsResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m zfsModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || m.RaidLevel.IsUnknown() || m.RaidLevel.IsNull() || m.Devices.IsUnknown() {
		return
	}
	lvl, n := m.RaidLevel.ValueString(), len(m.Devices.Elements())
	switch {
	case lvl == "single" && n > 1:
		resp.Diagnostics.AddAttributeError(path.Root("devices"), "Too many disks for single",
			"raidlevel = \"single\" takes exactly one disk (PVE: \"please give only one disk for single disk mode\"); use mirror or raidz for more.")
	case lvl == "raid10" && n%2 != 0:
		resp.Diagnostics.AddAttributeError(path.Root("devices"), "raid10 needs pairs", "raid10 needs an even number of disks: consecutive pairs become mirrors.")
	case n < zfsMinDisks[lvl]:
		resp.Diagnostics.AddAttributeError(path.Root("devices"), "Too few disks",
			fmt.Sprintf("%s needs at least %d disks; %d given.", lvl, zfsMinDisks[lvl], n))
	}
}

func (r *zfsResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	r.checkRefs(ctx, req, resp)
	if req.State.Raw.IsNull() {
		return
	}
	var state zfsModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id := state.ID.ValueString()
	if req.Plan.Raw.IsNull() {
		refuseDestroy("ZFS pool", id, state.DestroyData, &resp.Diagnostics)
		return
	}
	var plan zfsModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	how := "Keep the old value; to change it, create a second pool, move the disks of a storage on it, then destroy this one."
	refuseChange(&resp.Diagnostics, "node", "ZFS pool", id, plan.Node, state.Node, how)
	refuseChange(&resp.Diagnostics, "name", "ZFS pool", id, plan.Name, state.Name, how)
	refuseChange(&resp.Diagnostics, "raidlevel", "ZFS pool", id, plan.RaidLevel, state.RaidLevel, how)
	refuseChange(&resp.Diagnostics, "compression", "ZFS pool", id, plan.Compression, state.Compression,
		"Set it on the node with `zfs set compression=<value> "+state.Name.ValueString()+"`, then remove the pool from the state "+
			"(a removed block with lifecycle { destroy = false }) and import it again with the new value.")
	if !plan.Ashift.IsUnknown() && !state.Ashift.IsNull() && !plan.Ashift.Equal(state.Ashift) {
		framework.RefuseChange(&resp.Diagnostics, "ashift", "ZFS pool "+id,
			fmt.Sprintf("ZFS fixes ashift when a pool is created (%s has %d); replacing the pool would delete its data. Keep ashift = %d.",
				id, state.Ashift.ValueInt64(), state.Ashift.ValueInt64()))
	}
	if !plan.Devices.IsUnknown() && !state.Devices.IsNull() && !plan.Devices.Equal(state.Devices) {
		framework.RefuseChange(&resp.Diagnostics, "devices", "ZFS pool "+id,
			fmt.Sprintf("PVE's API cannot add, remove or replace disks of pool %s, and replacing the pool would delete its data. "+
				"Use `zpool attach`, `zpool replace` or `zpool add` on the node, then update devices to what `zpool status` shows "+
				"(now %s).", id, strings.Join(listStrings(ctx, state.Devices), ", ")))
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("size"), state.Size)...)
}

func listStrings(ctx context.Context, l types.List) []string {
	var out []string
	if !l.IsNull() && !l.IsUnknown() {
		_ = l.ElementsAs(ctx, &out, false)
	}
	return out
}

// readZFS reads the pool; nil when it does not exist. Devices come from
// zpool status, its by-id partition names mapped to the node's disks.
func readZFS(ctx context.Context, c *pve.Client, node, name string) (*pve.ZFSPool, []string, string, error) {
	pools, err := c.ZFSPools(ctx, node)
	if err != nil {
		return nil, nil, "", err
	}
	var pool *pve.ZFSPool
	for i := range pools {
		if pools[i].Name == name {
			pool = &pools[i]
		}
	}
	if pool == nil {
		return nil, nil, "", nil
	}
	d, err := c.ZFSPool(ctx, node, name)
	if err != nil {
		return nil, nil, "", err
	}
	disks, err := c.Disks(ctx, node, false)
	if err != nil {
		return nil, nil, "", err
	}
	var devs []string
	for _, leaf := range d.Devices {
		devs = append(devs, diskOfLeaf(leaf, disks))
	}
	return pool, devs, d.RaidLevel, nil
}

// diskOfLeaf maps a zpool leaf (/dev/disk/by-id/<id>-part1, /dev/sdb1)
// to its disk's device path.
func diskOfLeaf(leaf string, disks []pve.Disk) string {
	for _, dk := range disks {
		if dk.ByIDLink != "" && (leaf == dk.ByIDLink || strings.HasPrefix(leaf, dk.ByIDLink+"-part")) {
			return dk.DevPath
		}
		if leaf == dk.DevPath || (strings.HasPrefix(leaf, dk.DevPath) && strings.Trim(strings.TrimPrefix(leaf, dk.DevPath), "p0123456789") == "") {
			return dk.DevPath
		}
	}
	return leaf
}

func (m *zfsModel) fromAPI(p *pve.ZFSPool, devs []string, level string) {
	m.ID = types.StringValue(m.Node.ValueString() + "/" + m.Name.ValueString())
	m.Size, m.Free, m.Health = types.Int64Value(p.Size), types.Int64Value(p.Free), types.StringValue(p.Health)
	vals := make([]attr.Value, 0, len(devs))
	for _, d := range devs {
		vals = append(vals, types.StringValue(d))
	}
	m.Devices = types.ListValueMust(types.StringType, vals)
	m.RaidLevel = types.StringValue(level)
	if m.DestroyData.IsNull() || m.DestroyData.IsUnknown() {
		m.DestroyData = types.BoolValue(false)
	}
	// ashift and compression are not in PVE's API: after an import they
	// stay null until the first apply records the configuration.
}

func (r *zfsResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan zfsModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	node, name := plan.Node.ValueString(), plan.Name.ValueString()
	id := node + "/" + name
	c := r.NodeClient(ctx, node, &resp.Diagnostics)
	if c == nil {
		return
	}
	devs := listStrings(ctx, plan.Devices)
	tflog.Info(ctx, "creating ZFS pool", map[string]any{"node": node, "name": name, "devices": devs, "raidlevel": plan.RaidLevel.ValueString()})
	before, _, _, err := readZFS(ctx, c, node, name)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Create", "ZFS pool", id, err)
		return
	}
	upid, err := c.CreateZFSPool(ctx, node, pve.ZFSPoolRequest{
		Name: name, Devices: devs, RaidLevel: plan.RaidLevel.ValueString(), Ashift: plan.Ashift.ValueInt64(), Compression: plan.Compression.ValueString(),
	})
	_, taskErr := c.Await(ctx, upid, err)
	// A worker that dies after zpool create leaves the pool (Disks/ZFS.pm
	// removes nothing): one absent before is the one it made, adopted.
	if taskErr != nil && (before != nil || !framework.FailedTask(taskErr)) {
		framework.AddUnable(&resp.Diagnostics, "Create", "ZFS pool", id, taskErr)
		return
	}
	if taskErr != nil {
		if p, _, _, err := readZFS(ctx, c, node, name); err != nil || p == nil {
			framework.AddUnable(&resp.Diagnostics, "Create", "ZFS pool", id, taskErr)
			return
		}
		framework.WarnAdopted(&resp.Diagnostics, "ZFS pool", id, taskErr)
	}
	r.read(ctx, c, &plan, &resp.State, "Create", &resp.Diagnostics)
}

func (r *zfsResource) read(ctx context.Context, c *pve.Client, m *zfsModel, st stateSetter, action string, diags *diagnostics) {
	p, devs, level, err := readZFS(ctx, c, m.Node.ValueString(), m.Name.ValueString())
	if err != nil || p == nil {
		framework.AddUnable(diags, action, "ZFS pool", m.Node.ValueString()+"/"+m.Name.ValueString(), cmpErr(err, "PVE does not list the pool"))
		return
	}
	m.fromAPI(p, devs, level)
	diags.Append(st.Set(ctx, m)...)
}

func (r *zfsResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m zfsModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	node, name := m.Node.ValueString(), m.Name.ValueString()
	c := r.NodeClient(ctx, node, &resp.Diagnostics)
	if c == nil {
		return
	}
	p, devs, level, err := readZFS(ctx, c, node, name)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "ZFS pool", node+"/"+name, err)
		return
	}
	if p == nil {
		tflog.Warn(ctx, "ZFS pool is gone; removing it from the state", map[string]any{"node": node, "name": name})
		resp.State.RemoveResource(ctx)
		return
	}
	m.fromAPI(p, devs, level)
	noteDisksInState(r.PD, m.Node, listStrings(ctx, m.Devices)...)
	noteNameInState(r.PD, zfsNames.kind, m.Node, m.Name)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// Update records destroy_data (and ashift/compression after an import);
// everything else is refused at plan.
func (r *zfsResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan zfsModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	c := r.NodeClient(ctx, plan.Node.ValueString(), &resp.Diagnostics)
	if c == nil {
		return
	}
	r.read(ctx, c, &plan, &resp.State, "Update", &resp.Diagnostics)
}

func (r *zfsResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m zfsModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	node, name := m.Node.ValueString(), m.Name.ValueString()
	id := node + "/" + name
	if !m.DestroyData.ValueBool() {
		framework.AddUnable(&resp.Diagnostics, "Delete", "ZFS pool", id,
			errors.New("destroy_data is false. Set destroy_data = true and apply that before destroying the pool; destroying it deletes its data and wipes its disks"))
		return
	}
	c := r.NodeClient(ctx, node, &resp.Diagnostics)
	if c == nil {
		return
	}
	if p, _, _, err := readZFS(ctx, c, node, name); err != nil {
		framework.AddUnable(&resp.Diagnostics, "Delete", "ZFS pool", id, err)
		return
	} else if p == nil {
		return
	}
	tflog.Info(ctx, "destroying ZFS pool and wiping its disks", map[string]any{"node": node, "name": name})
	upid, err := c.DeleteZFSPool(ctx, node, name, true, false)
	_, err = c.Await(ctx, upid, err)
	freedOnNode(r.PD, zfsNames, node)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Delete", "ZFS pool", id, err)
	}
}

// ImportState takes "<node>/<name>".
func (r *zfsResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	node, name, ok := strings.Cut(req.ID, "/")
	if !ok || node == "" || !storageIDRE.MatchString(name) {
		resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf("Import a ZFS pool as <node>/<name>, such as z2g4a/tank; got %q.", req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("node"), node)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), name)...)
}
