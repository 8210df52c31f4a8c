package ceph

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

const (
	monitorTypeName = "pve_ceph_monitor"
	// monitorLockKey serialises monitor creation and removal in one
	// Terraform run: PVE decides "first monitor" outside its ceph.conf
	// lock, so overlapping creates on an empty cluster bootstrap separate
	// monmaps, and a removal must see the quorum the previous one left.
	monitorLockKey        = "ceph:mon"
	monitorDefaultTimeout = 10 * time.Minute
	// monitorReadsKey caches the monitor list for one Terraform command.
	monitorReadsKey = "ceph/mons"
)

var (
	_ resource.Resource                = (*monitorResource)(nil)
	_ resource.ResourceWithConfigure   = (*monitorResource)(nil)
	_ resource.ResourceWithImportState = (*monitorResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*monitorResource)(nil)
)

// NewMonitorResource is the constructor the provider registers.
func NewMonitorResource() resource.Resource {
	return &monitorResource{ResourceBase: framework.ResourceBase{TypeName: monitorTypeName}}
}

type monitorResource struct{ framework.ResourceBase }

type monitorModel struct {
	ID        types.String   `tfsdk:"id"`
	Node      types.String   `tfsdk:"node"`
	Addresses types.List     `tfsdk:"addresses"`
	Quorum    types.Bool     `tfsdk:"quorum"`
	State     types.String   `tfsdk:"state"`
	Timeouts  timeouts.Value `tfsdk:"timeouts"`
}

func (r *monitorResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A Ceph monitor on one node (`pveceph mon create`, GUI: Ceph > Monitor). Monitors keep the " +
			"cluster maps and need a majority (quorum) to work: run three, one per node. The monitor's id is the node name, " +
			"as PVE chooses it. The first monitor PVE creates also creates a manager on its node, and with several monitors in one " +
			"run any of them may be first: declare a `pve_ceph_manager` on every monitor node, and the one on that node adopts it.",
		Attributes: map[string]schema.Attribute{
			"id":   framework.IDAttribute("Monitor id (`mon.<id>`): the node name for monitors this resource creates."),
			"node": framework.NodeAttribute("Node that runs the monitor, such as `z2g4a`. Changing it replaces the monitor.", framework.NodeReplaces),
			"addresses": schema.ListAttribute{
				Optional:    true,
				Computed:    true,
				ElementType: types.StringType,
				MarkdownDescription: "IP addresses the monitor listens on (`mon-address`), one per Ceph public network, each " +
					"configured on the node and inside the public network. Unset, PVE picks the node's only address in each public " +
					"network (and fails if there are several). Changing it replaces the monitor.",
				Validators:    []validator.List{listvalidator.SizeAtLeast(1), listvalidator.ValueStringsAre(framework.IP(framework.AnyIP))},
				PlanModifiers: []planmodifier.List{listplanmodifier.UseStateForUnknown(), listplanmodifier.RequiresReplace()},
			},
			"quorum": schema.BoolAttribute{
				Computed:            true,
				MarkdownDescription: "Whether the monitor is in the monitors' quorum (as last read).",
			},
			"state": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "`running` (in quorum), `stopped`, or `unknown` when PVE cannot reach the monitors (as last read).",
			},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Delete: true}),
		},
	}
}

// monitorList reads the monitor list once per command (shared by all
// monitor resources), through node.
func (r *monitorResource) monitorList(ctx context.Context, node string) ([]pve.CephMon, error) {
	return framework.CachedRead(ctx, r.PD.Reads, monitorReadsKey, func(ctx context.Context) ([]pve.CephMon, error) {
		c, err := r.PD.NodeClient(ctx, node)
		if err != nil {
			return nil, err
		}
		return c.CephMons(ctx, node)
	})
}

func monitorFind(mons []pve.CephMon, id string) *pve.CephMon {
	for i := range mons {
		if mons[i].Name == id {
			return &mons[i]
		}
	}
	return nil
}

