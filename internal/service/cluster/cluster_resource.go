package cluster

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

const clusterTypeName = "pve_cluster"

const defaultClusterTimeout = 10 * time.Minute

var (
	_ resource.Resource                = (*clusterResource)(nil)
	_ resource.ResourceWithConfigure   = (*clusterResource)(nil)
	_ resource.ResourceWithImportState = (*clusterResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*clusterResource)(nil)
)

// NewClusterResource is the constructor the provider registers.
func NewClusterResource() resource.Resource {
	return &clusterResource{framework.ResourceBase{TypeName: clusterTypeName}}
}

type clusterResource struct{ framework.ResourceBase }

type clusterModel struct {
	ID          types.String   `tfsdk:"id"`
	Name        types.String   `tfsdk:"name"`
	Links       types.List     `tfsdk:"links"`
	NodeID      types.Int64    `tfsdk:"nodeid"`
	Votes       types.Int64    `tfsdk:"votes"`
	Node        types.String   `tfsdk:"node"`
	Fingerprint types.String   `tfsdk:"fingerprint"`
	Nodes       types.List     `tfsdk:"nodes"`
	Timeouts    timeouts.Value `tfsdk:"timeouts"`
}

func (r *clusterResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A PVE cluster, created on the node the provider's `endpoint` points at (the founding node), " +
			"as `pvecm create` or Datacenter > Cluster > Create Cluster do. Other nodes join it with `pve_cluster_node`.\n\n" +
			"Credentials: PVE allows this only to `root@pam` logged in with a password; API tokens are refused.\n\n" +
			"PVE cannot dissolve a cluster or change its name or links through its API, so destroying this resource fails " +
			"with instructions (to stop managing it, use a `removed` block with `lifecycle { destroy = false }`), and changing `links`, `nodeid` or `votes` of an existing cluster is refused at plan time.",
		Attributes: map[string]schema.Attribute{
			"id": framework.IDAttribute("The cluster name."),
			"name": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Cluster name: 1 to 15 letters, digits and hyphens, not starting or ending with a hyphen. Cannot be changed.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators: []validator.String{
					stringvalidator.LengthBetween(1, 15),
					stringvalidator.RegexMatches(framework.NodeNameRE, "must be letters, digits and hyphens, not starting or ending with a hyphen (PVE's node-name rules)"),
				},
			},
			"links": schema.ListNestedAttribute{
				Optional: true,
				Computed: true,
				MarkdownDescription: "Corosync links of the founding node: the first is link0, the second link1, and so on (at most 8). " +
					"Each address must be configured on the founding node. When unset PVE uses the address the node's name resolves to as link0.",
				Validators:    []validator.List{listvalidator.SizeBetween(1, maxLinks)},
				PlanModifiers: []planmodifier.List{listplanmodifier.UseStateForUnknown()},
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"address": schema.StringAttribute{
						Required:            true,
						MarkdownDescription: "IP address (or host name) of the link on the founding node, such as `169.254.60.10`.",
						Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
					},
					"priority": schema.Int64Attribute{
						Optional:            true,
						Computed:            true,
						Default:             int64default.StaticInt64(0),
						MarkdownDescription: "knet link priority, 0 to 255; in passive mode the link with the lower value is used first. Default 0.",
						Validators:          []validator.Int64{int64validator.Between(0, 255)},
					},
				}},
			},
			"nodeid": schema.Int64Attribute{
				Optional:            true,
				Computed:            true,
				MarkdownDescription: "Corosync node id of the founding node (default 1).",
				Validators:          []validator.Int64{int64validator.AtLeast(1)},
				PlanModifiers:       []planmodifier.Int64{int64planmodifier.UseStateForUnknown()},
			},
			"votes": schema.Int64Attribute{
				Optional:            true,
				Computed:            true,
				MarkdownDescription: "Quorum votes of the founding node (default 1).",
				Validators:          []validator.Int64{int64validator.AtLeast(1)},
				PlanModifiers:       []planmodifier.Int64{int64planmodifier.UseStateForUnknown()},
			},
			"node": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The founding node: the node the provider's endpoint answers from.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"fingerprint": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "SHA-256 fingerprint of the founding node's API certificate, which joining nodes pin.",
			},
			"nodes": schema.ListAttribute{
				Computed:            true,
				ElementType:         types.StringType,
				MarkdownDescription: "Names of the cluster's members, by node id.",
			},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true}),
		},
	}
}

