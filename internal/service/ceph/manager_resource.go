package ceph

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

const (
	managerTypeName       = "pve_ceph_manager"
	managerDefaultTimeout = 10 * time.Minute
	managerReadsKey       = "ceph/mgrs"
)

var (
	_ resource.Resource                = (*managerResource)(nil)
	_ resource.ResourceWithConfigure   = (*managerResource)(nil)
	_ resource.ResourceWithImportState = (*managerResource)(nil)
)

// NewManagerResource is the constructor the provider registers.
func NewManagerResource() resource.Resource {
	return &managerResource{ResourceBase: framework.ResourceBase{TypeName: managerTypeName}}
}

type managerResource struct{ framework.ResourceBase }

type managerModel struct {
	ID       types.String   `tfsdk:"id"`
	Node     types.String   `tfsdk:"node"`
	State    types.String   `tfsdk:"state"`
	Timeouts timeouts.Value `tfsdk:"timeouts"`
}

func (r *managerResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A Ceph manager on one node (`pveceph mgr create`, GUI: Ceph > Monitor > Manager). One manager is " +
			"active and the others are standbys that take over when it fails; run one per monitor node. The manager's id is the " +
			"node name, as PVE chooses it. Managers need monitors: declare them after the `pve_ceph_monitor` resources " +
			"(`depends_on`).\n\n" +
			"The first monitor PVE creates also creates a manager on its node; the `pve_ceph_manager` of that node adopts it " +
			"instead of failing, and destroying the resource removes it.\n\n" +
			"Destroying the active manager while standbys run is harmless: a standby takes over. **Destroying the last manager** " +
			"leaves Ceph without one: health turns to HEALTH_WARN (MGR_DOWN), status and placement group statistics, the " +
			"dashboard and the PG autoscaler stop, and PVE's Ceph panels show stale data. The provider warns when it does that.\n\n" +
			"Credentials: an API token (or user) with `Sys.Modify` on `/`.",
		Attributes: map[string]schema.Attribute{
			"id":   framework.IDAttribute("Manager id (`mgr.<id>`): the node name for managers this resource creates."),
			"node": framework.NodeAttribute("Node that runs the manager, such as `z2g4a`. Changing it replaces the manager.", framework.NodeReplaces),
			"state": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "`active`, `standby` or `stopped` (as last read).",
			},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Delete: true}),
		},
	}
}

func (r *managerResource) managerList(ctx context.Context, node string) ([]pve.CephMgr, error) {
	return framework.CachedRead(ctx, r.PD.Reads, managerReadsKey, func(ctx context.Context) ([]pve.CephMgr, error) {
		c, err := r.PD.NodeClient(ctx, node)
		if err != nil {
			return nil, err
		}
		return c.CephMgrs(ctx, node)
	})
}

func managerFind(mgrs []pve.CephMgr, id string) *pve.CephMgr {
	for i := range mgrs {
		if mgrs[i].Name == id {
			return &mgrs[i]
		}
	}
	return nil
}

