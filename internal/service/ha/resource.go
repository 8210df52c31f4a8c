// Package ha manages PVE's high availability: HA resources (guests the HA
// manager keeps started or stopped and recovers on node failure), and their
// placement: HA groups on PVE 8, HA rules on PVE 9.
//
// Design: placement across releases. PVE 8 places a resource through its
// `group` option; PVE 9 migrated groups to node-affinity rules, refuses
// `group` ("ha groups have been migrated to rules") and keeps the list of
// resources in each rule instead. So pve_ha_resource has `group` for PVE 8
// and refuses it at plan time on PVE 9, naming pve_ha_rule; on PVE 9 the
// rule owns its member list (pve_ha_rule.resources), and pve_ha_resource has
// no membership attribute: a resource may be in several rules (one
// node-affinity rule plus resource-affinity rules), and two resources
// writing the same list would fight. Deleting an HA resource on PVE 9 purges
// it from rules (PVE's default), which pve_ha_rule then shows as drift.
// Nothing here touches a guest's configuration or disks: removing a guest
// from HA leaves it running as it is.
package ha

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/resourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

const (
	resourceTypeName = "pve_ha_resource"
	// crmDefaultTimeout bounds the wait for the HA manager to bring the
	// guest to the requested state (PVE's CRM acts within about 10 s, a
	// guest start or shutdown can take minutes).
	crmDefaultTimeout = 5 * time.Minute
	// The status is checked after a quarter of the time waited so far,
	// from crmPollFirst up to crmPollInterval: the CRM acts at its next
	// round (0–10 s), so a wait is seen over within a quarter of itself.
	crmPollFirst    = 250 * time.Millisecond
	crmPollInterval = 2 * time.Second
)

