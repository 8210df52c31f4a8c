package qemu

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

var (
	_ datasource.DataSource              = (*vmDataSource)(nil)
	_ datasource.DataSourceWithConfigure = (*vmDataSource)(nil)
	_ datasource.DataSource              = (*vmsDataSource)(nil)
	_ datasource.DataSourceWithConfigure = (*vmsDataSource)(nil)
)

// NewVMDataSource is the constructor the provider registers.
func NewVMDataSource() datasource.DataSource {
	return &vmDataSource{DataSourceBase: framework.DataSourceBase{TypeName: "pve_vm"}}
}

// NewVMsDataSource is the constructor the provider registers.
func NewVMsDataSource() datasource.DataSource {
	return &vmsDataSource{DataSourceBase: framework.DataSourceBase{TypeName: "pve_vms"}}
}

type vmDataSource struct{ framework.DataSourceBase }

type vmDataModel struct {
	VMID           types.Int64  `tfsdk:"vmid"`
	Node           types.String `tfsdk:"node"`
	Name           types.String `tfsdk:"name"`
	Description    types.String `tfsdk:"description"`
	Tags           types.Set    `tfsdk:"tags"`
	Cores          types.Int64  `tfsdk:"cores"`
	Sockets        types.Int64  `tfsdk:"sockets"`
	Memory         types.Int64  `tfsdk:"memory"`
	Balloon        types.Int64  `tfsdk:"balloon"`
	CPU            types.String `tfsdk:"cpu"`
	NUMA           types.Bool   `tfsdk:"numa"`
	BIOS           types.String `tfsdk:"bios"`
	Machine        types.String `tfsdk:"machine"`
	OSType         types.String `tfsdk:"ostype"`
	Agent          types.Bool   `tfsdk:"agent"`
	SCSIHW         types.String `tfsdk:"scsihw"`
	BootOrder      types.List   `tfsdk:"boot_order"`
	Network        types.Map    `tfsdk:"network"`
	Serial         types.Map    `tfsdk:"serial"`
	VGA            types.String `tfsdk:"vga"`
	OnBoot         types.Bool   `tfsdk:"onboot"`
	Protection     types.Bool   `tfsdk:"protection"`
	Status         types.String `tfsdk:"status"`
	PendingChanges types.List   `tfsdk:"pending_changes"`
	Disks          types.Map    `tfsdk:"disks"`
	Config         types.Map    `tfsdk:"config"`
}

func computedStr(desc string) schema.StringAttribute {
	return schema.StringAttribute{Computed: true, MarkdownDescription: desc}
}

func computedInt(desc string) schema.Int64Attribute {
	return schema.Int64Attribute{Computed: true, MarkdownDescription: desc}
}

func computedBool(desc string) schema.BoolAttribute {
	return schema.BoolAttribute{Computed: true, MarkdownDescription: desc}
}

func (d *vmDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	netAttrs := map[string]schema.Attribute{
		"model": computedStr("NIC model."), "bridge": computedStr("Bridge."), "mac_address": computedStr("MAC address."),
		"tag": computedInt("VLAN tag."), "trunks": computedStr("Trunked VLANs."), "firewall": computedBool("PVE firewall on the device."),
		"link_down": computedBool("Link disconnected."), "mtu": computedInt("MTU."), "queues": computedInt("Packet queues."),
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "One VM's settings as PVE reports them (pending changes included, as after the next restart), " +
			"found by its id on whichever node it lives.\n\n" + credsNote,
		Attributes: map[string]schema.Attribute{
			"vmid": schema.Int64Attribute{
				Required: true, MarkdownDescription: "The VM id.",
				Validators: []validator.Int64{int64validator.Between(100, 999999999)},
			},
			"node": computedStr("Node the VM lives on."), "name": computedStr("VM name."),
			"description": computedStr("Notes."),
			"tags":        schema.SetAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Tags."},
			"cores":       computedInt("Cores per socket."), "sockets": computedInt("Sockets."),
			"memory": computedInt("Memory in MiB."), "balloon": computedInt("Balloon minimum in MiB (null: PVE's default)."),
			"cpu": computedStr("CPU type and flags."), "numa": computedBool("NUMA."), "bios": computedStr("Firmware."),
			"machine": computedStr("Machine type."), "ostype": computedStr("Guest OS type."),
			"agent": computedBool("Guest agent enabled."), "scsihw": computedStr("SCSI controller."),
			"boot_order": schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Boot devices in order."},
			"network": schema.MapNestedAttribute{Computed: true, MarkdownDescription: "Network devices by slot.",
				NestedObject: schema.NestedAttributeObject{Attributes: netAttrs}},
			"serial":     schema.MapAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Serial ports by slot."},
			"vga":        computedStr("Display."),
			"onboot":     computedBool("Started when the node boots."),
			"protection": computedBool("PVE's protection flag."),
			"status":     computedStr("`running` or `stopped`."),
			"pending_changes": schema.ListAttribute{Computed: true, ElementType: types.StringType,
				MarkdownDescription: "Options waiting for a restart."},
			"disks": schema.MapAttribute{Computed: true, ElementType: types.StringType,
				MarkdownDescription: "Disks and detached volumes by slot (`scsi0`, `unused0`, ...) as PVE writes them, such as " +
					"`ceph:vm-100-disk-1,cache=writeback,iothread=1,size=32G,ssd=1`."},
			"config": schema.MapAttribute{Computed: true, ElementType: types.StringType,
				MarkdownDescription: "The whole config as PVE returns it (key to value text), including options this provider does not model."},
		},
	}
}

