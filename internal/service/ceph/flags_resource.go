package ceph

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

type diagList = diag.Diagnostics

const (
	flagsTypeName = "pve_ceph_flags"
	flagsID       = "cluster"
)

var (
	_ resource.Resource                = (*flagsResource)(nil)
	_ resource.ResourceWithConfigure   = (*flagsResource)(nil)
	_ resource.ResourceWithImportState = (*flagsResource)(nil)
)

// cephFlag is one cluster-wide OSD flag PVE's /cluster/ceph/flags sets.
type cephFlag struct {
	attr, name string // Terraform attribute, Ceph/PVE flag name
	doc        string
	benign     bool // PVE's rolling restart accepts it as set (BENIGN_OSDMAP_FLAGS)
}

var cephFlags = []cephFlag{
	{"noout", "noout", "Down OSDs are not marked out after `mon_osd_down_out_interval` (10 minutes), so Ceph does not start moving their data elsewhere. " +
		"The flag for short maintenance such as a node reboot. While it is set, an OSD that really failed is not replaced by recovery either.", true},
	{"nobackfill", "nobackfill", "Backfill (copying placement groups to their new OSDs) is suspended. Set it to stop a backfill storm from " +
		"starving guest I/O; nothing is moved until it is cleared.", false},
	{"norebalance", "norebalance", "Rebalancing of misplaced placement groups is suspended (degraded ones still recover).", false},
	{"norecover", "norecover", "Recovery of degraded placement groups is suspended: data stays with fewer copies than `size` until it is cleared.", false},
	{"noscrub", "noscrub", "Scrubbing is disabled.", true},
	{"nodeep_scrub", "nodeep-scrub", "Deep scrubbing (`nodeep-scrub`) is disabled.", true},
	{"noin", "noin", "OSDs that were marked out are not marked back in when they start.", false},
	{"noup", "noup", "OSDs are not allowed to come up (start serving).", false},
	{"nodown", "nodown", "Failure reports are ignored: OSDs are not marked down, so I/O to a failed OSD hangs instead of moving on.", false},
	{"notieragent", "notieragent", "Cache-tiering activity is suspended.", true},
	{"pause", "pause", "All client reads and writes are paused (`pauserd`, `pausewr`): every guest on Ceph stops.", false},
}

// NewFlagsResource is the constructor the provider registers.
func NewFlagsResource() resource.Resource {
	return &flagsResource{ResourceBase: framework.ResourceBase{TypeName: flagsTypeName}}
}

type flagsResource struct{ framework.ResourceBase }

func (r *flagsResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := map[string]schema.Attribute{
		"id": framework.IDAttribute("Always `cluster`."),
		"flags_set": schema.ListAttribute{
			Computed: true, ElementType: types.StringType,
			MarkdownDescription: "Every OSD flag set in the cluster, managed by this resource or not, by PVE's name (sorted).",
		},
	}
	for _, f := range cephFlags {
		attrs[f.attr] = schema.BoolAttribute{
			Optional: true,
			MarkdownDescription: f.doc + fmt.Sprintf(" `true` sets `%s`, `false` clears it; unset, the resource does not manage it "+
				"(removing it from the configuration after `true` clears it).", f.name),
		}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "The cluster-wide OSD flags of Ceph (`ceph osd set|unset <flag>`, GUI: Ceph → OSD → Manage Global Flags).",
		Attributes:          attrs,
	}
}

// flagsState is the resource's state as a map: attribute -> value (null =
// not managed).
type flagsState struct {
	managed map[string]types.Bool
}

func getFlags(ctx context.Context, from interface {
	GetAttribute(context.Context, path.Path, any) diagList
}) (flagsState, diagList) {
	st := flagsState{managed: map[string]types.Bool{}}
	var diags diagList
	for _, f := range cephFlags {
		var v types.Bool
		diags.Append(from.GetAttribute(ctx, path.Root(f.attr), &v)...)
		st.managed[f.attr] = v
	}
	return st, diags
}

func (r *flagsResource) store(ctx context.Context, state *tfsdk.State, managed map[string]types.Bool, actual map[string]bool) diagList {
	var diags diagList
	diags.Append(state.SetAttribute(ctx, path.Root("id"), flagsID)...)
	var set []string
	for _, f := range cephFlags {
		v := managed[f.attr]
		if !v.IsNull() && !v.IsUnknown() {
			v = types.BoolValue(actual[f.name])
		}
		diags.Append(state.SetAttribute(ctx, path.Root(f.attr), v)...)
		if actual[f.name] {
			set = append(set, f.name)
		}
	}
	sort.Strings(set)
	if set == nil {
		set = []string{}
	}
	diags.Append(state.SetAttribute(ctx, path.Root("flags_set"), set)...)
	return diags
}

