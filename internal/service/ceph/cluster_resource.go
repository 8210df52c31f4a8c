package ceph

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

const clusterTypeName = "pve_ceph_cluster"

var (
	_ resource.Resource                   = (*clusterResource)(nil)
	_ resource.ResourceWithConfigure      = (*clusterResource)(nil)
	_ resource.ResourceWithImportState    = (*clusterResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*clusterResource)(nil)
	_ resource.ResourceWithValidateConfig = (*clusterResource)(nil)
)

// NewClusterResource is the constructor the provider registers.
func NewClusterResource() resource.Resource {
	return &clusterResource{ResourceBase: framework.ResourceBase{TypeName: clusterTypeName}}
}

type clusterResource struct{ framework.ResourceBase }

type clusterModel struct {
	ID                    types.String `tfsdk:"id"`
	Node                  types.String `tfsdk:"node"`
	Network               types.String `tfsdk:"network"`
	ClusterNetwork        types.String `tfsdk:"cluster_network"`
	Size                  types.Int64  `tfsdk:"size"`
	MinSize               types.Int64  `tfsdk:"min_size"`
	PGBits                types.Int64  `tfsdk:"pg_bits"`
	AllowUnsafeRedundancy types.Bool   `tfsdk:"allow_unsafe_redundancy"`
	FSID                  types.String `tfsdk:"fsid"`
}

// clusterUnsafeWhy is the reason the provider refuses little redundancy.
const clusterUnsafeWhy = "With min_size 1 Ceph keeps accepting writes while a placement group has a single copy left: " +
	"the next failure of that disk loses those writes for good, and PGs can end up incomplete or with unfound objects " +
	"(the users of this provider lost a pool that way). With size 1 every disk failure loses data; with size 2 " +
	"(and min_size 2) one failed or rebooting OSD stops I/O to its placement groups, which tempts lowering min_size to 1. " +
	"Ceph and PVE recommend size 3 and min_size 2."

func (r *clusterResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Initialises Ceph for the PVE cluster (`pveceph init`, GUI: Ceph > Configuration wizard): " +
			"writes `/etc/pve/ceph.conf` with a new fsid, the public and cluster networks and the replica defaults for new pools. " +
			"It is the first step of hyper-converged Ceph; monitors (`pve_ceph_monitor`), managers (`pve_ceph_manager`), OSDs " +
			"and pools follow. `pveceph install` (the packages) is not part of PVE's API and must have been run on every node.",
		Attributes: map[string]schema.Attribute{
			"id": framework.IDAttribute("The Ceph cluster's fsid."),
			"node": framework.NodeAttribute("Node that runs the init and through which the configuration is read, such as `z2g4a`. "+
				"`/etc/pve/ceph.conf` is shared by the whole PVE cluster, so changing the node changes nothing in Ceph.", framework.NodeInPlace),
			"network": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "Ceph public network in CIDR notation (`public_network`), such as `169.254.50.0/24`: monitors, " +
					"clients and OSDs talk over it, so every Ceph node needs an address in it. Host bits are allowed (`169.254.50.10/24`), " +
					"as in PVE.",
				Validators: []validator.String{framework.CIDR(framework.AnyIP)},
			},
			"cluster_network": schema.StringAttribute{
				Optional: true,
				Computed: true,
				MarkdownDescription: "Separate network for OSD replication, heartbeat and recovery traffic (`cluster_network`), " +
					"in CIDR notation. Unset, PVE uses `network` for it as well (and this attribute shows that).",
				Validators: []validator.String{framework.CIDR(framework.AnyIP)},
			},
			"size": schema.Int64Attribute{
				Optional: true,
				Computed: true,
				Default:  int64default.StaticInt64(3),
				MarkdownDescription: "Default number of replicas of new pools (`osd_pool_default_size`), 1 to 7; default 3. " +
					"Below 3 needs `allow_unsafe_redundancy`. Existing pools keep their own size (see `pve_ceph_pool`). " +
					"Cannot be changed once Ceph is initialised.",
				Validators: []validator.Int64{int64validator.Between(1, 7)},
			},
			"min_size": schema.Int64Attribute{
				Optional: true,
				Computed: true,
				Default:  int64default.StaticInt64(2),
				MarkdownDescription: "Default minimum number of replicas a new pool needs to accept I/O (`osd_pool_default_min_size`), " +
					"1 to 7 and at most `size`; default 2. **Never 1 for data you want to keep**: 1 needs `allow_unsafe_redundancy`. " +
					"Cannot be changed once Ceph is initialised.",
				Validators: []validator.Int64{int64validator.Between(1, 7)},
			},
			"pg_bits": schema.Int64Attribute{
				Optional: true,
				MarkdownDescription: "Placement group bits (6 to 14), passed to the init as PVE accepts it. PVE ignores it: since " +
					"Ceph Nautilus it no longer writes a default PG count to `ceph.conf`; set `pg_num` per pool instead. Kept in state only.",
				DeprecationMessage: "PVE ignores pg_bits (it is deprecated and not written to ceph.conf); set pg_num on each pool instead.",
				Validators:         []validator.Int64{int64validator.Between(6, 14)},
			},
			"allow_unsafe_redundancy": schema.BoolAttribute{
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(false),
				MarkdownDescription: "Allow `size` below 3 or `min_size` 1. Default false. " + clusterUnsafeWhy +
					" Only for throw-away test clusters.",
			},
			"fsid": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The Ceph cluster's fsid, generated by the init.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
		},
	}
}