var (
	_ resource.Resource                     = (*haResource)(nil)
	_ resource.ResourceWithConfigure        = (*haResource)(nil)
	_ resource.ResourceWithImportState      = (*haResource)(nil)
	_ resource.ResourceWithModifyPlan       = (*haResource)(nil)
	_ resource.ResourceWithConfigValidators = (*haResource)(nil)

	sidRE   = regexp.MustCompile(`^(vm|ct):([1-9][0-9]{2,8})$`)
	groupRE = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_-]+$`)
	states  = []string{"started", "stopped", "disabled", "ignored", "enabled"}
)

// NewResource is the constructor the provider registers.
func NewResource() resource.Resource {
	return &haResource{framework.ResourceBase{TypeName: resourceTypeName}}
}

type haResource struct{ framework.ResourceBase }

type haResourceModel struct {
	ID          types.String   `tfsdk:"id"`
	SID         types.String   `tfsdk:"sid"`
	VMID        types.Int64    `tfsdk:"vmid"`
	State       types.String   `tfsdk:"state"`
	Group       types.String   `tfsdk:"group"`
	MaxRestart  types.Int64    `tfsdk:"max_restart"`
	MaxRelocate types.Int64    `tfsdk:"max_relocate"`
	Failback    types.Bool     `tfsdk:"failback"`
	Comment     types.String   `tfsdk:"comment"`
	Timeouts    timeouts.Value `tfsdk:"timeouts"`
}

func (r *haResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A guest managed by PVE's HA stack (`/etc/pve/ha/resources.cfg`, GUI: Datacenter → HA, " +
			"`ha-manager add`). The HA manager keeps it in the requested `state` and recovers it when its node fails. " +
			"Create and update wait until the HA manager reports the requested state (`timeouts.create`/`timeouts.update`, " +
			"default 5 minutes).\n\n" +
			"Placement: on PVE 8 with `group` (a `pve_ha_group`); on PVE 9, where groups were migrated to rules, with a " +
			"`pve_ha_rule` that lists this resource (`group` is refused at plan time there).\n\n" +
			"Destroying the resource only removes the guest from HA (on PVE 9 also from the rules naming it, as PVE does); " +
			"the guest, its configuration and disks stay as they are, running or not. Changing `sid`/`vmid` moves HA to " +
			"another guest (the old one is removed from HA, nothing else).\n\n" +
			"Credentials: an API token with `Sys.Console` on `/` (`Sys.Audit` to read).",
		Attributes: map[string]schema.Attribute{
			"id": framework.IDAttribute("The HA resource id, same as `sid`."),
			"sid": schema.StringAttribute{
				Optional: true, Computed: true,
				MarkdownDescription: "HA resource id, `vm:<vmid>` or `ct:<vmid>`, such as `vm:100`. Set this or `vmid`.",
				Validators:          []validator.String{stringvalidator.RegexMatches(sidRE, "must be vm:<vmid> or ct:<vmid>, such as vm:100")},
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplaceIfConfigured()},
			},
			"vmid": schema.Int64Attribute{
				Optional: true, Computed: true,
				MarkdownDescription: "The guest's id; PVE picks `vm:` or `ct:` by the guest's type. Set this or `sid`.",
				Validators:          []validator.Int64{int64validator.Between(100, 999999999)},
				PlanModifiers:       []planmodifier.Int64{int64planmodifier.RequiresReplaceIfConfigured()},
			},
			"state": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString("started"),
				MarkdownDescription: "Requested state: `started` (default; the HA manager starts the guest and recovers it), " +
					"`stopped` (kept stopped, still relocated on node failure), `disabled` (stopped and not relocated; the way " +
					"out of the `error` state), `ignored` (HA leaves the guest alone), or `enabled` (PVE's alias of `started`).",
				Validators: []validator.String{stringvalidator.OneOf(states...)},
			},
			"group": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "PVE 8 only: the HA group that places the guest. PVE 9 refuses groups; use `pve_ha_rule`.",
				Validators:          []validator.String{stringvalidator.RegexMatches(groupRE, "must be a group id (a letter, then letters, digits, _ or -)")},
			},
			"max_restart": schema.Int64Attribute{
				Optional: true, Computed: true, Default: int64default.StaticInt64(1),
				MarkdownDescription: "How often the HA manager tries to restart the guest on its node after a failed start (PVE's default 1).",
				Validators:          []validator.Int64{int64validator.AtLeast(0)},
			},
			"max_relocate": schema.Int64Attribute{
				Optional: true, Computed: true, Default: int64default.StaticInt64(1),
				MarkdownDescription: "How often the HA manager tries another node after the restarts failed (PVE's default 1).",
				Validators:          []validator.Int64{int64validator.AtLeast(0)},
			},
			"failback": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(true),
				MarkdownDescription: "PVE 9 only: move the guest back to the node with the highest priority of its node-affinity " +
					"rule when that node comes back (PVE's default `true`). `false` is refused at plan time on PVE 8 (groups " +
					"have `nofailback` there).",
			},
			"comment": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Description.",
				Validators:          []validator.String{stringvalidator.LengthBetween(1, 4096)},
			},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true}),
		},
	}
}

func (r *haResource) ConfigValidators(context.Context) []resource.ConfigValidator {
	return []resource.ConfigValidator{resourcevalidator.ExactlyOneOf(path.MatchRoot("sid"), path.MatchRoot("vmid"))}
}

// vmidOf is the number in a sid.
func vmidOf(sid string) (int64, bool) {
	_, name, ok := strings.Cut(sid, ":")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(name, 10, 64)
	return n, err == nil
}

// ModifyPlan derives sid and vmid from each other and refuses options the
// cluster's PVE release does not have.
func (r *haResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan, config haResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var prior *haResourceModel
	if !req.State.Raw.IsNull() {
		prior = &haResourceModel{}
		resp.Diagnostics.Append(req.State.Get(ctx, prior)...)
	}
	switch {
	case !config.SID.IsNull() && !config.SID.IsUnknown():
		if n, ok := vmidOf(config.SID.ValueString()); ok {
			plan.VMID = types.Int64Value(n)
		}
	case !config.VMID.IsNull() && !config.VMID.IsUnknown():
		// PVE resolves the type (vm or ct) from the guest; keep what it
		// said for the same guest.
		plan.SID = types.StringUnknown()
		if prior != nil && prior.VMID.Equal(config.VMID) {
			plan.SID = prior.SID
		}
	}
	if prior != nil && plan.SID.Equal(prior.SID) {
		plan.ID = prior.ID
	} else {
		plan.ID = plan.SID
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	r.planGuest(ctx, &plan, &config, prior, &resp.Diagnostics) // resource_refs.go

	usesGroup := !config.Group.IsNull()
	noFailback := !config.Failback.IsNull() && !config.Failback.IsUnknown() && !config.Failback.ValueBool()
	if !usesGroup && !noFailback || r.PD == nil || r.PD.Client == nil {
		return
	}
	pve9, release, err := releaseIs9(ctx, r.PD)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "PVE version", "", err)
		return
	}
	if usesGroup && pve9 {
		resp.Diagnostics.AddAttributeError(path.Root("group"), "HA groups were migrated to rules",
			fmt.Sprintf("PVE %s has no HA groups (\"ha groups have been migrated to rules\"). Remove group and place the guest "+
				"with a pve_ha_rule of type node-affinity that lists this resource.", release))
	}
	if noFailback && !pve9 {
		resp.Diagnostics.AddAttributeError(path.Root("failback"), "failback needs PVE 9",
			fmt.Sprintf("PVE %s has no per-resource failback; remove failback and set nofailback on the resource's pve_ha_group.", release))
	}
}

func (m *haResourceModel) request() pve.HAResourceRequest {
	req := pve.HAResourceRequest{State: m.State.ValueString(), Group: m.Group.ValueString(), Comment: m.Comment.ValueString()}
	if !m.MaxRestart.IsNull() && !m.MaxRestart.IsUnknown() {
		v := m.MaxRestart.ValueInt64()
		req.MaxRestart = &v
	}
	if !m.MaxRelocate.IsNull() && !m.MaxRelocate.IsUnknown() {
		v := m.MaxRelocate.ValueInt64()
		req.MaxRelocate = &v
	}
	// failback exists on PVE 9 only, where true is the default: send only
	// false, so PVE 8 never sees it unless the plan refused it already.
	if !m.Failback.IsNull() && !m.Failback.IsUnknown() && !m.Failback.ValueBool() {
		no := false
		req.Failback = &no
	}
	return req
}

func (r *haResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan haResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	c := r.Client(&resp.Diagnostics)
	if c == nil {
		return
	}
	sid := plan.SID.ValueString()
	if plan.SID.IsUnknown() || sid == "" {
		sid = strconv.FormatInt(plan.VMID.ValueInt64(), 10)
	}
	// Whether PVE lacks sid before the POST decides what a lost answer
	// means: a resource that appears after it is this create's, and
	// without one PVE did not act and the create is sent again.
	_, gerr := c.HAResource(ctx, sid)
	absent := pve.IsHANotFound(gerr)
	create := func() error { return c.CreateHAResource(ctx, sid, plan.request()) }
	var err error
	if absent {
		err = c.WriteVerified(ctx, "HA resource create "+sid, create, func() (bool, error) {
			_, gerr := c.HAResource(ctx, sid)
			if pve.IsHANotFound(gerr) {
				return false, nil
			}
			return gerr == nil, gerr
		})
	} else {
		err = create()
	}
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Create", "HA resource", sid, err)
		return
	}
	got, err := c.HAResource(ctx, sid)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "HA resource", sid, err)
		return
	}
	// Record the resource before waiting: it exists in PVE now.
	state := fromAPI(got, plan.Timeouts)
	resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
	timeout, d := plan.Timeouts.Create(ctx, crmDefaultTimeout)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := waitCRM(ctx, c, got.SID, plan.State.ValueString(), timeout); err != nil {
		framework.AddUnable(&resp.Diagnostics, "Create", "HA resource", got.SID, err)
	}
}

func (r *haResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, prior haResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	c := r.Client(&resp.Diagnostics)
	if c == nil {
		return
	}
	sid := prior.SID.ValueString()
	var del []string
	if plan.Comment.IsNull() && !prior.Comment.IsNull() {
		del = append(del, "comment")
	}
	if plan.Group.IsNull() && !prior.Group.IsNull() {
		del = append(del, "group")
	}
	if plan.Failback.ValueBool() && !prior.Failback.ValueBool() {
		del = append(del, "failback")
	}
	// Absolute values and removals, no digest: sent again on a lost answer.
	if err := c.UpdateHAResource(pve.Idempotent(ctx), sid, plan.request(), del, ""); err != nil {
		framework.AddUnable(&resp.Diagnostics, "Update", "HA resource", sid, err)
		return
	}
	got, err := c.HAResource(ctx, sid)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "HA resource", sid, err)
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, fromAPI(got, plan.Timeouts))...)
	timeout, d := plan.Timeouts.Update(ctx, crmDefaultTimeout)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := waitCRM(ctx, c, sid, plan.State.ValueString(), timeout); err != nil {
		framework.AddUnable(&resp.Diagnostics, "Update", "HA resource", sid, err)
	}
}

func (r *haResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var prior haResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	c := r.Client(&resp.Diagnostics)
	if c == nil {
		return
	}
	sid := prior.SID.ValueString()
	if sid == "" {
		sid = prior.ID.ValueString()
	}
	got, err := r.PD.SharedHAResource(ctx, sid)
	if pve.IsHANotFound(err) {
		tflog.Info(ctx, "HA resource no longer exists; removing it from state", map[string]any{"sid": sid})
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "HA resource", sid, err)
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, fromAPI(got, prior.Timeouts))...)
}

func (r *haResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var prior haResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	c := r.Client(&resp.Diagnostics)
	if c == nil {
		return
	}
	sid := prior.SID.ValueString()
	// Sent again on a lost answer: one PVE did makes the second not found.
	if err := c.DeleteHAResource(pve.Idempotent(ctx), sid); err != nil && !pve.IsHANotFound(err) {
		framework.AddUnable(&resp.Diagnostics, "Delete", "HA resource", sid, err)
	}
}

// ImportState takes the sid (vm:100) or the guest's id (100).
func (r *haResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	id := strings.TrimSpace(req.ID)
	if _, err := strconv.ParseInt(id, 10, 64); err != nil && !sidRE.MatchString(id) {
		resp.Diagnostics.AddError("Invalid import ID",
			fmt.Sprintf("Import a pve_ha_resource by its sid (vm:100, ct:101) or the guest's id (100), got %q.", req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("sid"), id)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), id)...)
}

// fromAPI is the state for what PVE reports; options PVE does not return
// are at PVE's defaults.
func fromAPI(got *pve.HAResource, to timeouts.Value) *haResourceModel {
	m := &haResourceModel{
		ID: types.StringValue(got.SID), SID: types.StringValue(got.SID), VMID: types.Int64Null(),
		State: types.StringValue("started"), Group: types.StringNull(), Comment: types.StringNull(),
		MaxRestart: types.Int64Value(1), MaxRelocate: types.Int64Value(1), Failback: types.BoolValue(true), Timeouts: to,
	}
	if n, ok := vmidOf(got.SID); ok {
		m.VMID = types.Int64Value(n)
	}
	if got.State != "" {
		m.State = types.StringValue(got.State)
	}
	if got.Group != "" {
		m.Group = types.StringValue(got.Group)
	}
	if got.Comment != "" {
		m.Comment = types.StringValue(got.Comment)
	}
	if got.MaxRestart != nil {
		m.MaxRestart = types.Int64Value(*got.MaxRestart)
	}
	if got.MaxRelocate != nil {
		m.MaxRelocate = types.Int64Value(*got.MaxRelocate)
	}
	if got.Failback != nil {
		m.Failback = types.BoolValue(*got.Failback)
	}
	return m
}

// crmTarget is the state the HA manager shows once it acted on a request
// state; "" for ignored, which it does not act on.
func crmTarget(req string) string {
	switch req {
	case "started", "enabled", "":
		return "started"
	case "stopped", "disabled":
		return req
	}
	return ""
}

// waitCRM waits until the HA manager's status shows the service in the
// requested state, and fails on `error` or the timeout.
func waitCRM(ctx context.Context, c *pve.Client, sid, req string, timeout time.Duration) error {
	want := crmTarget(req)
	if want == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last := "unknown"
	start := time.Now()
	for {
		st, err := c.HAStatus(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("the HA manager did not report %s as %s within %s (last state: %s)", sid, want, timeout, last)
			}
			return err
		}
		for _, e := range st {
			if e.SID != sid {
				continue
			}
			last = e.State
			switch e.State {
			case want:
				return nil
			case "error":
				return fmt.Errorf("the HA manager put %s into the error state (it could not reach %s after max_restart and "+
					"max_relocate tries); see the HA log (journalctl -u pve-ha-crm -u pve-ha-lrm), fix the guest, then set "+
					"state = \"disabled\" and back to %q", sid, want, req)
			}
		}
		tflog.Debug(ctx, "waiting for the HA manager", map[string]any{"sid": sid, "want": want, "state": last})
		select {
		case <-ctx.Done():
			return fmt.Errorf("the HA manager did not report %s as %s within %s (last state: %s)", sid, want, timeout, last)
		case <-time.After(min(max(time.Since(start)/4, crmPollFirst), crmPollInterval)):
		}
	}
}