func (d *vmDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var cfgModel vmDataModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfgModel)...)
	if resp.Diagnostics.HasError() {
		return
	}
	client := d.Client(&resp.Diagnostics)
	if client == nil {
		return
	}
	vmid := cfgModel.VMID.ValueInt64()
	node, err := client.FindVM(ctx, vmid)
	if err != nil {
		if errors.Is(err, pve.ErrNotFound) {
			err = fmt.Errorf("no node of the cluster has VM %d", vmid)
		}
		framework.AddUnable(&resp.Diagnostics, "Read", "VM", vmLabel(vmid), err)
		return
	}
	c := d.NodeClient(ctx, node, &resp.Diagnostics)
	if c == nil {
		return
	}
	m, err := readVM(ctx, d.PD, c, node, vmid, nil, false, false)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "VM", vmLabel(vmid), err)
		return
	}
	items, err := sharedPending(ctx, d.PD, c, node, vmid, false)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "VM", vmLabel(vmid), err)
		return
	}
	cfg := pve.EffectiveConfig(items)
	disks := map[string]attr.Value{}
	all := map[string]attr.Value{}
	for k, v := range cfg.Values {
		all[k] = types.StringValue(v)
		if pve.IsDriveKey(k) || strings.HasPrefix(k, "unused") {
			disks[k] = types.StringValue(v)
		}
	}
	out := vmDataModel{
		VMID: m.VMID, Node: m.Node, Name: m.Name, Description: m.Description, Tags: m.Tags, Cores: m.Cores, Sockets: m.Sockets,
		Memory: m.Memory, Balloon: m.Balloon, CPU: m.CPU, NUMA: m.NUMA, BIOS: m.BIOS, Machine: m.Machine, OSType: m.OSType,
		Agent: m.Agent, SCSIHW: m.SCSIHW, BootOrder: m.BootOrder, Network: m.Network, Serial: m.Serial, VGA: m.VGA,
		OnBoot: m.OnBoot, Protection: m.Protection, Status: m.Status, PendingChanges: m.PendingChanges,
		Disks: types.MapValueMust(types.StringType, disks), Config: types.MapValueMust(types.StringType, all),
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &out)...)
}

type vmsDataSource struct{ framework.DataSourceBase }

type vmRow struct {
	VMID                     int64
	Node, Name, Status, Tags string
	Template                 bool
}

type vmsDataModel struct {
	Node types.String `tfsdk:"node"`
	Tags types.Set    `tfsdk:"tags"`
	VMs  types.List   `tfsdk:"vms"`
}

var vmsEntryType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"vmid": types.Int64Type, "node": types.StringType, "name": types.StringType, "status": types.StringType,
	"tags": types.SetType{ElemType: types.StringType}, "template": types.BoolType,
}}

func (d *vmsDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "The cluster's VMs (from `/cluster/resources`), optionally only those on one node or with given tags.\n\n" +
			"Credentials: an API token; PVE lists only the VMs it may audit (`VM.Audit`).",
		Attributes: map[string]schema.Attribute{
			"node": framework.DataSourceNodeAttribute("Only VMs on this node.", false),
			"tags": schema.SetAttribute{Optional: true, ElementType: types.StringType,
				MarkdownDescription: "Only VMs that have all of these tags."},
			"vms": schema.ListNestedAttribute{
				Computed: true, MarkdownDescription: "The VMs, sorted by id.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"vmid": computedInt("VM id."), "node": computedStr("Node."), "name": computedStr("Name."),
					"status":   computedStr("`running` or `stopped`."),
					"tags":     schema.SetAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Tags."},
					"template": computedBool("Whether the VM is a template."),
				}},
			},
		},
	}
}

func (d *vmsDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m vmsDataModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	c := d.Client(&resp.Diagnostics)
	if c == nil {
		return
	}
	var wantTags []string
	if !m.Tags.IsNull() && !m.Tags.IsUnknown() {
		resp.Diagnostics.Append(m.Tags.ElementsAs(ctx, &wantTags, false)...)
	}
	var rows []vmRow
	var wire []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Node     string `json:"node"`
		Name     string `json:"name"`
		Status   string `json:"status"`
		Tags     string `json:"tags"`
		VMID     int64  `json:"vmid"`
		Template int64  `json:"template"`
	}
	if err := c.Get(ctx, "/cluster/resources", pve.Params{"type": "vm"}, &wire); err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "VMs", "", err)
		return
	}
	for _, w := range wire {
		if w.Type != "qemu" || (!m.Node.IsNull() && w.Node != m.Node.ValueString()) {
			continue
		}
		have := map[string]bool{}
		for _, t := range strings.FieldsFunc(w.Tags, func(r rune) bool { return r == ';' || r == ',' || r == ' ' }) {
			have[t] = true
		}
		match := true
		for _, t := range wantTags {
			match = match && have[t]
		}
		if !match {
			continue
		}
		rows = append(rows, vmRow{VMID: w.VMID, Node: w.Node, Name: w.Name, Status: w.Status, Tags: w.Tags, Template: w.Template == 1})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].VMID < rows[j].VMID })
	vals := make([]attr.Value, 0, len(rows))
	for _, r := range rows {
		var tags []attr.Value
		for _, t := range strings.FieldsFunc(r.Tags, func(c rune) bool { return c == ';' || c == ',' || c == ' ' }) {
			tags = append(tags, types.StringValue(t))
		}
		vals = append(vals, types.ObjectValueMust(vmsEntryType.AttrTypes, map[string]attr.Value{
			"vmid": types.Int64Value(r.VMID), "node": types.StringValue(r.Node), "name": types.StringValue(r.Name),
			"status": types.StringValue(r.Status), "tags": types.SetValueMust(types.StringType, tags), "template": types.BoolValue(r.Template),
		}))
	}
	m.VMs = types.ListValueMust(vmsEntryType, vals)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