func (r *managerResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan managerModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := plan.Timeouts.Create(ctx, managerDefaultTimeout)
	resp.Diagnostics.Append(d...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	node := plan.Node.ValueString()
	c := r.NodeClient(ctx, node, &resp.Diagnostics)
	if c == nil {
		return
	}
	// The monitor lock orders this after a monitor creation in flight,
	// which may bring this very manager (the first monitor's).
	unlock := r.PD.NodeLocks.Lock(monitorLockKey)
	r.PD.Reads.Invalidate(managerReadsKey)
	mgrs, err := r.managerList(ctx, node)
	unlock()
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Create", "Ceph manager", node, err)
		return
	}
	var taskErr error
	if m := managerFind(mgrs, node); m != nil {
		if m.Host != "" && m.Host != node {
			resp.Diagnostics.AddError("Unable to Create Ceph manager "+node,
				fmt.Sprintf("A manager mgr.%s already exists on node %s.", node, m.Host))
			return
		}
		tflog.Info(ctx, "adopting the Ceph manager PVE created with the first monitor", map[string]any{"node": node})
	} else {
		tflog.Info(ctx, "creating Ceph manager", map[string]any{"node": node})
		// A lost answer is followed through its task (mgr.<node>), or
		// sent again when there is none.
		upid, err := c.StartTask(ctx, node, "cephcreatemgr", "mgr."+node, func() (string, error) { return c.CreateCephMgr(ctx, node, "") })
		_, taskErr = c.Await(ctx, upid, err)
		r.PD.Reads.Invalidate(managerReadsKey)
		// The manager was absent (listed above): one there after a failed
		// task is the one its worker made before it died (MGR.pm createmgr
		// starts the daemon last), adopted.
		if taskErr != nil && !framework.FailedTask(taskErr) {
			framework.AddUnable(&resp.Diagnostics, "Create", "Ceph manager", node, taskErr)
			return
		}
	}
	state, found, diags := r.read(ctx, node, node, plan.Timeouts)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !found && taskErr != nil {
		framework.AddUnable(&resp.Diagnostics, "Create", "Ceph manager", node, taskErr)
		return
	}
	if taskErr != nil {
		framework.WarnAdopted(&resp.Diagnostics, "Ceph manager", node, taskErr)
	}
	if !found {
		resp.Diagnostics.AddError("Unable to Create Ceph manager "+node, "PVE finished creating the manager but does not list mgr."+node+".")
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
}

func (r *managerResource) read(ctx context.Context, node, id string, to timeouts.Value) (*managerModel, bool, diag.Diagnostics) {
	var diags diag.Diagnostics
	mgrs, err := r.managerList(ctx, node)
	if pve.IsCephNotInitialized(err) {
		return nil, false, diags
	}
	if err != nil {
		framework.AddUnable(&diags, "Read", "Ceph manager", id, err)
		return nil, false, diags
	}
	m := managerFind(mgrs, id)
	if m == nil {
		return nil, false, diags
	}
	host := m.Host
	if host == "" {
		host = node
	}
	state := m.State
	if state == "" {
		state = "unknown"
	}
	return &managerModel{ID: types.StringValue(m.Name), Node: types.StringValue(host), State: types.StringValue(state), Timeouts: to}, true, diags
}

func (r *managerResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if r.Client(&resp.Diagnostics) == nil {
		return
	}
	var prior managerModel
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
		tflog.Warn(ctx, "Ceph manager no longer exists; removing it from state", map[string]any{"id": id})
		resp.State.RemoveResource(ctx)
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
}

// Update only changes timeouts: node replaces the manager.
func (r *managerResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	// Only timeouts can change: everything else replaces the resource or is
	// refused in ModifyPlan.
	framework.UpdateTimeoutsOnly(ctx, req, resp)
}

func (r *managerResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state managerModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := state.Timeouts.Delete(ctx, managerDefaultTimeout)
	resp.Diagnostics.Append(d...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	id, node := state.ID.ValueString(), state.Node.ValueString()
	c := r.NodeClient(ctx, node, &resp.Diagnostics)
	if c == nil {
		return
	}
	// Serialised with other manager removals so that "the last one" is
	// decided on what the previous removal left.
	unlock := r.PD.NodeLocks.Lock("ceph:mgr")
	defer unlock()
	r.PD.Reads.Invalidate(managerReadsKey)
	mgrs, err := r.managerList(ctx, node)
	if pve.IsCephNotInitialized(err) {
		return
	}
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Delete", "Ceph manager", id, err)
		return
	}
	if managerFind(mgrs, id) == nil {
		return
	}
	tflog.Info(ctx, "destroying Ceph manager", map[string]any{"id": id, "node": node})
	upid, err := c.StartTask(ctx, node, "cephdestroymgr", "mgr."+id, func() (string, error) { return c.DestroyCephMgr(ctx, node, id) })
	_, err = c.Await(ctx, upid, err)
	r.PD.Reads.Invalidate(managerReadsKey)
	if err != nil {
		if strings.Contains(err.Error(), "not found") {
			if after, lerr := r.managerList(ctx, node); lerr == nil && managerFind(after, id) == nil {
				return
			}
		}
		framework.AddUnable(&resp.Diagnostics, "Delete", "Ceph manager", id, err)
		return
	}
	if len(mgrs) == 1 {
		resp.Diagnostics.AddWarning("Ceph has no manager now",
			fmt.Sprintf("mgr.%s was the last Ceph manager. Until a manager runs again (pve_ceph_manager, or pveceph mgr create), "+
				"health shows MGR_DOWN and Ceph status, placement group statistics, the PG autoscaler and the dashboard stop; "+
				"data stays available.", id))
	}
}

func (r *managerResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if r.Client(&resp.Diagnostics) == nil {
		return
	}
	id := strings.TrimSpace(req.ID)
	if id == "" || strings.ContainsAny(id, "/ ") {
		resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf("Expected a manager id, which PVE makes the node name, such as z2g4a; got %q.", req.ID))
		return
	}
	nodes, err := r.PD.Nodes(ctx)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Import", "Ceph manager", id, err)
		return
	}
	var lastErr error
	for _, n := range append([]string{id}, monitorNodeNames(nodes)...) {
		mgrs, err := r.managerList(ctx, n)
		if err != nil {
			lastErr = err
			r.PD.Reads.Invalidate(managerReadsKey)
			continue
		}
		m := managerFind(mgrs, id)
		if m == nil {
			names := make([]string, 0, len(mgrs))
			for _, x := range mgrs {
				names = append(names, x.Name)
			}
			resp.Diagnostics.AddError("Cannot import Ceph manager "+id, fmt.Sprintf("Ceph has no manager %q (managers: %s).", id, monitorJoin(names)))
			return
		}
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), m.Name)...)
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("node"), m.Host)...)
		return
	}
	framework.AddUnable(&resp.Diagnostics, "Import", "Ceph manager", id, lastErr)
}
