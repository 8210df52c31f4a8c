package cluster

import (
	"context"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
)

// NewNodesDataSource is pve_nodes.
func NewNodesDataSource() datasource.DataSource {
	return &nodesDataSource{framework.DataSourceBase{TypeName: "pve_nodes"}}
}

// NewClusterStatusDataSource is pve_cluster_status.
func NewClusterStatusDataSource() datasource.DataSource {
	return &clusterStatusDataSource{framework.DataSourceBase{TypeName: "pve_cluster_status"}}
}

// NewClusterJoinInfoDataSource is pve_cluster_join_info.
func NewClusterJoinInfoDataSource() datasource.DataSource {
	return &joinInfoDataSource{framework.DataSourceBase{TypeName: "pve_cluster_join_info"}}
}

// NewVersionDataSource is pve_version.
func NewVersionDataSource() datasource.DataSource {
	return &versionDataSource{framework.DataSourceBase{TypeName: "pve_version"}}
}

// linkMap turns link numbers into the string keys of a map attribute.
func linkMap(m map[int]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[strconv.Itoa(k)] = v
	}
	return out
}

// ---- pve_nodes ----

type nodesDataSource struct{ framework.DataSourceBase }

type nodesModel struct {
	Nodes []nodeEntry `tfsdk:"nodes"`
}

type nodeEntry struct {
	Name        types.String `tfsdk:"name"`
	Status      types.String `tfsdk:"status"`
	Fingerprint types.String `tfsdk:"fingerprint"`
}

func (d *nodesDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "The nodes the provider's endpoint knows (`GET /nodes`): the cluster's members, or the endpoint's node alone when it is standalone.",
		Attributes: map[string]schema.Attribute{
			"nodes": schema.ListNestedAttribute{
				Computed: true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name":        schema.StringAttribute{Computed: true, MarkdownDescription: "Node name."},
					"status":      schema.StringAttribute{Computed: true, MarkdownDescription: "`online`, `offline` or `unknown`."},
					"fingerprint": schema.StringAttribute{Computed: true, MarkdownDescription: "SHA-256 fingerprint of the node's API certificate (empty when PVE does not report it, e.g. offline)."},
				}},
			},
		},
	}
}

func (d *nodesDataSource) Read(ctx context.Context, _ datasource.ReadRequest, resp *datasource.ReadResponse) {
	if d.Client(&resp.Diagnostics) == nil {
		return
	}
	nodes, err := d.PD.Nodes(ctx)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "nodes", "", err)
		return
	}
	m := nodesModel{Nodes: []nodeEntry{}}
	for _, n := range nodes {
		m.Nodes = append(m.Nodes, nodeEntry{Name: types.StringValue(n.Node), Status: types.StringValue(n.Status), Fingerprint: types.StringValue(n.SSLFingerprint)})
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

// ---- pve_cluster_status ----

type clusterStatusDataSource struct{ framework.DataSourceBase }

type clusterStatusModel struct {
	Name      types.String  `tfsdk:"name"`
	Clustered types.Bool    `tfsdk:"clustered"`
	Quorate   types.Bool    `tfsdk:"quorate"`
	Version   types.Int64   `tfsdk:"version"`
	Nodes     []statusEntry `tfsdk:"nodes"`
}

type statusEntry struct {
	Name   types.String `tfsdk:"name"`
	NodeID types.Int64  `tfsdk:"nodeid"`
	IP     types.String `tfsdk:"ip"`
	Online types.Bool   `tfsdk:"online"`
	Local  types.Bool   `tfsdk:"local"`
	Votes  types.Int64  `tfsdk:"quorum_votes"`
	Links  types.Map    `tfsdk:"links"`
}

func (d *clusterStatusDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Cluster membership and quorum as the provider's endpoint sees them (`GET /cluster/status` and the corosync node list). " +
			"A standalone node reports `clustered = false` and itself as the only node.",
		Attributes: map[string]schema.Attribute{
			"name":      schema.StringAttribute{Computed: true, MarkdownDescription: "Cluster name; empty when standalone."},
			"clustered": schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the endpoint's node is in a cluster."},
			"quorate":   schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the cluster has quorum (a standalone node always has)."},
			"version":   schema.Int64Attribute{Computed: true, MarkdownDescription: "Version of the corosync configuration (0 when standalone)."},
			"nodes": schema.ListNestedAttribute{
				Computed: true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name":         schema.StringAttribute{Computed: true, MarkdownDescription: "Node name."},
					"nodeid":       schema.Int64Attribute{Computed: true, MarkdownDescription: "Corosync node id (0 when standalone)."},
					"ip":           schema.StringAttribute{Computed: true, MarkdownDescription: "Address the node name resolves to."},
					"online":       schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the node is up in the cluster."},
					"local":        schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether this is the node that answered."},
					"quorum_votes": schema.Int64Attribute{Computed: true, MarkdownDescription: "Quorum votes (0 when standalone)."},
					"links":        schema.MapAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Corosync link addresses by link number (`\"0\"`, `\"1\"`, ...)."},
				}},
			},
		},
	}
}

