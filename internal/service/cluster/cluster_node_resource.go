package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

const clusterNodeTypeName = "pve_cluster_node"

// joinLockKey serialises joins within one provider: PVE does not, and a
// second join while the first node is still coming up fails for lack of
// quorum (a two-node cluster with one node up has none).
const joinLockKey = "cluster:join"

var (
	_ resource.Resource                = (*clusterNodeResource)(nil)
	_ resource.ResourceWithConfigure   = (*clusterNodeResource)(nil)
	_ resource.ResourceWithImportState = (*clusterNodeResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*clusterNodeResource)(nil)
)

// NewClusterNodeResource is the constructor the provider registers.
func NewClusterNodeResource() resource.Resource {
	return &clusterNodeResource{framework.ResourceBase{TypeName: clusterNodeTypeName}}
}

type clusterNodeResource struct{ framework.ResourceBase }

type clusterNodeModel struct {
	ID          types.String   `tfsdk:"id"`
	Node        types.String   `tfsdk:"node"`
	Links       types.List     `tfsdk:"links"`
	NodeID      types.Int64    `tfsdk:"nodeid"`
	Votes       types.Int64    `tfsdk:"votes"`
	Cluster     types.String   `tfsdk:"cluster"`
	Fingerprint types.String   `tfsdk:"fingerprint"`
	Timeouts    timeouts.Value `tfsdk:"timeouts"`
}

func (r *clusterNodeResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A node joined to the cluster of the provider's endpoint, as `pvecm add` or Datacenter > Cluster > Join Cluster do.",
		Attributes: map[string]schema.Attribute{
			"id":   framework.IDAttribute("The node name."),
			"node": framework.NodeAttribute("Name of the joining node, such as `z2g4b`; it needs an entry in the provider's `standalone_nodes`. Changing it replaces the resource.", framework.NodeReplaces),
			"links": schema.ListNestedAttribute{
				Optional: true,
				Computed: true,
				MarkdownDescription: "Corosync links of the node: the first is link0, and so on. The cluster's links and these must match one to one. " +
					"Each address must be configured on the joining node. When unset PVE uses the address the node's name resolves to, " +
					"which only works for single-link clusters. (Link priorities are cluster-wide; set them on `pve_cluster`.)",
				Validators:    []validator.List{listvalidator.SizeBetween(1, maxLinks)},
				PlanModifiers: []planmodifier.List{listplanmodifier.UseStateForUnknown()},
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"address": schema.StringAttribute{
						Required:            true,
						MarkdownDescription: "IP address of the link on the joining node, such as `169.254.60.11`.",
						Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
					},
				}},
			},
			"nodeid": schema.Int64Attribute{
				Optional:            true,
				Computed:            true,
				MarkdownDescription: "Corosync node id; PVE picks the lowest free one when unset.",
				Validators:          []validator.Int64{int64validator.AtLeast(1)},
				PlanModifiers:       []planmodifier.Int64{int64planmodifier.UseStateForUnknown()},
			},
			"votes": schema.Int64Attribute{
				Optional:            true,
				Computed:            true,
				MarkdownDescription: "Quorum votes of the node (default 1).",
				Validators:          []validator.Int64{int64validator.AtLeast(0)},
				PlanModifiers:       []planmodifier.Int64{int64planmodifier.UseStateForUnknown()},
			},
			"cluster": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "Name of the cluster the node is a member of.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"fingerprint": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "SHA-256 fingerprint of the node's API certificate, which the cluster CA reissued at the join.",
			},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Delete: true}),
		},
	}
}

func (r *clusterNodeResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || r.PD == nil || r.PD.Client == nil {
		return
	}
	framework.PlanCheckNodeAttr(ctx, r.PD, req, resp, clusterNodeTypeName)
	if req.State.Raw.IsNull() {
		framework.RequireRootTicket(r.PD.Client, &resp.Diagnostics, "Joining a node to a cluster")
		return
	}
	var plan, state clusterNodeModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() || !plan.Node.Equal(state.Node) {
		return
	}
	for attrName, changed := range map[string]bool{
		"links":  !plan.Links.IsUnknown() && !plan.Links.Equal(state.Links),
		"nodeid": !plan.NodeID.IsUnknown() && !plan.NodeID.Equal(state.NodeID),
		"votes":  !plan.Votes.IsUnknown() && !plan.Votes.Equal(state.Votes),
	} {
		if changed {
			framework.RefuseChange(&resp.Diagnostics, attrName, "a cluster member",
				"PVE's API cannot change a member's corosync configuration. Edit /etc/pve/corosync.conf by hand as the PVE documentation "+
					"describes (Cluster Manager > Corosync Configuration), then set "+attrName+" to what the cluster has.")
		}
	}
}