// ModifyPlan refuses at plan time what would fail at apply: token auth for
// a new cluster, and changes PVE's API cannot make.
func (r *clusterResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || r.PD == nil || r.PD.Client == nil {
		return
	}
	framework.PlanCheckNodeAttr(ctx, r.PD, req, resp, clusterTypeName)
	if req.State.Raw.IsNull() {
		framework.RequireRootTicket(r.PD.Client, &resp.Diagnostics, "Creating a cluster")
		return
	}
	var plan, state clusterModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() || !plan.Name.Equal(state.Name) {
		return
	}
	for attrName, changed := range map[string]bool{
		"links":  !plan.Links.IsUnknown() && !plan.Links.Equal(state.Links),
		"nodeid": !plan.NodeID.IsUnknown() && !plan.NodeID.Equal(state.NodeID),
		"votes":  !plan.Votes.IsUnknown() && !plan.Votes.Equal(state.Votes),
	} {
		if changed {
			framework.RefuseChange(&resp.Diagnostics, attrName, "an existing cluster",
				"PVE's API cannot change the corosync configuration of an existing cluster. Edit /etc/pve/corosync.conf by hand "+
					"as the PVE documentation describes (Cluster Manager > Corosync Configuration), then set "+attrName+" to what the cluster has "+
					"(terraform plan shows the current value).")
		}
	}
}

