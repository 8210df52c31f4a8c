package ceph

import (
	"context"
	"encoding/json"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

const statusTypeName = "pve_ceph_status"

var _ datasource.DataSourceWithConfigure = (*statusDataSource)(nil)

// NewStatusDataSource is the constructor the provider registers.
func NewStatusDataSource() datasource.DataSource {
	return &statusDataSource{DataSourceBase: framework.DataSourceBase{TypeName: statusTypeName}}
}

type statusDataSource struct{ framework.DataSourceBase }

type statusModel struct {
	Node     types.String  `tfsdk:"node"`
	FSID     types.String  `tfsdk:"fsid"`
	Health   types.String  `tfsdk:"health"`
	Checks   []statusCheck `tfsdk:"checks"`
	Monitors types.Object  `tfsdk:"monitors"`
	Managers types.Object  `tfsdk:"managers"`
	OSDs     types.Object  `tfsdk:"osds"`
	PGs      types.Object  `tfsdk:"pgs"`
	Flags    types.List    `tfsdk:"flags"`
}

type statusCheck struct {
	Name     types.String `tfsdk:"name"`
	Severity types.String `tfsdk:"severity"`
	Summary  types.String `tfsdk:"summary"`
	Count    types.Int64  `tfsdk:"count"`
}

var (
	statusMonitorTypes = map[string]attr.Type{"total": types.Int64Type, "in_quorum": types.Int64Type,
		"quorum_names": types.ListType{ElemType: types.StringType}}
	statusManagerTypes = map[string]attr.Type{"available": types.BoolType, "active": types.StringType, "standbys": types.Int64Type}
	statusOSDTypes     = map[string]attr.Type{"total": types.Int64Type, "up": types.Int64Type, "in": types.Int64Type}
	statusPGTypes      = map[string]attr.Type{"total": types.Int64Type, "active_clean": types.Int64Type,
		"by_state": types.MapType{ElemType: types.Int64Type}, "degraded_objects": types.Int64Type, "misplaced_objects": types.Int64Type}
)

func (d *statusDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	i64 := func(desc string) schema.Int64Attribute {
		return schema.Int64Attribute{Computed: true, MarkdownDescription: desc}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "The Ceph cluster's status as `ceph status` reports it (`GET /cluster/ceph/status`, or " +
			"`/nodes/{node}/ceph/status` with `node`): health and its checks, monitors and quorum, managers, OSDs, placement " +
			"groups and the cluster-wide OSD flags. Use it in checks and preconditions, for example to require `HEALTH_OK` " +
			"before changing anything, or all placement groups `active+clean`.\n\n" +
			"It fails when Ceph is not initialised or the monitors have no quorum (PVE then answers `got timeout`).\n\n" +
			"Credentials: `Sys.Audit` or `Datastore.Audit` on `/` (an API token is enough).",
		Attributes: map[string]schema.Attribute{
			"node": framework.DataSourceNodeAttribute("Ask through this node instead of the provider's endpoint.", false),
			"fsid": schema.StringAttribute{Computed: true, MarkdownDescription: "The Ceph cluster's fsid."},
			"health": schema.StringAttribute{Computed: true,
				MarkdownDescription: "`HEALTH_OK`, `HEALTH_WARN` or `HEALTH_ERR`."},
			"checks": schema.ListNestedAttribute{
				Computed:            true,
				MarkdownDescription: "The health checks Ceph raises, sorted by name (empty with `HEALTH_OK`).",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name": schema.StringAttribute{Computed: true,
						MarkdownDescription: "Check code, such as `OSD_DOWN`, `PG_DEGRADED`, `PG_AVAILABILITY`, `MON_DOWN`, `OSDMAP_FLAGS`."},
					"severity": schema.StringAttribute{Computed: true, MarkdownDescription: "`HEALTH_WARN` or `HEALTH_ERR`."},
					"summary":  schema.StringAttribute{Computed: true, MarkdownDescription: "Ceph's one-line summary."},
					"count":    schema.Int64Attribute{Computed: true, MarkdownDescription: "How many things the check counts (OSDs, PGs, ...)."},
				}},
			},
			"monitors": schema.SingleNestedAttribute{
				Computed:            true,
				MarkdownDescription: "Monitors.",
				Attributes: map[string]schema.Attribute{
					"total":     i64("Monitors in the monitor map."),
					"in_quorum": i64("Monitors in quorum."),
					"quorum_names": schema.ListAttribute{Computed: true, ElementType: types.StringType,
						MarkdownDescription: "Ids of the monitors in quorum."},
				},
			},
			"managers": schema.SingleNestedAttribute{
				Computed:            true,
				MarkdownDescription: "Managers.",
				Attributes: map[string]schema.Attribute{
					"available": schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether a manager is active."},
					"active":    schema.StringAttribute{Computed: true, MarkdownDescription: "Id of the active manager (empty when none)."},
					"standbys":  i64("Standby managers."),
				},
			},
			"osds": schema.SingleNestedAttribute{
				Computed:            true,
				MarkdownDescription: "OSDs.",
				Attributes: map[string]schema.Attribute{
					"total": i64("OSDs in the OSD map."),
					"up":    i64("OSDs running."),
					"in":    i64("OSDs in (holding data)."),
				},
			},
			"pgs": schema.SingleNestedAttribute{
				Computed:            true,
				MarkdownDescription: "Placement groups.",
				Attributes: map[string]schema.Attribute{
					"total":        i64("All placement groups."),
					"active_clean": i64("Placement groups that are active and clean (remapped ones included, as Ceph's own wait loops count them)."),
					"by_state": schema.MapAttribute{Computed: true, ElementType: types.Int64Type,
						MarkdownDescription: "Placement groups per state, such as `active+clean` or `active+undersized+degraded`."},
					"degraded_objects":  i64("Object copies missing (0 when none)."),
					"misplaced_objects": i64("Object copies in the wrong place, waiting to move (0 when none)."),
				},
			},
			"flags": schema.ListAttribute{
				Computed: true, ElementType: types.StringType,
				MarkdownDescription: "Cluster-wide OSD flags that are set, sorted, such as `noout` or `nobackfill`.",
			},
		},
	}
}

