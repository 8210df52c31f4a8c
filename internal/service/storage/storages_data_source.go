package storage

import (
	"context"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

const storagesTypeName = "pve_storages"

// NewStoragesDataSource is pve_storages.
func NewStoragesDataSource() datasource.DataSource {
	return &storagesDataSource{DataSourceBase: framework.DataSourceBase{TypeName: storagesTypeName}}
}

type storagesDataSource struct{ framework.DataSourceBase }

type storagesModel struct {
	Node     types.String   `tfsdk:"node"`
	Type     types.String   `tfsdk:"type"`
	Content  types.String   `tfsdk:"content"`
	Storages []storageEntry `tfsdk:"storages"`
}

type storageEntry struct {
	Storage      types.String      `tfsdk:"storage"`
	Type         types.String      `tfsdk:"type"`
	Content      []string          `tfsdk:"content"`
	Nodes        []string          `tfsdk:"nodes"`
	Shared       types.Bool        `tfsdk:"shared"`
	Disable      types.Bool        `tfsdk:"disable"`
	Options      map[string]string `tfsdk:"options"`
	Enabled      types.Bool        `tfsdk:"enabled"`
	Active       types.Bool        `tfsdk:"active"`
	Total        types.Int64       `tfsdk:"total"`
	Used         types.Int64       `tfsdk:"used"`
	Avail        types.Int64       `tfsdk:"avail"`
	UsedFraction types.Float64     `tfsdk:"used_fraction"`
}

func (d *storagesDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	comp := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: desc}
	}
	status := " Only with `node`; null otherwise."
	resp.Schema = schema.Schema{
		MarkdownDescription: "The storages of `/etc/pve/storage.cfg` (`GET /storage`), and with `node` how that node sees them " +
			"(`GET /nodes/{node}/storage`: enabled, active, sizes). Use it to pick a storage with room for a disk, or to check " +
			"that a storage is active on every node before placing guests on it.\n\n" +
			"Credentials: an API token with `Datastore.Audit` on `/storage` (PVE lists only the storages the token may see).",
		Attributes: map[string]schema.Attribute{
			"node": framework.DataSourceNodeAttribute("Node whose view (status and sizes) to report.", false),
			"type": schema.StringAttribute{Optional: true, MarkdownDescription: "Only storages of this type, such as `rbd`.",
				Validators: []validator.String{stringvalidator.LengthAtLeast(1)}},
			"content": schema.StringAttribute{Optional: true,
				MarkdownDescription: "Only storages holding this content, such as `images`; with `node`, PVE also leaves out storages not enabled on it.",
				Validators:          []validator.String{stringvalidator.OneOf("images", "rootdir", "vztmpl", "iso", "backup", "snippets", "import")}},
			"storages": schema.ListNestedAttribute{
				Computed: true, MarkdownDescription: "The storages, sorted by id.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"storage": comp("Storage id."),
					"type":    comp("Storage type."),
					"content": schema.ListAttribute{ElementType: types.StringType, Computed: true, MarkdownDescription: "Content types, sorted."},
					"nodes":   schema.ListAttribute{ElementType: types.StringType, Computed: true, MarkdownDescription: "Nodes it is restricted to; empty for all."},
					"shared":  schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether all nodes see the same content."},
					"disable": schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the storage is disabled."},
					"options": schema.MapAttribute{ElementType: types.StringType, Computed: true,
						MarkdownDescription: "Every other storage.cfg option by its PVE name (path, pool, vgname, ...), booleans as 0/1."},
					"enabled":       schema.BoolAttribute{Computed: true, MarkdownDescription: "Enabled on the node (not disabled, and the node is in `nodes`)." + status},
					"active":        schema.BoolAttribute{Computed: true, MarkdownDescription: "The node could activate it." + status},
					"total":         schema.Int64Attribute{Computed: true, MarkdownDescription: "Size in bytes as the node sees it." + status},
					"used":          schema.Int64Attribute{Computed: true, MarkdownDescription: "Bytes in use." + status},
					"avail":         schema.Int64Attribute{Computed: true, MarkdownDescription: "Bytes available." + status},
					"used_fraction": schema.Float64Attribute{Computed: true, MarkdownDescription: "used ÷ total, 0 to 1." + status},
				}},
			},
		},
	}
}

func (d *storagesDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m storagesModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	client := d.Client(&resp.Diagnostics)
	if client == nil {
		return
	}
	cfgs, err := client.StorageConfigs(ctx, m.Type.ValueString())
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "storages", "", err)
		return
	}
	var status map[string]pve.StorageStatus
	if node := m.Node.ValueString(); node != "" {
		c := d.NodeClient(ctx, node, &resp.Diagnostics)
		if c == nil {
			return
		}
		list, err := c.NodeStorage(ctx, node, pve.NodeStorageQuery{Content: m.Content.ValueString()})
		if err != nil {
			framework.AddUnable(&resp.Diagnostics, "Read", "storages of node", node, err)
			return
		}
		status = map[string]pve.StorageStatus{}
		for _, s := range list {
			status[s.Storage] = s
		}
	}
	m.Storages = []storageEntry{}
	for _, sc := range cfgs {
		if ct := m.Content.ValueString(); ct != "" && !containsStr(sc.Content, ct) {
			continue
		}
		e := storageEntry{
			Storage: types.StringValue(sc.Storage), Type: types.StringValue(sc.Type), Content: nonNil(sc.Content), Nodes: nonNil(sc.Nodes),
			Shared: types.BoolValue(sc.Shared), Disable: types.BoolValue(sc.Disable), Options: map[string]string{},
			Enabled: types.BoolNull(), Active: types.BoolNull(), Total: types.Int64Null(), Used: types.Int64Null(), Avail: types.Int64Null(),
			UsedFraction: types.Float64Null(),
		}
		for k, v := range sc.Options {
			if k != "shared" {
				e.Options[k] = v
			}
		}
		if status != nil {
			st, ok := status[sc.Storage]
			if !ok {
				continue // PVE left it out: the content filter and not enabled here
			}
			e.Enabled, e.Active = types.BoolValue(st.Enabled), types.BoolValue(st.Active)
			e.Total, e.Used, e.Avail = types.Int64Value(st.Total), types.Int64Value(st.Used), types.Int64Value(st.Avail)
			e.UsedFraction = types.Float64Value(st.UsedFraction)
		}
		m.Storages = append(m.Storages, e)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func containsStr(xs []string, x string) bool {
	for _, y := range xs {
		if strings.EqualFold(y, x) {
			return true
		}
	}
	return false
}

func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}