// ModifyPlan refuses at plan time a destroy that is certainly unsafe: the
// last monitor, or one whose removal Ceph says would break quorum. A
// failed check does not block the plan; Delete checks again.
func (r *monitorResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	framework.PlanCheckNodeAttr(ctx, r.PD, req, resp, monitorTypeName)
	if !req.Plan.Raw.IsNull() || req.State.Raw.IsNull() || r.PD == nil || r.PD.Client == nil {
		return
	}
	var state monitorModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if why := r.unsafeRemoval(ctx, &state); why != "" {
		framework.RefuseDestroy(&resp.Diagnostics, "", "Ceph monitor "+state.ID.ValueString(), why)
	}
}

// unsafeRemoval says why removing the monitor now is unsafe ("" when it
// is safe or cannot be decided: PVE then decides).
func (r *monitorResource) unsafeRemoval(ctx context.Context, state *monitorModel) string {
	id, node := state.ID.ValueString(), state.Node.ValueString()
	mons, err := r.monitorList(ctx, node)
	if err != nil {
		tflog.Warn(ctx, "cannot list Ceph monitors to check the removal", map[string]any{"id": id, "error": err.Error()})
		return ""
	}
	if monitorFind(mons, id) == nil {
		return ""
	}
	if len(mons) <= 1 {
		return monitorLastAdvice(id)
	}
	c, err := r.PD.NodeClient(ctx, node)
	if err != nil {
		return ""
	}
	safety, err := c.CephCmdSafety(ctx, node, "mon", id, "destroy")
	if err != nil {
		tflog.Warn(ctx, "cannot ask Ceph whether removing the monitor is safe", map[string]any{"id": id, "error": err.Error()})
		return ""
	}
	if safety.Safe {
		return ""
	}
	var inQuorum, out []string
	for _, m := range mons {
		if m.Quorum {
			inQuorum = append(inQuorum, m.Name)
		} else {
			out = append(out, m.Name+" ("+monitorStateOr(m.State)+")")
		}
	}
	sort.Strings(inQuorum)
	return fmt.Sprintf("Ceph says: %s. Monitors: %d; in quorum: %s; not in quorum: %s. Removing mon.%s now would leave the "+
		"others without a majority, and the whole Ceph cluster would stop (Ceph's mon remove does not check this itself). "+
		"Start the monitors that are down first (pveceph start --service mon.<id>, or bring their nodes back), wait until "+
		"they are in quorum, then apply again.",
		safety.Status, len(mons), monitorJoin(inQuorum), monitorJoin(out), id)
}

func monitorStateOr(s string) string {
	if s == "" {
		return "not in quorum"
	}
	return s
}

func monitorJoin(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}

func monitorLastAdvice(id string) string {
	return fmt.Sprintf("mon.%s is the last Ceph monitor; PVE refuses to remove it (\"can't remove last monitor\"), since Ceph "+
		"cannot work without one. To stop managing it with Terraform, replace the resource by a removed block with "+
		"lifecycle { destroy = false } (see pve_ceph_cluster for removing Ceph altogether with pveceph purge).", id)
}