func (r *clusterNodeResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	if r.Client(&resp.Diagnostics) == nil {
		return
	}
	var plan clusterNodeModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	node := plan.Node.ValueString()
	if !framework.RequireRootTicket(r.PD.Client, &resp.Diagnostics, "Joining a node to a cluster") {
		return
	}
	timeout, diags := plan.Timeouts.Create(ctx, defaultClusterTimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	req2 := pve.JoinClusterRequest{Links: map[int]pve.ClusterLink{}}
	if !plan.Links.IsNull() && !plan.Links.IsUnknown() {
		var links []nodeLinkModel
		resp.Diagnostics.Append(plan.Links.ElementsAs(ctx, &links, false)...)
		for i, l := range links {
			req2.Links[i] = pve.ClusterLink{Address: l.Address.ValueString()}
		}
	}
	if !plan.NodeID.IsNull() && !plan.NodeID.IsUnknown() {
		v := plan.NodeID.ValueInt64()
		req2.NodeID = &v
	}
	if !plan.Votes.IsNull() && !plan.Votes.IsUnknown() {
		v := plan.Votes.ValueInt64()
		req2.Votes = &v
	}
	if resp.Diagnostics.HasError() {
		return
	}

	unlock := r.PD.NodeLocks.Lock(joinLockKey)
	err := r.join(ctx, node, req2)
	unlock()
	r.PD.ClusterChanged()
	if err != nil {
		// join checked the node standalone before the task: a failed task
		// after which the cluster lists it online died after finish_join
		// (the node switched to the cluster's files): this join's, adopted.
		// A node only added to corosync.conf (finish_join failed) is not
		// online and is not adopted.
		if !framework.FailedTask(err) || !onlineMember(ctx, r.PD.Client, node) {
			if framework.FailedTask(err) {
				err = r.dropHalfJoined(ctx, node, err)
			}
			framework.AddUnable(&resp.Diagnostics, "Join", "node", node+" to the cluster", err)
			return
		}
		framework.WarnAdopted(&resp.Diagnostics, "cluster node", node, err)
	}
	state, found, d := r.read(ctx, node)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !found {
		resp.Diagnostics.AddError("Unable to Join node "+node+" to the cluster", "PVE finished the join but the cluster does not list the node.")
		return
	}
	state.Timeouts = plan.Timeouts
	resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
}

// join runs the join: checks, the clusterjoin task on the joining node,
// and waiting until the cluster lists the node online.
func (r *clusterNodeResource) join(ctx context.Context, node string, jr pve.JoinClusterRequest) error {
	main := r.PD.Client
	st, err := main.ClusterStatus(ctx)
	if err != nil {
		return err
	}
	if !st.Clustered {
		return fmt.Errorf("the provider endpoint %s is not a cluster member; create the cluster first with pve_cluster (and make this resource depend on it)", main.Endpoint())
	}
	if n := st.Node(node); n != nil {
		return fmt.Errorf("node %s is already a member of cluster %s; import it with `terraform import %s.<name> %s`", node, st.Name, clusterNodeTypeName, node)
	}
	if !st.Quorate {
		return fmt.Errorf("cluster %s has no quorum; PVE cannot add a node until the members are up", st.Name)
	}
	member := st.LocalNode()
	if member == nil {
		return errors.New("the cluster status names no local node")
	}
	ji, err := main.ClusterJoinInfo(ctx, member.Name)
	if err != nil {
		return fmt.Errorf("read the join information of %s: %w", member.Name, err)
	}
	var mi *pve.ClusterJoinNode
	for i := range ji.Nodes {
		if ji.Nodes[i].Name == member.Name {
			mi = &ji.Nodes[i]
		}
	}
	if mi == nil || mi.PVEAddr == "" || mi.PVEFingerprint == "" {
		return fmt.Errorf("the join information of cluster %s has no address or fingerprint for %s", st.Name, member.Name)
	}
	presented, err := main.ServerFingerprint(ctx)
	if err != nil {
		return fmt.Errorf("read the certificate of the endpoint %s: %w", main.Endpoint(), err)
	}
	if !strings.EqualFold(presented, mi.PVEFingerprint) {
		return fmt.Errorf("the endpoint %s presents certificate %s, but the cluster's join information says node %s has %s. "+
			"The joining node pins the latter when it contacts %s at %s; fix the node's certificate (or a proxy in front of it) first",
			main.Endpoint(), presented, member.Name, mi.PVEFingerprint, member.Name, mi.PVEAddr)
	}
	jr.Hostname, jr.Fingerprint, jr.Password = mi.PVEAddr, mi.PVEFingerprint, main.RootPassword()

	if !r.PD.IsStandalone(node) {
		return fmt.Errorf("node %s has no entry in the provider's standalone_nodes: a node that is not yet a member can only be reached through its own API "+
			"(standalone_nodes = { %s = { endpoint = \"https://...:8006\", password = \"...\", tls_fingerprint = \"...\" } })", node, node)
	}
	jc, err := r.PD.NodeClient(ctx, node)
	if err != nil {
		return err
	}
	if !jc.IsRootTicket() {
		return fmt.Errorf("standalone_nodes.%s authenticates as %q. %s", node, jc.AuthUser(), rootOnlyDetail)
	}
	if jst, err := jc.ClusterStatus(ctx); err != nil {
		return fmt.Errorf("reach node %s at %s: %w", node, jc.Endpoint(), err)
	} else if ln := jst.LocalNode(); ln == nil || ln.Name != node {
		return fmt.Errorf("standalone_nodes.%s points at %s, which is node %v, not %s", node, jc.Endpoint(), jst.LocalNode(), node)
	} else if jst.Clustered {
		return fmt.Errorf("node %s is already a member of another cluster (%s); PVE can only join a standalone node", node, jst.Name)
	}

	tflog.Info(ctx, "joining node to cluster", map[string]any{"node": node, "cluster": st.Name, "via": member.Name, "address": mi.PVEAddr})
	// A lost answer is followed through the clusterjoin task (id ""); with
	// none PVE did not act (addnode runs after the worker forks) and the
	// join is sent again. The task is followed without a request on the
	// node's own credentials once the join made them stale: through the
	// cluster, which lists the node online from the moment it switched.
	upid, err := main.StartJoin(ctx, jc, node, jr)
	if err != nil {
		return err
	}
	_, err = main.FollowJoin(ctx, jc, node, upid)
	r.PD.ClusterChanged()
	return err
}

// dropHalfJoined undoes a join whose worker failed after the member's
// addnode (Setup::join: finish_join failed, or the worker was killed): the
// cluster's corosync.conf lists the node, which still answers its own API
// standalone, so a new join would fail "can't add existing node". The
// node never switched, so removing it from corosync.conf (what PVE's docs
// say for a failed join) loses nothing. It returns err with what it did.
func (r *clusterNodeResource) dropHalfJoined(ctx context.Context, node string, err error) error {
	listed, lerr := r.PD.Client.ClusterConfigNodes(ctx)
	if lerr != nil {
		return err
	}
	found := false
	for _, n := range listed {
		found = found || n.Name == node
	}
	if !found {
		return err
	}
	// Its own endpoint, with its own credentials: a node that switched
	// has the cluster's and answers clustered, or not at all.
	jc, ok := r.PD.StandaloneClient(node)
	if !ok {
		return err
	}
	if st, serr := jc.ClusterStatus(ctx); serr != nil || st.Clustered {
		return err // switched (or cannot tell): never removed blindly
	}
	if derr := r.PD.Client.RemoveClusterNode(ctx, node); derr != nil {
		// Typically no quorum: the half-joined node is an expected vote
		// that never comes (a two-node cluster loses quorum).
		return fmt.Errorf("%w\n\nThe cluster lists node %s in corosync.conf, but the node never switched to the cluster; removing it failed: %w. "+
			"On a member, run `pvecm delnode %s` (if the cluster lost quorum, first `pvecm expected` with the number of members that are up), "+
			"then apply again", err, node, derr, node)
	}
	r.PD.ClusterChanged()
	return fmt.Errorf("%w\n\nThe cluster had added node %s to corosync.conf, but the node never switched to the cluster: "+
		"the provider removed it from corosync.conf, so the next apply joins it again", err, node)
}

func (r *clusterNodeResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if r.Client(&resp.Diagnostics) == nil {
		return
	}
	var prior clusterNodeModel
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	node := prior.Node.ValueString()
	if node == "" {
		node = prior.ID.ValueString()
	}
	state, found, d := r.read(ctx, node)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !found {
		tflog.Warn(ctx, "node is no longer a cluster member; removing it from state", map[string]any{"node": node})
		resp.State.RemoveResource(ctx)
		return
	}
	state.Timeouts = prior.Timeouts
	resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
}

func (r *clusterNodeResource) read(ctx context.Context, node string) (*clusterNodeModel, bool, diag.Diagnostics) {
	var diags diag.Diagnostics
	c := r.PD.Client
	st, err := r.PD.ClusterStatus(ctx, c)
	if err != nil {
		framework.AddUnable(&diags, "Read", "cluster node", node, err)
		return nil, false, diags
	}
	if !st.Clustered {
		return nil, false, diags
	}
	members, err := r.PD.ClusterConfigNodes(ctx, c)
	if err != nil {
		framework.AddUnable(&diags, "Read", "cluster node", node, err)
		return nil, false, diags
	}
	var cn *pve.ClusterConfigNode
	for i := range members {
		if members[i].Name == node {
			cn = &members[i]
		}
	}
	if cn == nil {
		return nil, false, diags
	}
	m := &clusterNodeModel{
		ID: types.StringValue(node), Node: types.StringValue(node), Cluster: types.StringValue(st.Name),
		NodeID: types.Int64Value(cn.NodeID), Votes: types.Int64Value(cn.QuorumVotes), Fingerprint: types.StringValue(""),
		Links: types.ListNull(types.ObjectType{AttrTypes: nodeLinkAttrTypes}),
	}
	if addrs, ok := linksFromAPI(cn.Links); ok {
		objs := make([]nodeLinkModel, len(addrs))
		for i, a := range addrs {
			objs[i] = nodeLinkModel{Address: types.StringValue(a)}
		}
		lv, d := types.ListValueFrom(ctx, types.ObjectType{AttrTypes: nodeLinkAttrTypes}, objs)
		diags.Append(d...)
		m.Links = lv
	} else {
		diags.AddWarning("Node "+node+" has non-consecutive link numbers",
			fmt.Sprintf("Links %v cannot be described as link0, link1, ... without gaps.", cn.Links))
	}
	nodes, err := r.PD.Nodes(ctx)
	if err != nil {
		framework.AddUnable(&diags, "Read", "cluster node", node, err)
		return nil, false, diags
	}
	for _, n := range nodes {
		if n.Node == node {
			m.Fingerprint = types.StringValue(n.SSLFingerprint)
		}
	}
	return m, true, diags
}

func (r *clusterNodeResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	// Only timeouts can change: everything else replaces the resource or is
	// refused in ModifyPlan.
	framework.UpdateTimeoutsOnly(ctx, req, resp)
}

func (r *clusterNodeResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	c := r.Client(&resp.Diagnostics)
	if c == nil {
		return
	}
	var prior clusterNodeModel
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	node := prior.Node.ValueString()
	timeout, diags := prior.Timeouts.Delete(ctx, defaultClusterTimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if !framework.RequireRootTicket(c, &resp.Diagnostics, "Removing a node from a cluster") {
		return
	}
	st, err := c.ClusterStatus(ctx)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Remove", "cluster node", node, err)
		return
	}
	n := st.Node(node)
	if n == nil {
		return // already gone
	}
	if n.Local {
		framework.RefuseDestroy(&resp.Diagnostics, "", "cluster node "+node,
			"The provider's endpoint is node "+node+" itself, and PVE refuses to remove the node that answers (\"Cannot delete myself from cluster!\"). "+
				"Point the provider at another member to remove this node.")
		return
	}
	guests, err := guestsOn(ctx, c, node)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Remove", "cluster node", node, err)
		return
	}
	if len(guests) > 0 {
		framework.RefuseDestroy(&resp.Diagnostics, "", "cluster node "+node,
			fmt.Sprintf("Node %s still hosts guests %s. Migrate or remove them first: removing the node would orphan their configuration.", node, strings.Join(guests, ", ")))
		return
	}
	if local := st.LocalNode(); local != nil {
		daemons, err := cephDaemonsOn(ctx, c, local.Name, node)
		if err != nil {
			framework.AddUnable(&resp.Diagnostics, "Remove", "cluster node", node, fmt.Errorf("list Ceph daemons: %w", err))
			return
		}
		if len(daemons) > 0 {
			framework.RefuseDestroy(&resp.Diagnostics, "", "cluster node "+node,
				fmt.Sprintf("Node %s still runs Ceph daemons: %s. Remove them first (pve_ceph_osd, pve_ceph_monitor and pve_ceph_manager, "+
					"letting Ceph move the OSDs' data away): a removed node's monitors and OSDs would stay in the Ceph maps and degrade the cluster.",
					node, strings.Join(daemons, ", ")))
			return
		}
	}
	if n.Online {
		framework.RefuseDestroy(&resp.Diagnostics, "", "cluster node "+node,
			"Node "+node+" is online. PVE removes a node from the cluster only after it has been shut down for good: "+
				"move its guests away, remove its Ceph daemons (OSDs, monitors, managers, MDS), shut it down, and make sure it never "+
				"starts again with its current configuration (reinstall it, or separate it as the PVE documentation describes). "+
				"Then run terraform destroy (or apply without this resource) again.")
		return
	}
	if !st.Quorate {
		framework.RefuseDestroy(&resp.Diagnostics, "", "cluster node "+node,
			"Cluster "+st.Name+" has no quorum without node "+node+", and PVE changes the cluster configuration only with quorum. "+
				"On a remaining member, lower the expected votes as the PVE documentation describes (for example `pvecm expected 1` in a two-node cluster), "+
				"then run terraform again.")
		return
	}
	if err := c.RemoveClusterNode(ctx, node); err != nil && !strings.Contains(err.Error(), "is not a known host of the cluster") {
		framework.AddUnable(&resp.Diagnostics, "Remove", "cluster node", node, err)
		return
	}
	r.PD.ClusterChanged()
}