func (r *clusterResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m clusterModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	clusterCheckRedundancy(m.Size, m.MinSize, m.AllowUnsafeRedundancy, &resp.Diagnostics)
	if !m.Network.IsNull() && !m.Network.IsUnknown() && !m.ClusterNetwork.IsNull() && !m.ClusterNetwork.IsUnknown() {
		pub, err1 := netip.ParsePrefix(m.Network.ValueString())
		cl, err2 := netip.ParsePrefix(m.ClusterNetwork.ValueString())
		if err1 == nil && err2 == nil && pub.Addr().Is4() != cl.Addr().Is4() {
			resp.Diagnostics.AddAttributeError(path.Root("cluster_network"), "Mixed address families",
				fmt.Sprintf("cluster_network %s and network %s must both be IPv4 or both IPv6: Ceph binds to one family (ms_bind_ipv4/ms_bind_ipv6).",
					cl, pub))
		}
	}
}

// clusterCheckRedundancy refuses min_size > size, and size < 3 or
// min_size 1 without the explicit opt-in. Unset size and min_size mean
// PVE's defaults 3 and 2.
func clusterCheckRedundancy(sizeV, minSizeV types.Int64, allowV types.Bool, diags *diag.Diagnostics) {
	if sizeV.IsUnknown() || minSizeV.IsUnknown() || allowV.IsUnknown() {
		return
	}
	size, minSize := int64(3), int64(2)
	if !sizeV.IsNull() {
		size = sizeV.ValueInt64()
	}
	if !minSizeV.IsNull() {
		minSize = minSizeV.ValueInt64()
	}
	allow := allowV.ValueBool()
	if minSize > size {
		diags.AddAttributeError(path.Root("min_size"), "min_size greater than size",
			fmt.Sprintf("min_size (%d) must not be greater than size (%d): a pool would never have enough copies to accept I/O. Use size 3 and min_size 2.", minSize, size))
		return
	}
	if allow {
		return
	}
	if minSize == 1 {
		diags.AddAttributeError(path.Root("min_size"), "Unsafe min_size 1",
			"min_size 1 is refused. "+clusterUnsafeWhy+" Set min_size = 2, or allow_unsafe_redundancy = true for a throw-away test cluster.")
	}
	if size < 3 {
		diags.AddAttributeError(path.Root("size"), fmt.Sprintf("Unsafe size %d", size),
			fmt.Sprintf("size %d is refused. ", size)+clusterUnsafeWhy+" Set size = 3, or allow_unsafe_redundancy = true for a throw-away test cluster.")
	}
}