func (r *monitorResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan monitorModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := plan.Timeouts.Create(ctx, monitorDefaultTimeout)
	resp.Diagnostics.Append(d...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	node := plan.Node.ValueString()
	var addrs []string
	if !plan.Addresses.IsNull() && !plan.Addresses.IsUnknown() {
		resp.Diagnostics.Append(plan.Addresses.ElementsAs(ctx, &addrs, false)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	c := r.NodeClient(ctx, node, &resp.Diagnostics)
	if c == nil {
		return
	}
	unlock := r.PD.NodeLocks.Lock(monitorLockKey)
	defer unlock()
	r.PD.Reads.Invalidate(monitorReadsKey)
	_, existed, diags := r.read(ctx, node, node, plan.Timeouts)
	if diags.HasError() {
		existed = true // unknown: never adopt
	}
	tflog.Info(ctx, "creating Ceph monitor", map[string]any{"node": node, "addresses": addrs})
	// The worker takes ceph.conf's cfs lock first (API2/Ceph/MON.pm): a
	// task that failed on it did nothing and is started again.
	// A lost answer is followed through its task (mon.<node>), or sent
	// again when there is none.
	_, err := c.AwaitVMTask(ctx, func() (string, error) {
		return c.StartTask(ctx, node, "cephcreatemon", "mon."+node, func() (string, error) { return c.CreateCephMon(ctx, node, "", addrs...) })
	})
	r.PD.Reads.Invalidate(monitorReadsKey)
	r.PD.Reads.Invalidate(managerReadsKey) // the first monitor brings a manager
	// A worker that fails before the monitor runs removes its directory;
	// after that (ceph.conf written, the daemon started) the monitor stays
	// (API2/Ceph/MON.pm createmon). One that was absent before is adopted.
	if err != nil && (existed || !framework.FailedTask(err)) {
		framework.AddUnable(&resp.Diagnostics, "Create", "Ceph monitor", node, err)
		return
	}
	state, found, diags := r.read(ctx, node, node, plan.Timeouts)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	switch {
	case !found && err != nil:
		framework.AddUnable(&resp.Diagnostics, "Create", "Ceph monitor", node, err)
		return
	case !found:
		resp.Diagnostics.AddError("Unable to Create Ceph monitor "+node, "PVE finished creating the monitor but does not list mon."+node+".")
		return
	case err != nil:
		framework.WarnAdopted(&resp.Diagnostics, "Ceph monitor", node, err)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
	if !state.Quorum.ValueBool() {
		resp.Diagnostics.AddWarning("Ceph monitor "+node+" is not in quorum",
			"PVE created mon."+node+" but it has not joined the monitors' quorum (state "+state.State.ValueString()+"). "+
				"Check that its address is reachable from the other monitors.")
	}
}

// read finds monitor id; node is where to ask.
func (r *monitorResource) read(ctx context.Context, node, id string, to timeouts.Value) (*monitorModel, bool, diag.Diagnostics) {
	var diags diag.Diagnostics
	mons, err := r.monitorList(ctx, node)
	if pve.IsCephNotInitialized(err) {
		return nil, false, diags
	}
	if err != nil {
		framework.AddUnable(&diags, "Read", "Ceph monitor", id, err)
		return nil, false, diags
	}
	m := monitorFind(mons, id)
	if m == nil {
		return nil, false, diags
	}
	host := m.Host
	if host == "" {
		host = node
	}
	addrs := pve.CephMonitorIPs(m.Addr)
	list, d := types.ListValueFrom(ctx, types.StringType, addrs)
	diags.Append(d...)
	return &monitorModel{ID: types.StringValue(m.Name), Node: types.StringValue(host), Addresses: list,
		Quorum: types.BoolValue(m.Quorum), State: types.StringValue(monitorStateOr(m.State)), Timeouts: to}, true, diags
}

func (r *monitorResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if r.Client(&resp.Diagnostics) == nil {
		return
	}
	var prior monitorModel
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id := prior.ID.ValueString()
	state, found, d := r.read(ctx, prior.Node.ValueString(), id, prior.Timeouts)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !found {
		tflog.Warn(ctx, "Ceph monitor no longer exists; removing it from state", map[string]any{"id": id})
		resp.State.RemoveResource(ctx)
		return
	}
	// PVE lists one address per monitor (the monmap's legacy addr, or
	// public_addr from ceph.conf without quorum); a monitor with an address
	// in each of two public networks shows only one, so keep the prior
	// list while what PVE shows is part of it.
	if !prior.Addresses.IsNull() && !prior.Addresses.IsUnknown() && monitorSubset(state.Addresses, prior.Addresses) {
		state.Addresses = prior.Addresses
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
}

// Update only changes timeouts: node and addresses replace the monitor.
func (r *monitorResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	// Only timeouts can change: everything else replaces the resource or is
	// refused in ModifyPlan.
	framework.UpdateTimeoutsOnly(ctx, req, resp)
}

func (r *monitorResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state monitorModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := state.Timeouts.Delete(ctx, monitorDefaultTimeout)
	resp.Diagnostics.Append(d...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	id, node := state.ID.ValueString(), state.Node.ValueString()
	c := r.NodeClient(ctx, node, &resp.Diagnostics)
	if c == nil {
		return
	}
	unlock := r.PD.NodeLocks.Lock(monitorLockKey)
	defer unlock()
	// Decide on fresh facts: a removal just before this one changed them.
	r.PD.Reads.Invalidate(monitorReadsKey)
	mons, err := r.monitorList(ctx, node)
	if pve.IsCephNotInitialized(err) {
		return
	}
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Delete", "Ceph monitor", id, err)
		return
	}
	if monitorFind(mons, id) == nil {
		return
	}
	if why := r.unsafeRemoval(ctx, &state); why != "" {
		framework.RefuseDestroy(&resp.Diagnostics, "", "Ceph monitor "+id, why)
		return
	}
	tflog.Info(ctx, "destroying Ceph monitor", map[string]any{"id": id, "node": node})
	_, err = c.AwaitVMTask(ctx, func() (string, error) {
		return c.StartTask(ctx, node, "cephdestroymon", "mon."+id, func() (string, error) { return c.DestroyCephMon(ctx, node, id) })
	})
	r.PD.Reads.Invalidate(monitorReadsKey)
	if err != nil {
		var ae *pve.APIError
		if errors.As(err, &ae) && strings.Contains(ae.Message, "no such monitor id") {
			return
		}
		framework.AddUnable(&resp.Diagnostics, "Delete", "Ceph monitor", id, err)
		return
	}
}

func (r *monitorResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if r.Client(&resp.Diagnostics) == nil {
		return
	}
	id := strings.TrimSpace(req.ID)
	if id == "" || strings.ContainsAny(id, "/ ") {
		resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf("Expected a monitor id, which PVE makes the node name, such as z2g4a; got %q.", req.ID))
		return
	}
	// Monitors are listed cluster-wide; ask through any node that knows
	// them, starting with the id as a node name.
	nodes, err := r.PD.Nodes(ctx)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Import", "Ceph monitor", id, err)
		return
	}
	var lastErr error
	for _, n := range append([]string{id}, monitorNodeNames(nodes)...) {
		mons, err := r.monitorList(ctx, n)
		if err != nil {
			lastErr = err
			r.PD.Reads.Invalidate(monitorReadsKey)
			continue
		}
		m := monitorFind(mons, id)
		if m == nil {
			resp.Diagnostics.AddError("Cannot import Ceph monitor "+id, fmt.Sprintf("Ceph has no monitor %q (monitors: %s).", id, monitorNames(mons)))
			return
		}
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), m.Name)...)
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("node"), m.Host)...)
		return
	}
	framework.AddUnable(&resp.Diagnostics, "Import", "Ceph monitor", id, lastErr)
}

func monitorNodeNames(nodes []pve.Node) []string {
	out := make([]string, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, n.Node)
	}
	return out
}

func monitorNames(mons []pve.CephMon) string {
	names := make([]string, 0, len(mons))
	for _, m := range mons {
		names = append(names, m.Name)
	}
	return monitorJoin(names)
}

// monitorSubset reports whether every address of a is in b.
func monitorSubset(a, b types.List) bool {
	in := map[string]bool{}
	for _, e := range b.Elements() {
		if s, ok := e.(types.String); ok {
			in[s.ValueString()] = true
		}
	}
	for _, e := range a.Elements() {
		if s, ok := e.(types.String); !ok || !in[s.ValueString()] {
			return false
		}
	}
	return true
}