func (d *clusterStatusDataSource) Read(ctx context.Context, _ datasource.ReadRequest, resp *datasource.ReadResponse) {
	c := d.Client(&resp.Diagnostics)
	if c == nil {
		return
	}
	st, err := d.PD.ClusterStatus(ctx, c)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "cluster status", "", err)
		return
	}
	m := clusterStatusModel{Name: types.StringValue(st.Name), Clustered: types.BoolValue(st.Clustered), Quorate: types.BoolValue(st.Quorate),
		Version: types.Int64Value(st.Version), Nodes: []statusEntry{}}
	votes, links := map[string]int64{}, map[string]map[string]string{}
	if st.Clustered {
		members, err := d.PD.ClusterConfigNodes(ctx, c)
		if err != nil {
			framework.AddUnable(&resp.Diagnostics, "Read", "cluster status", "", err)
			return
		}
		for _, n := range members {
			votes[n.Name], links[n.Name] = n.QuorumVotes, linkMap(n.Links)
		}
	}
	for _, n := range st.Nodes {
		lv, diags := types.MapValueFrom(ctx, types.StringType, links[n.Name])
		resp.Diagnostics.Append(diags...)
		if links[n.Name] == nil {
			lv = types.MapValueMust(types.StringType, nil)
		}
		m.Nodes = append(m.Nodes, statusEntry{
			Name: types.StringValue(n.Name), NodeID: types.Int64Value(n.NodeID), IP: types.StringValue(n.IP),
			Online: types.BoolValue(n.Online), Local: types.BoolValue(n.Local), Votes: types.Int64Value(votes[n.Name]), Links: lv,
		})
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

// ---- pve_cluster_join_info ----

type joinInfoDataSource struct{ framework.DataSourceBase }

type joinInfoModel struct {
	Node          types.String    `tfsdk:"node"`
	ConfigDigest  types.String    `tfsdk:"config_digest"`
	PreferredNode types.String    `tfsdk:"preferred_node"`
	Nodes         []joinNodeEntry `tfsdk:"nodes"`
}

type joinNodeEntry struct {
	Name        types.String `tfsdk:"name"`
	NodeID      types.Int64  `tfsdk:"nodeid"`
	QuorumVotes types.Int64  `tfsdk:"quorum_votes"`
	Address     types.String `tfsdk:"address"`
	Fingerprint types.String `tfsdk:"fingerprint"`
	Links       types.Map    `tfsdk:"links"`
}

func (d *joinInfoDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "What a node needs to join the endpoint's cluster (`GET /cluster/config/join`): each member's address and certificate fingerprint. " +
			"`pve_cluster_node` reads it itself; this data source is for joins made outside Terraform or for checks. Fails on a standalone node.",
		Attributes: map[string]schema.Attribute{
			"node":           framework.DataSourceNodeAttribute("Member to join through (`preferred_node`); default the endpoint's node.", false),
			"config_digest":  schema.StringAttribute{Computed: true, MarkdownDescription: "SHA-1 of corosync.conf."},
			"preferred_node": schema.StringAttribute{Computed: true, MarkdownDescription: "The member the join information is for."},
			"nodes": schema.ListNestedAttribute{
				Computed: true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name":         schema.StringAttribute{Computed: true, MarkdownDescription: "Node name."},
					"nodeid":       schema.Int64Attribute{Computed: true, MarkdownDescription: "Corosync node id."},
					"quorum_votes": schema.Int64Attribute{Computed: true, MarkdownDescription: "Quorum votes."},
					"address":      schema.StringAttribute{Computed: true, MarkdownDescription: "Address of the node's API (`pve_addr`)."},
					"fingerprint":  schema.StringAttribute{Computed: true, MarkdownDescription: "SHA-256 fingerprint of the node's API certificate (`pve_fp`)."},
					"links":        schema.MapAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Corosync link addresses by link number."},
				}},
			},
		},
	}
}

func (d *joinInfoDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	c := d.Client(&resp.Diagnostics)
	if c == nil {
		return
	}
	var m joinInfoModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ji, err := c.ClusterJoinInfo(ctx, m.Node.ValueString())
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "cluster join information", m.Node.ValueString(), err)
		return
	}
	m.ConfigDigest, m.PreferredNode = types.StringValue(ji.ConfigDigest), types.StringValue(ji.PreferredNode)
	m.Nodes = []joinNodeEntry{}
	for _, n := range ji.Nodes {
		lv, diags := types.MapValueFrom(ctx, types.StringType, linkMap(n.Links))
		resp.Diagnostics.Append(diags...)
		m.Nodes = append(m.Nodes, joinNodeEntry{
			Name: types.StringValue(n.Name), NodeID: types.Int64Value(n.NodeID), QuorumVotes: types.Int64Value(n.QuorumVotes),
			Address: types.StringValue(n.PVEAddr), Fingerprint: types.StringValue(n.PVEFingerprint), Links: lv,
		})
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

// ---- pve_version ----

type versionDataSource struct{ framework.DataSourceBase }

type versionModel struct {
	Version types.String `tfsdk:"version"`
	Release types.String `tfsdk:"release"`
	RepoID  types.String `tfsdk:"repoid"`
}

func (d *versionDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "The PVE version of the provider's endpoint (`GET /version`).",
		Attributes: map[string]schema.Attribute{
			"version": schema.StringAttribute{Computed: true, MarkdownDescription: "Full pve-manager version, such as `9.1.2`."},
			"release": schema.StringAttribute{Computed: true, MarkdownDescription: "Release, such as `9.1`."},
			"repoid":  schema.StringAttribute{Computed: true, MarkdownDescription: "pve-manager git revision."},
		},
	}
}

func (d *versionDataSource) Read(ctx context.Context, _ datasource.ReadRequest, resp *datasource.ReadResponse) {
	c := d.Client(&resp.Diagnostics)
	if c == nil {
		return
	}
	v, err := c.Version(ctx)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "version", "", err)
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, versionModel{Version: types.StringValue(v.Version), Release: types.StringValue(v.Release), RepoID: types.StringValue(v.RepoID)})...)
}