// ModifyPlan fills cluster_network as PVE will set it and refuses changes
// PVE's init cannot make to an initialised cluster.
func (r *clusterResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	framework.PlanCheckNodeAttr(ctx, r.PD, req, resp, clusterTypeName)
	var plan, config clusterModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var state *clusterModel
	if !req.State.Raw.IsNull() {
		state = &clusterModel{}
		resp.Diagnostics.Append(req.State.Get(ctx, state)...)
		if resp.Diagnostics.HasError() {
			return
		}
	}
	// Unset cluster_network: PVE's init sets cluster_network to network
	// whenever it is given a network, so it follows network on create and
	// on a network change, and stays as it is otherwise.
	if config.ClusterNetwork.IsNull() {
		switch {
		case state == nil || !plan.Network.Equal(state.Network):
			plan.ClusterNetwork = plan.Network
		default:
			plan.ClusterNetwork = state.ClusterNetwork
		}
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("cluster_network"), plan.ClusterNetwork)...)
	}
	if state == nil {
		r.refuseInitialised(ctx, plan.Node, &resp.Diagnostics)
		return
	}
	for _, c := range []struct {
		attr, key    string
		plan, state  types.Int64
		why, example string
	}{
		{"size", "osd_pool_default_size", plan.Size, state.Size, "the default replica count of new pools", "size"},
		{"min_size", "osd_pool_default_min_size", plan.MinSize, state.MinSize, "the default min_size of new pools", "min_size"},
	} {
		if c.plan.IsUnknown() || c.plan.Equal(c.state) {
			continue
		}
		framework.RefuseChange(&resp.Diagnostics, c.attr, "an initialised Ceph cluster",
			fmt.Sprintf("Ceph reports %s = %s (%s) but the configuration says %s. PVE's init keeps the [global] section of an "+
				"existing ceph.conf, so the provider cannot change it, and replacing a Ceph cluster would destroy its data. "+
				"Set %s = %s to match, or edit %s in the [global] section of /etc/pve/ceph.conf on any node by hand "+
				"(it only affects pools created afterwards; change existing pools with pve_ceph_pool).",
				c.key, c.state, c.why, c.plan, c.attr, c.state, c.key))
	}
	if !plan.Network.IsUnknown() && !plan.ClusterNetwork.IsUnknown() &&
		(!plan.Network.Equal(state.Network) || !plan.ClusterNetwork.Equal(state.ClusterNetwork)) {
		resp.Diagnostics.AddWarning("Changing the Ceph networks",
			clusterNetworkChangeAdvice(state, &plan))
	}
}

// refuseInitialised fails a planned create when Ceph is initialised
// already (PVE's init would keep that configuration and ignore size and
// min_size). When PVE cannot be asked, Create checks again.
func (r *clusterResource) refuseInitialised(ctx context.Context, nodeV types.String, diags *diag.Diagnostics) {
	if r.PD == nil || r.PD.Client == nil || nodeV.IsUnknown() || nodeV.IsNull() {
		return
	}
	node := nodeV.ValueString()
	c, err := r.PD.NodeClient(ctx, node)
	if err != nil {
		return
	}
	raw, err := c.CephConfigRaw(ctx, node)
	if err != nil {
		return
	}
	if fsid := pve.ParseCephConfig(raw).Get("global", "fsid"); fsid != "" {
		diags.AddError("Ceph is already initialised", clusterInitialisedAdvice(fsid, node))
	}
}

func clusterInitialisedAdvice(fsid, node string) string {
	return fmt.Sprintf("Ceph is already initialised (fsid %s): /etc/pve/ceph.conf exists and PVE's init would keep it, "+
		"ignoring size and min_size. Import it instead: terraform import %s.<name> %s", fsid, clusterTypeName, node)
}

func clusterNetworkChangeAdvice(before, after *clusterModel) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The provider rewrites public_network (%s -> %s) and cluster_network (%s -> %s) in /etc/pve/ceph.conf; "+
		"running Ceph daemons keep their addresses until they restart. ", before.Network.ValueString(), after.Network.ValueString(),
		before.ClusterNetwork.ValueString(), after.ClusterNetwork.ValueString())
	b.WriteString("Every node needs an address in the new networks first (keep the old ones until the end). Then, as PVE's " +
		"documentation (Ceph > Network Changes) describes: restart the OSDs (and managers) of one node at a time, waiting " +
		"for HEALTH_OK in between; for a new public network, finally destroy and recreate the monitors one by one " +
		"(replace each pve_ceph_monitor), again waiting for HEALTH_OK.")
	return b.String()
}