func (r *clusterResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	c := r.Client(&resp.Diagnostics)
	if c == nil {
		return
	}
	var plan clusterModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	name := plan.Name.ValueString()
	if !framework.RequireRootTicket(c, &resp.Diagnostics, "Creating a cluster") {
		return
	}
	timeout, diags := plan.Timeouts.Create(ctx, defaultClusterTimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	st, err := c.ClusterStatus(ctx)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Create", "cluster", name, err)
		return
	}
	if st.Clustered {
		resp.Diagnostics.AddError("Unable to Create cluster "+name,
			fmt.Sprintf("The endpoint's node is already a member of cluster %q. Import it with `terraform import %s.<name> %s` instead.", st.Name, clusterTypeName, st.Name))
		return
	}
	founder := ""
	if ln := st.LocalNode(); ln != nil {
		founder = ln.Name
	}
	cr := plan.createRequest(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	err = createCluster(ctx, c, founder, cr)
	r.PD.ClusterChanged()
	// The endpoint's node was standalone: a failed task after which it is
	// in a cluster of this name died after writing corosync.conf (the
	// worker's last step restarts corosync and pmxcfs, pve-cluster
	// API2/ClusterConfig.pm create): this create's, adopted.
	if err != nil && (!framework.FailedTask(err) || !clusteredAs(ctx, c, name)) {
		framework.AddUnable(&resp.Diagnostics, "Create", "cluster", name, err)
		return
	}
	if err != nil {
		framework.WarnAdopted(&resp.Diagnostics, "cluster", name, err)
	}
	state, found, d := r.read(ctx, name, founder, plan.Links)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !found {
		resp.Diagnostics.AddError("Unable to Create cluster "+name, "PVE finished creating the cluster but the endpoint does not report it.")
		return
	}
	state.Timeouts = plan.Timeouts
	resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
}

// createRequest is the create request from the plan.
func (m *clusterModel) createRequest(ctx context.Context, diags *diag.Diagnostics) pve.CreateClusterRequest {
	cr := pve.CreateClusterRequest{Name: m.Name.ValueString(), Links: map[int]pve.ClusterLink{}}
	if !m.Links.IsNull() && !m.Links.IsUnknown() {
		var links []linkModel
		diags.Append(m.Links.ElementsAs(ctx, &links, false)...)
		for i, l := range links {
			cl := pve.ClusterLink{Address: l.Address.ValueString()}
			if !l.Priority.IsNull() && !l.Priority.IsUnknown() && l.Priority.ValueInt64() != 0 {
				p := l.Priority.ValueInt64()
				cl.Priority = &p
			}
			cr.Links[i] = cl
		}
	}
	if !m.NodeID.IsNull() && !m.NodeID.IsUnknown() {
		v := m.NodeID.ValueInt64()
		cr.NodeID = &v
	}
	if !m.Votes.IsNull() && !m.Votes.IsUnknown() {
		v := m.Votes.ValueInt64()
		cr.Votes = &v
	}
	return cr
}

// createCluster creates the cluster on the endpoint's node (founder) and
// waits for the task. A lost answer is followed through the clustercreate
// task (named after the cluster); without one PVE did not act and it is
// sent again.
func createCluster(ctx context.Context, c *pve.Client, founder string, cr pve.CreateClusterRequest) error {
	upid, err := c.StartTask(ctx, founder, "clustercreate", cr.Name, func() (string, error) { return c.CreateCluster(ctx, cr) })
	if err == nil {
		_, err = c.WaitTask(ctx, upid)
	}
	return err
}

// clusteredAs reports whether the endpoint's node is in cluster name.
func clusteredAs(ctx context.Context, c *pve.Client, name string) bool {
	st, err := c.ClusterStatus(ctx)
	return err == nil && st.Clustered && st.Name == name
}

func (r *clusterResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if r.Client(&resp.Diagnostics) == nil {
		return
	}
	var prior clusterModel
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	name := prior.Name.ValueString()
	if name == "" {
		name = prior.ID.ValueString()
	}
	state, found, d := r.read(ctx, name, prior.Node.ValueString(), prior.Links)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !found {
		tflog.Warn(ctx, "cluster no longer exists; removing it from state", map[string]any{"name": name})
		resp.State.RemoveResource(ctx)
		return
	}
	state.Timeouts = prior.Timeouts
	resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
}

// read reports the cluster as the endpoint sees it. node is the founding
// node ("" after import: the endpoint's node).
func (r *clusterResource) read(ctx context.Context, name, node string, _ types.List) (*clusterModel, bool, diag.Diagnostics) {
	var diags diag.Diagnostics
	c := r.PD.Client
	st, err := r.PD.ClusterStatus(ctx, c)
	if err != nil {
		framework.AddUnable(&diags, "Read", "cluster", name, err)
		return nil, false, diags
	}
	if !st.Clustered || st.Name != name {
		return nil, false, diags
	}
	if node == "" || st.Node(node) == nil {
		if ln := st.LocalNode(); ln != nil {
			node = ln.Name
		}
	}
	members, err := r.PD.ClusterConfigNodes(ctx, c)
	if err != nil {
		framework.AddUnable(&diags, "Read", "cluster", name, err)
		return nil, false, diags
	}
	prios, err := c.ClusterLinkPriorities(ctx)
	if err != nil {
		framework.AddUnable(&diags, "Read", "cluster", name, err)
		return nil, false, diags
	}
	// The node's fingerprint as the join information gives it (pve_fp):
	// both it and GET /nodes' ssl_fingerprint are
	// PVE::Cluster::get_node_fingerprint, and the node list is shared.
	nodes, err := r.PD.Nodes(ctx)
	if err != nil {
		framework.AddUnable(&diags, "Read", "cluster", name, err)
		return nil, false, diags
	}
	m := &clusterModel{ID: types.StringValue(name), Name: types.StringValue(name), Node: types.StringValue(node), Fingerprint: types.StringValue("")}
	for _, n := range nodes {
		if n.Node == node {
			m.Fingerprint = types.StringValue(n.SSLFingerprint)
		}
	}
	names := make([]string, 0, len(members))
	m.Links = types.ListNull(types.ObjectType{AttrTypes: linkAttrTypes})
	m.NodeID, m.Votes = types.Int64Null(), types.Int64Null()
	for _, mn := range members {
		names = append(names, mn.Name)
		if mn.Name != node {
			continue
		}
		m.NodeID, m.Votes = types.Int64Value(mn.NodeID), types.Int64Value(mn.QuorumVotes)
		addrs, ok := linksFromAPI(mn.Links)
		if !ok {
			diags.AddWarning("Cluster "+name+" has non-consecutive link numbers",
				fmt.Sprintf("Node %s has links %v; links can only describe link0, link1, ... without gaps.", node, mn.Links))
			continue
		}
		objs := make([]linkModel, len(addrs))
		for i, a := range addrs {
			objs[i] = linkModel{Address: types.StringValue(a), Priority: types.Int64Value(prios[i])}
		}
		lv, d := types.ListValueFrom(ctx, types.ObjectType{AttrTypes: linkAttrTypes}, objs)
		diags.Append(d...)
		m.Links = lv
	}
	nv, d := types.ListValueFrom(ctx, types.StringType, names)
	diags.Append(d...)
	m.Nodes = nv
	return m, true, diags
}

func (r *clusterResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	// Only timeouts can change: everything else replaces the resource or is
	// refused in ModifyPlan.
	framework.UpdateTimeoutsOnly(ctx, req, resp)
}

func (r *clusterResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var prior clusterModel
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	name := prior.Name.ValueString()
	framework.RefuseDestroy(&resp.Diagnostics, "", "cluster "+name,
		"PVE cannot dissolve a cluster through its API, so the provider leaves cluster "+name+" as it is.\n\n"+
			"To stop managing it with Terraform, replace the resource in the configuration by a block\n"+
			"  removed {\n    from = "+clusterTypeName+".<name>\n    lifecycle { destroy = false }\n  }\n"+
			"(likewise for the pve_cluster_node resources of its members), or run terraform state rm "+clusterTypeName+".<name>.\n\n"+
			"To really dissolve it, follow the PVE documentation (Cluster Manager > Remove a Cluster Node, and "+
			"\"Separate a Node Without Reinstalling\") on each node by hand: stop corosync and pve-cluster, start pmxcfs "+
			"in local mode, delete /etc/pve/corosync.conf and /etc/corosync/*, and restart pve-cluster. Reinstalling the nodes is the safer way.")
}

func (r *clusterResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if !framework.IsNodeName(req.ID) || len(req.ID) > 15 {
		resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf("Expected the cluster name, such as lab; got %q.", req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), req.ID)...)
}
