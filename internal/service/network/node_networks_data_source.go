package network

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
)

var (
	_ datasource.DataSource              = (*nodeNetworksDataSource)(nil)
	_ datasource.DataSourceWithConfigure = (*nodeNetworksDataSource)(nil)
)

// NewNodeNetworksDataSource is the constructor the provider registers.
func NewNodeNetworksDataSource() datasource.DataSource {
	return &nodeNetworksDataSource{framework.DataSourceBase{TypeName: "pve_node_networks"}}
}

type nodeNetworksDataSource struct{ framework.DataSourceBase }

type nodeNetworksModel struct {
	Node           types.String       `tfsdk:"node"`
	Type           types.String       `tfsdk:"type"`
	PendingChanges types.String       `tfsdk:"pending_changes"`
	Interfaces     []networkItemModel `tfsdk:"interfaces"`
}

type networkItemModel struct {
	Iface           types.String `tfsdk:"iface"`
	Type            types.String `tfsdk:"type"`
	Active          types.Bool   `tfsdk:"active"`
	Autostart       types.Bool   `tfsdk:"autostart"`
	Exists          types.Bool   `tfsdk:"exists"`
	CIDR            types.String `tfsdk:"cidr"`
	Gateway         types.String `tfsdk:"gateway"`
	CIDR6           types.String `tfsdk:"cidr6"`
	Gateway6        types.String `tfsdk:"gateway6"`
	MTU             types.Int64  `tfsdk:"mtu"`
	Comments        types.String `tfsdk:"comments"`
	BridgePorts     types.List   `tfsdk:"bridge_ports"`
	BridgeVLANAware types.Bool   `tfsdk:"bridge_vlan_aware"`
	BridgeVIDs      types.String `tfsdk:"bridge_vids"`
	Slaves          types.List   `tfsdk:"slaves"`
	BondMode        types.String `tfsdk:"bond_mode"`
	VLANID          types.Int64  `tfsdk:"vlan_id"`
	VLANRawDevice   types.String `tfsdk:"vlan_raw_device"`
}

func (d *nodeNetworksDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	computed := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: desc}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "The network interfaces of one node as PVE lists them (the staged view when changes are pending), such as the physical NICs available to bond.",
		Attributes: map[string]schema.Attribute{
			"node":            framework.DataSourceNodeAttribute("Node name.", true),
			"type":            schema.StringAttribute{Optional: true, MarkdownDescription: "Only interfaces of this type (`bridge`, `bond`, `vlan`, `eth`, ...)."},
			"pending_changes": computed("Diff of staged changes not yet applied (`interfaces.new`), empty when none."),
			"interfaces": schema.ListNestedAttribute{
				Computed:            true,
				MarkdownDescription: "Interfaces, in the node's order.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"iface":             computed("Interface name."),
					"type":              computed("Interface type."),
					"active":            schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether it is up."},
					"autostart":         schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether it starts at boot."},
					"exists":            schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether it is a device present on the node (physical NICs)."},
					"cidr":              computed("IPv4 address with prefix length."),
					"gateway":           computed("IPv4 gateway."),
					"cidr6":             computed("IPv6 address with prefix length."),
					"gateway6":          computed("IPv6 gateway."),
					"mtu":               schema.Int64Attribute{Computed: true, MarkdownDescription: "MTU, when set."},
					"comments":          computed("Comment."),
					"bridge_ports":      schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Bridge ports."},
					"bridge_vlan_aware": schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the bridge is VLAN-aware."},
					"bridge_vids":       computed("VLANs of a VLAN-aware bridge."),
					"slaves":            schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Bond slaves."},
					"bond_mode":         computed("Bonding mode."),
					"vlan_id":           schema.Int64Attribute{Computed: true, MarkdownDescription: "VLAN tag."},
					"vlan_raw_device":   computed("VLAN raw device."),
				}},
			},
		},
	}
}

func (d *nodeNetworksDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	if d.Client(&resp.Diagnostics) == nil {
		return
	}
	var cfg nodeNetworksModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	node := cfg.Node.ValueString()
	list, err := listNetwork(ctx, d.PD, node)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "network interfaces of node", node, err)
		return
	}
	cfg.PendingChanges = types.StringValue(list.Changes)
	cfg.Interfaces = []networkItemModel{}
	for i := range list.Interfaces {
		in := &list.Interfaces[i]
		if !cfg.Type.IsNull() && in.Type != cfg.Type.ValueString() {
			continue
		}
		var m nodeNetworkModel
		resp.Diagnostics.Append(m.fromAPI(ctx, node, in)...)
		cfg.Interfaces = append(cfg.Interfaces, networkItemModel{
			Iface: m.Iface, Type: m.Type, Active: m.Active, Autostart: m.Autostart, Exists: types.BoolValue(in.Exists),
			CIDR: m.CIDR, Gateway: m.Gateway, CIDR6: m.CIDR6, Gateway6: m.Gateway6, MTU: m.MTU, Comments: m.Comments,
			BridgePorts: m.BridgePorts, BridgeVLANAware: m.BridgeVLANAware, BridgeVIDs: m.BridgeVIDs,
			Slaves: m.Slaves, BondMode: m.BondMode, VLANID: m.VLANID, VLANRawDevice: m.VLANRawDevice,
		})
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &cfg)...)
}