func (r *clusterResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan clusterModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	node := plan.Node.ValueString()
	c := r.NodeClient(ctx, node, &resp.Diagnostics)
	if c == nil {
		return
	}
	existing, err := c.CephConfigRaw(ctx, node)
	switch {
	case err == nil:
		if fsid := pve.ParseCephConfig(existing).Get("global", "fsid"); fsid != "" {
			resp.Diagnostics.AddError("Unable to Create Ceph cluster on "+node, clusterInitialisedAdvice(fsid, node))
			return
		}
	case !pve.IsCephNotInitialized(err):
		framework.AddUnable(&resp.Diagnostics, "Create", "Ceph cluster on", node, err)
		return
	}
	ir := pve.CephInitRequest{Network: plan.Network.ValueString(), Size: plan.Size.ValueInt64(), MinSize: plan.MinSize.ValueInt64()}
	if cn := plan.ClusterNetwork.ValueString(); cn != "" && cn != ir.Network {
		ir.ClusterNetwork = cn
	}
	if !plan.PGBits.IsNull() {
		ir.PGBits = plan.PGBits.ValueInt64()
	}
	tflog.Info(ctx, "initialising Ceph", map[string]any{"node": node, "network": ir.Network, "cluster_network": ir.ClusterNetwork})
	if err := cephInit(ctx, c, node, ir); err != nil {
		framework.AddUnable(&resp.Diagnostics, "Create", "Ceph cluster on", node, err)
		return
	}
	state, found, d := r.read(ctx, &plan)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !found {
		resp.Diagnostics.AddError("Unable to Create Ceph cluster on "+node, "PVE accepted the init but /etc/pve/ceph.conf has no fsid afterwards.")
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
}

// cephInit runs PVE's (synchronous) Ceph init; when its answer is lost,
// ceph.conf tells whether PVE did it: an fsid and ir's networks (init
// sets the cluster network to the public one unless given).
func cephInit(ctx context.Context, c *pve.Client, node string, ir pve.CephInitRequest) error {
	return c.WriteVerified(ctx, "ceph init on "+node, func() error { return c.InitCeph(ctx, node, ir) }, func() (bool, error) {
		raw, err := c.CephConfigRaw(ctx, node)
		if pve.IsCephNotInitialized(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		conf := pve.ParseCephConfig(raw)
		cn := ir.ClusterNetwork
		if cn == "" {
			cn = ir.Network
		}
		return conf.Get("global", "fsid") != "" && conf.Get("global", "public_network") == ir.Network &&
			conf.Get("global", "cluster_network") == cn, nil
	})
}

// read returns the cluster as ceph.conf describes it, keeping the
// attributes PVE does not store (pg_bits, allow_unsafe_redundancy) from
// prior. found is false when Ceph is not initialised or prior's fsid is
// gone (purged and initialised again).
func (r *clusterResource) read(ctx context.Context, prior *clusterModel) (*clusterModel, bool, diag.Diagnostics) {
	var diags diag.Diagnostics
	node := prior.Node.ValueString()
	c := r.NodeClient(ctx, node, &diags)
	if c == nil {
		return nil, false, diags
	}
	raw, err := c.CephConfigRaw(ctx, node)
	if pve.IsCephNotInitialized(err) {
		return nil, false, diags
	}
	if err != nil {
		framework.AddUnable(&diags, "Read", "Ceph cluster on", node, err)
		return nil, false, diags
	}
	conf := pve.ParseCephConfig(raw)
	fsid := conf.Get("global", "fsid")
	if fsid == "" || (!prior.FSID.IsNull() && !prior.FSID.IsUnknown() && prior.FSID.ValueString() != "" && prior.FSID.ValueString() != fsid) {
		tflog.Warn(ctx, "Ceph configuration has another or no fsid", map[string]any{"node": node, "fsid": fsid, "prior": prior.FSID.ValueString()})
		return nil, false, diags
	}
	m := &clusterModel{ID: types.StringValue(fsid), FSID: types.StringValue(fsid), Node: prior.Node,
		PGBits: prior.PGBits, AllowUnsafeRedundancy: prior.AllowUnsafeRedundancy}
	if m.AllowUnsafeRedundancy.IsNull() || m.AllowUnsafeRedundancy.IsUnknown() {
		m.AllowUnsafeRedundancy = types.BoolValue(false)
	}
	if m.PGBits.IsUnknown() {
		m.PGBits = types.Int64Null()
	}
	strOrNull := func(s string) types.String {
		if s == "" {
			return types.StringNull()
		}
		return types.StringValue(s)
	}
	m.Network = strOrNull(conf.Get("global", "public_network"))
	m.ClusterNetwork = strOrNull(conf.Get("global", "cluster_network"))
	// Ceph's defaults when ceph.conf does not set them: size 3, min_size
	// size - size/2.
	size, err := clusterConfInt(conf, "osd_pool_default_size", 3)
	if err != nil {
		diags.AddError("Unable to Read Ceph cluster "+fsid, err.Error())
		return nil, false, diags
	}
	minSize, err := clusterConfInt(conf, "osd_pool_default_min_size", size-size/2)
	if err != nil {
		diags.AddError("Unable to Read Ceph cluster "+fsid, err.Error())
		return nil, false, diags
	}
	if minSize == 0 {
		minSize = size - size/2
	}
	m.Size, m.MinSize = types.Int64Value(size), types.Int64Value(minSize)
	return m, true, diags
}

func clusterConfInt(conf pve.CephConfig, key string, def int64) (int64, error) {
	v := conf.Get("global", key)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("/etc/pve/ceph.conf has %s = %q, which is not a whole number", key, v)
	}
	return n, nil
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
	state, found, d := r.read(ctx, &prior)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !found {
		tflog.Warn(ctx, "Ceph is no longer initialised (or has another fsid); removing it from state", map[string]any{"node": prior.Node.ValueString()})
		resp.State.RemoveResource(ctx)
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
}

func (r *clusterResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	if r.Client(&resp.Diagnostics) == nil {
		return
	}
	var plan, state clusterModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	node := plan.Node.ValueString()
	if !plan.Network.Equal(state.Network) || !plan.ClusterNetwork.Equal(state.ClusterNetwork) {
		c := r.NodeClient(ctx, node, &resp.Diagnostics)
		if c == nil {
			return
		}
		// PVE's init sets cluster_network to network; send the cluster
		// network whenever it differs so that it never changes by accident.
		ir := pve.CephInitRequest{Network: plan.Network.ValueString()}
		if cn := plan.ClusterNetwork.ValueString(); cn != "" && cn != ir.Network {
			ir.ClusterNetwork = cn
		}
		tflog.Info(ctx, "changing the Ceph networks", map[string]any{"node": node, "network": ir.Network, "cluster_network": ir.ClusterNetwork})
		if err := cephInit(ctx, c, node, ir); err != nil {
			framework.AddUnable(&resp.Diagnostics, "Update", "Ceph cluster", state.FSID.ValueString(), err)
			return
		}
		resp.Diagnostics.AddWarning("Ceph networks changed in ceph.conf only", clusterNetworkChangeAdvice(&state, &plan))
	}
	next, found, d := r.read(ctx, &plan)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !found {
		resp.Diagnostics.AddError("Unable to Update Ceph cluster "+state.FSID.ValueString(), "Ceph is no longer initialised on node "+node+".")
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, next)...)
}

func (r *clusterResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state clusterModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	node, fsid := state.Node.ValueString(), state.FSID.ValueString()
	c := r.NodeClient(ctx, node, &resp.Diagnostics)
	if c == nil {
		return
	}
	raw, err := c.CephConfigRaw(ctx, node)
	if pve.IsCephNotInitialized(err) {
		return // purged already
	}
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Delete", "Ceph cluster", fsid, err)
		return
	}
	conf := pve.ParseCephConfig(raw)
	mons, err := c.CephMons(ctx, node)
	if err != nil && !pve.IsCephNotInitialized(err) {
		framework.AddUnable(&resp.Diagnostics, "Delete", "Ceph cluster", fsid, err)
		return
	}
	var names []string
	for _, m := range mons {
		names = append(names, m.Name)
	}
	if len(names) > 0 || conf.Get("global", "mon_host") != "" {
		what := "monitors are configured (mon_host " + conf.Get("global", "mon_host") + ")"
		if len(names) > 0 {
			what = fmt.Sprintf("%d monitor(s) exist (%s)", len(names), strings.Join(names, ", "))
		}
		framework.RefuseDestroy(&resp.Diagnostics, "", "Ceph cluster "+fsid,
			"Ceph is still running: "+what+". PVE's API cannot remove Ceph (pveceph purge exists only on the command line) and "+
				"refuses to remove the last monitor, so the provider leaves Ceph as it is.\n\n"+
				"To stop managing Ceph with Terraform, replace the resource in the configuration by a block\n"+
				"  removed {\n    from = "+clusterTypeName+".<name>\n    lifecycle { destroy = false }\n  }\n"+
				"(likewise for the remaining pve_ceph_monitor and pve_ceph_manager resources), or run terraform state rm.\n\n"+
				"To really remove Ceph: delete its pools (this destroys their data) and OSDs, remove all monitors but one, then run "+
				"`pveceph purge` on the node of the last monitor and afterwards on every other node that ran Ceph services "+
				"(it removes /etc/pve/ceph.conf and the keyrings).")
		return
	}
	resp.Diagnostics.AddWarning("Ceph configuration left in place",
		fmt.Sprintf("Ceph %s has no monitors, so nothing runs, but PVE's API cannot remove its configuration: /etc/pve/ceph.conf "+
			"and the keyrings in /etc/pve/priv stay, and a new %s would find Ceph initialised. To remove them run `pveceph purge` "+
			"on node %s.", fsid, clusterTypeName, node))
}

func (r *clusterResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	node := strings.TrimSpace(req.ID)
	if node == "" || strings.ContainsAny(node, "/ ") {
		resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf("Expected the name of a node of the Ceph cluster, such as z2g4a; got %q.", req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("node"), node)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("allow_unsafe_redundancy"), false)...)
}