// apply sends the changes in one PUT (a cephsetflags task) and stores
// what PVE reports afterwards.
func (r *flagsResource) apply(ctx context.Context, action string, changes map[string]bool, managed map[string]types.Bool, state *tfsdk.State, diags *diagList) {
	c := r.Client(diags)
	if c == nil {
		return
	}
	if len(changes) > 0 {
		tflog.Info(ctx, "setting Ceph OSD flags", map[string]any{"flags": fmt.Sprint(changes)})
		// Flags set or cleared absolutely: sent again on a lost answer.
		upid, err := c.SetCephFlags(pve.Idempotent(ctx), changes)
		if _, err := c.Await(ctx, upid, err); err != nil {
			framework.AddUnable(diags, action, "Ceph flags", "", err)
			return
		}
	}
	actual, err := c.CephFlags(ctx)
	if err != nil {
		framework.AddUnable(diags, "Read", "Ceph flags", "", err)
		return
	}
	if state != nil {
		diags.Append(r.store(ctx, state, managed, actual)...)
	}
	var risky []string
	for _, f := range cephFlags {
		if v := managed[f.attr]; !f.benign && !v.IsNull() && v.ValueBool() && actual[f.name] {
			risky = append(risky, f.name)
		}
	}
	if len(risky) > 0 {
		diags.AddWarning("Ceph flags left set: "+strings.Join(risky, ", "),
			fmt.Sprintf("While %s %s set, Ceph reports HEALTH_WARN (OSDMAP_FLAGS) and suspends what the flag names; data with "+
				"missing copies stays that way. Clear the flags (false, or remove them from the configuration) when the "+
				"maintenance is over.", strings.Join(risky, ", "), map[bool]string{true: "is", false: "are"}[len(risky) == 1]))
	}
}

func (r *flagsResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	plan, diags := getFlags(ctx, req.Plan)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	changes := map[string]bool{}
	for _, f := range cephFlags {
		if v := plan.managed[f.attr]; !v.IsNull() && !v.IsUnknown() {
			changes[f.name] = v.ValueBool()
		}
	}
	r.apply(ctx, "Create", changes, plan.managed, &resp.State, &resp.Diagnostics)
}

func (r *flagsResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	plan, diags := getFlags(ctx, req.Plan)
	resp.Diagnostics.Append(diags...)
	state, diags := getFlags(ctx, req.State)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	changes := map[string]bool{}
	for _, f := range cephFlags {
		p, s := plan.managed[f.attr], state.managed[f.attr]
		switch {
		case p.IsUnknown():
		case !p.IsNull():
			changes[f.name] = p.ValueBool()
		case !s.IsNull() && s.ValueBool():
			changes[f.name] = false // released: clear what the resource set
		}
	}
	r.apply(ctx, "Update", changes, plan.managed, &resp.State, &resp.Diagnostics)
}

func (r *flagsResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	c := r.Client(&resp.Diagnostics)
	if c == nil {
		return
	}
	prior, diags := getFlags(ctx, req.State)
	resp.Diagnostics.Append(diags...)
	var setList types.List
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("flags_set"), &setList)...)
	if resp.Diagnostics.HasError() {
		return
	}
	actual, err := c.CephFlags(ctx)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "Ceph flags", "", err)
		return
	}
	// Right after an import nothing has been read yet: adopt every flag
	// that is set, so the plan shows which of them the configuration
	// would clear.
	if setList.IsNull() {
		for _, f := range cephFlags {
			if actual[f.name] && prior.managed[f.attr].IsNull() {
				prior.managed[f.attr] = types.BoolValue(true)
			}
		}
	}
	resp.Diagnostics.Append(r.store(ctx, &resp.State, prior.managed, actual)...)
}

// Delete clears the flags the resource manages as set; the others stay.
func (r *flagsResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	state, diags := getFlags(ctx, req.State)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	changes := map[string]bool{}
	for _, f := range cephFlags {
		if v := state.managed[f.attr]; !v.IsNull() && v.ValueBool() {
			changes[f.name] = false
		}
	}
	if len(changes) == 0 {
		return
	}
	c := r.Client(&resp.Diagnostics)
	if c == nil {
		return
	}
	tflog.Info(ctx, "clearing the Ceph OSD flags the resource set", map[string]any{"flags": fmt.Sprint(changes)})
	upid, err := c.SetCephFlags(pve.Idempotent(ctx), changes)
	if _, err = c.Await(ctx, upid, err); err != nil {
		if cephGone(err) {
			return // no Ceph, no flags
		}
		framework.AddUnable(&resp.Diagnostics, "Delete", "Ceph flags", "", err)
	}
}

// cephGone reports PVE's errors for a node without Ceph configuration.
func cephGone(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "pveceph configuration not initialized") || strings.Contains(msg, "ceph not fully configured")
}

func (r *flagsResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if req.ID != flagsID {
		resp.Diagnostics.AddError("Invalid import ID",
			fmt.Sprintf("%s is one per cluster; import it with the ID %q, got %q.", flagsTypeName, flagsID, req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), flagsID)...)
}