// guestsOn lists the VMs and containers the cluster places on node.
func guestsOn(ctx context.Context, c *pve.Client, node string) ([]string, error) {
	res, err := c.ClusterResources(ctx, "vm")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, g := range res {
		if g.Node == node && (g.Type == "qemu" || g.Type == "lxc") {
			out = append(out, g.ID)
		}
	}
	return out, nil
}

// cephDaemonsOn lists the Ceph monitors, managers and OSDs on node, asked
// through member. A cluster without Ceph has none.
func cephDaemonsOn(ctx context.Context, c *pve.Client, member, node string) ([]string, error) {
	var out []string
	mons, err := c.CephMons(ctx, member)
	if pve.IsCephNotSetUp(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	for _, m := range mons {
		if m.Host == node {
			out = append(out, "monitor mon."+m.Name)
		}
	}
	mgrs, err := c.CephMgrs(ctx, member)
	if err != nil {
		return nil, err
	}
	for _, m := range mgrs {
		if m.Host == node {
			out = append(out, "manager mgr."+m.Name)
		}
	}
	tree, err := c.CephOSDTree(ctx, member)
	if err != nil {
		return nil, err
	}
	for _, o := range tree.OSDs {
		if o.Host == node {
			out = append(out, fmt.Sprintf("OSD osd.%d", o.ID))
		}
	}
	return out, nil
}

func (r *clusterNodeResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if !framework.IsNodeName(req.ID) {
		resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf("Expected the node name, such as z2g4b; got %q.", req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("node"), req.ID)...)
}
