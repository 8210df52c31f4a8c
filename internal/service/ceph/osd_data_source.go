package ceph

import (
	"context"
	"fmt"
	"math"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
)

const osdsTypeName = "pve_ceph_osds"

// NewOSDsDataSource is pve_ceph_osds.
func NewOSDsDataSource() datasource.DataSource {
	return &osdsDataSource{DataSourceBase: framework.DataSourceBase{TypeName: osdsTypeName}}
}

type osdsDataSource struct{ framework.DataSourceBase }

type osdsModel struct {
	Node  types.String `tfsdk:"node"`
	Flags []string     `tfsdk:"flags"`
	Hosts []string     `tfsdk:"hosts"`
	OSDs  []osdEntry   `tfsdk:"osds"`
}

type osdEntry struct {
	ID          types.Int64   `tfsdk:"id"`
	Name        types.String  `tfsdk:"name"`
	Host        types.String  `tfsdk:"host"`
	DeviceClass types.String  `tfsdk:"device_class"`
	Status      types.String  `tfsdk:"status"`
	Up          types.Bool    `tfsdk:"up"`
	In          types.Bool    `tfsdk:"in"`
	CrushWeight types.Float64 `tfsdk:"crush_weight"`
	Reweight    types.Float64 `tfsdk:"reweight"`
	PGs         types.Int64   `tfsdk:"pgs"`
	TotalSpace  types.Int64   `tfsdk:"total_space"`
	BytesUsed   types.Int64   `tfsdk:"bytes_used"`
	PercentUsed types.Float64 `tfsdk:"percent_used"`
	OSDType     types.String  `tfsdk:"osd_type"`
	Version     types.String  `tfsdk:"version"`
}

func (d *osdsDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	num := func(desc string) schema.Float64Attribute {
		return schema.Float64Attribute{Computed: true, MarkdownDescription: desc}
	}
	i64 := func(desc string) schema.Int64Attribute {
		return schema.Int64Attribute{Computed: true, MarkdownDescription: desc}
	}
	str := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: desc}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "The Ceph OSD tree (`GET /nodes/{node}/ceph/osd`, GUI: Ceph > OSD): every OSD of the cluster with its CRUSH host, " +
			"device class, state and usage, and the cluster's OSD flags. Which disk an OSD is on is in `pve_node_disks` (`osd_ids`).\n\n" +
			"Credentials: an API token with `Sys.Audit` or `Datastore.Audit` on `/` is enough.",
		Attributes: map[string]schema.Attribute{
			"node": schema.StringAttribute{Optional: true, Computed: true,
				MarkdownDescription: "The node to ask (any node of the Ceph cluster answers for all). Default: the first online node."},
			"flags": schema.ListAttribute{ElementType: types.StringType, Computed: true,
				MarkdownDescription: "The osdmap flags as Ceph lists them, including internal ones such as `sortbitwise` (`noout`, `nobackfill`, ... when set)."},
			"hosts": schema.ListAttribute{ElementType: types.StringType, Computed: true, MarkdownDescription: "The CRUSH hosts, in tree order."},
			"osds": schema.ListNestedAttribute{
				Computed: true, MarkdownDescription: "The OSDs, ordered by id.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"id":           i64("OSD id."),
					"name":         str("`osd.<id>`."),
					"host":         str("CRUSH host (the node)."),
					"device_class": str("CRUSH device class (`ssd`, `hdd`, `nvme`, ...)."),
					"status":       str("`up` or `down`."),
					"up":           schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the daemon runs."},
					"in":           schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the OSD takes data."},
					"crush_weight": num("CRUSH weight (the disk's size in TiB by default)."),
					"reweight":     num("Override weight, 0 to 1 (0 when out)."),
					"pgs":          i64("PGs mapped to the OSD."),
					"total_space":  i64("Capacity in bytes."),
					"bytes_used":   i64("Bytes used."),
					"percent_used": num("Percent used."),
					"osd_type":     str("Object store (`bluestore`)."),
					"version":      str("Ceph version of the daemon, such as `19.2.3`."),
				}},
			},
		},
	}
}

func (d *osdsDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	if d.Client(&resp.Diagnostics) == nil {
		return
	}
	var m osdsModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	node := m.Node.ValueString()
	if m.Node.IsNull() || m.Node.IsUnknown() {
		nodes, err := d.PD.Nodes(ctx)
		if err != nil {
			framework.AddUnable(&resp.Diagnostics, "Read", "Ceph OSDs", "", err)
			return
		}
		for _, n := range nodes {
			if n.Status == "online" {
				node = n.Node
				break
			}
		}
		if node == "" {
			resp.Diagnostics.AddError("Unable to Read Ceph OSDs", "No node is online; set node.")
			return
		}
	}
	c := d.NodeClient(ctx, node, &resp.Diagnostics)
	if c == nil {
		return
	}
	tree, err := c.CephOSDTree(ctx, node)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "Ceph OSDs", "", fmt.Errorf("read the OSD tree on %s: %w", node, err))
		return
	}
	m.Node = types.StringValue(node)
	m.Flags = append([]string{}, tree.Flags...)
	m.Hosts = append([]string{}, tree.Hosts...)
	m.OSDs = make([]osdEntry, 0, len(tree.OSDs))
	round := func(f float64) types.Float64 { return types.Float64Value(math.Round(f*1e4) / 1e4) }
	for _, o := range tree.OSDs {
		m.OSDs = append(m.OSDs, osdEntry{
			ID: types.Int64Value(o.ID), Name: types.StringValue(o.Name), Host: types.StringValue(o.Host),
			DeviceClass: strOrNull(o.DeviceClass), Status: types.StringValue(o.Status), Up: types.BoolValue(o.Up()), In: types.BoolValue(o.In),
			CrushWeight: round(o.CrushWeight), Reweight: round(o.Reweight), PGs: types.Int64Value(o.PGs),
			TotalSpace: types.Int64Value(o.TotalSpace), BytesUsed: types.Int64Value(o.BytesUsed), PercentUsed: round(o.PercentUsed),
			OSDType: strOrNull(o.OSDType), Version: strOrNull(o.Version),
		})
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