func (d *statusDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var cfg statusModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	c, st := d.readStatus(ctx, cfg.Node.ValueString(), &resp.Diagnostics)
	if st == nil {
		return
	}
	flags, err := c.CephFlags(ctx)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "Ceph flags", "", err)
		return
	}
	m, diags := statusFromAPI(ctx, st, flags)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	m.Node = cfg.Node
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

// readStatus reads Ceph's status through node, or through the provider's
// endpoint when node is empty, and returns the client it used; st is nil
// after adding the reason to diags.
func (d *statusDataSource) readStatus(ctx context.Context, node string, diags *diag.Diagnostics) (c *pve.Client, st *pve.CephStatus) {
	var err error
	if node != "" {
		if c = d.NodeClient(ctx, node, diags); c == nil {
			return nil, nil
		}
		st, err = c.CephNodeStatus(ctx, node)
	} else {
		if c = d.Client(diags); c == nil {
			return nil, nil
		}
		st, err = c.CephClusterStatus(ctx)
	}
	if err != nil {
		framework.AddUnable(diags, "Read", "Ceph status", "", err)
		return nil, nil
	}
	return c, st
}

// statusFromAPI is the data source's model (all but node) of Ceph's
// status st and OSD flags.
func statusFromAPI(ctx context.Context, st *pve.CephStatus, flags map[string]bool) (*statusModel, diag.Diagnostics) {
	var all, diags diag.Diagnostics
	m := statusModel{FSID: types.StringValue(st.FSID), Health: types.StringValue(st.Health), Checks: []statusCheck{}}
	names := make([]string, 0, len(st.Checks))
	for n := range st.Checks {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		ch := st.Checks[n]
		m.Checks = append(m.Checks, statusCheck{Name: types.StringValue(n), Severity: types.StringValue(ch.Severity),
			Summary: types.StringValue(ch.Message), Count: types.Int64Value(ch.Count)})
	}
	quorum, diags := types.ListValueFrom(ctx, types.StringType, append([]string{}, st.QuorumNames...))
	all.Append(diags...)
	m.Monitors, diags = types.ObjectValue(statusMonitorTypes, map[string]attr.Value{
		"total": types.Int64Value(st.NumMons), "in_quorum": types.Int64Value(int64(len(st.QuorumNames))), "quorum_names": quorum})
	all.Append(diags...)

	var mgr struct {
		Mgrmap struct {
			Available  bool   `json:"available"`
			ActiveName string `json:"active_name"`
			// PVE answers with the whole `mgr dump` (standbys); Ceph's
			// own status has only the count.
			Standbys    []json.RawMessage `json:"standbys"`
			NumStandbys int64             `json:"num_standbys"`
		} `json:"mgrmap"`
	}
	_ = json.Unmarshal(st.Raw, &mgr) // optional fields; the typed decode already succeeded
	m.Managers, diags = types.ObjectValue(statusManagerTypes, map[string]attr.Value{
		"available": types.BoolValue(st.MgrAvailable), "active": types.StringValue(mgr.Mgrmap.ActiveName),
		"standbys": types.Int64Value(max(mgr.Mgrmap.NumStandbys, int64(len(mgr.Mgrmap.Standbys))))})
	all.Append(diags...)

	m.OSDs, diags = types.ObjectValue(statusOSDTypes, map[string]attr.Value{
		"total": types.Int64Value(st.NumOSDs), "up": types.Int64Value(st.NumUpOSDs), "in": types.Int64Value(st.NumInOSDs)})
	all.Append(diags...)

	byState, diags := types.MapValueFrom(ctx, types.Int64Type, st.PGsByState)
	all.Append(diags...)
	m.PGs, diags = types.ObjectValue(statusPGTypes, map[string]attr.Value{
		"total": types.Int64Value(st.NumPGs), "active_clean": types.Int64Value(statusActiveClean(st.PGsByState)),
		"by_state": byState, "degraded_objects": types.Int64Value(st.DegradedObjects), "misplaced_objects": types.Int64Value(st.MisplacedObjects)})
	all.Append(diags...)

	var set []string
	for f, on := range flags {
		if on {
			set = append(set, f)
		}
	}
	sort.Strings(set)
	m.Flags, diags = types.ListValueFrom(ctx, types.StringType, append([]string{}, set...))
	all.Append(diags...)
	return &m, all
}

// statusActiveClean counts PGs whose state has both active and clean.
func statusActiveClean(byState map[string]int64) int64 {
	var n int64
	for st, c := range byState {
		active, clean := false, false
		for _, p := range strings.Split(st, "+") {
			active = active || p == "active"
			clean = clean || p == "clean"
		}
		if active && clean {
			n += c
		}
	}
	return n
}
