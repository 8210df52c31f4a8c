package ceph

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/float64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
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

const poolTypeName = "pve_ceph_pool"

var (
	_ resource.Resource                   = (*poolResource)(nil)
	_ resource.ResourceWithConfigure      = (*poolResource)(nil)
	_ resource.ResourceWithImportState    = (*poolResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*poolResource)(nil)
	_ resource.ResourceWithValidateConfig = (*poolResource)(nil)
)

// NewPoolResource is the constructor the provider registers.
func NewPoolResource() resource.Resource {
	return &poolResource{ResourceBase: framework.ResourceBase{TypeName: poolTypeName}}
}

type poolResource struct{ framework.ResourceBase }

func (r *poolResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A replicated Ceph pool of the cluster's hyper-converged Ceph (`pveceph pool create`, GUI: Ceph → Pools), " +
			"optionally with the PVE RBD storage of the same name for guest disks.",
		Attributes: poolAttributes(),
	}
}

// poolAttributes are the pool's settings, grouped, and what Ceph reports.
func poolAttributes() map[string]schema.Attribute {
	attrs := map[string]schema.Attribute{}
	for _, group := range []map[string]schema.Attribute{
		poolIdentityAttributes(), poolRedundancyAttributes(), poolPlacementAttributes(), poolLifecycleAttributes(), poolReportedAttributes(),
	} {
		maps.Copy(attrs, group)
	}
	return attrs
}

// poolIdentityAttributes are the pool's name and the node whose API manages it.
func poolIdentityAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"id": framework.IDAttribute("The pool name."),
		"name": schema.StringAttribute{
			Required: true,
			MarkdownDescription: "Pool name, unique in the cluster; no `:`, `/` or whitespace. With `add_storages` it is also the storage id, " +
				"so it must then start with a letter and hold only letters, digits, `-`, `_` and `.`. " +
				"Ceph has no rename through PVE's API: a changed name is refused at plan (it is never a replacement).",
			Validators: []validator.String{stringvalidator.RegexMatches(poolNameRE, "must not contain ':', '/' or whitespace")},
		},
		"node": framework.NodeAttribute("Node whose API manages the pool; any node with Ceph configured. The pool is cluster-wide, "+
			"so changing the node only changes where the provider sends its requests.", framework.NodeInPlace),
	}
}

// poolRedundancyAttributes are how many copies Ceph keeps and needs for I/O.
func poolRedundancyAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"size": schema.Int64Attribute{
			Optional: true, Computed: true, Default: int64default.StaticInt64(defaultPoolSize),
			MarkdownDescription: "Number of copies of every object, 2 to 7 (default 3; Ceph places them on distinct hosts). " +
				"`size = 2` is a risk: with `min_size = 2` one lost copy stops I/O, and lowering `min_size` to 1 risks losing data. " +
				"`size = 1` keeps no redundancy and is refused. Changed in place; Ceph then adds or removes copies.",
			Validators: []validator.Int64{int64validator.Between(1, 7)},
		},
		"min_size": schema.Int64Attribute{
			Optional: true, Computed: true, Default: int64default.StaticInt64(defaultPoolMinSize),
			MarkdownDescription: "Copies that must be available for I/O, 1 to `size` (default 2). Below it Ceph blocks I/O on the " +
				"affected placement groups rather than accept writes it cannot replicate. `min_size = 1` allows writes to a " +
				"single copy, which is how data is lost when that disk fails before recovery; it is refused unless " +
				"`allow_min_size_1 = true`. Changed in place.",
			Validators: []validator.Int64{int64validator.Between(1, 7)},
		},
		"allow_min_size_1": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			MarkdownDescription: "Accept `min_size = 1` (default false). Only for a temporary emergency, such as letting PGs " +
				"that lost all but one copy serve I/O again; set `min_size` back as soon as Ceph has recovered.",
		},
	}
}

// poolPlacementAttributes are placement groups, autoscaler, application and CRUSH rule.
func poolPlacementAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"pg_num": schema.Int64Attribute{
			Optional: true, Computed: true,
			MarkdownDescription: "Number of placement groups, a power of two up to 32768. Unset, PVE creates 128 and the provider " +
				"reports what Ceph has. Must be left unset with `pg_autoscale_mode = \"on\"`, because the autoscaler then owns it " +
				"(steer it with `pg_num_min` or `target_size_ratio`). Changed in place: Ceph splits or merges PGs and moves " +
				"data gradually; the value reported is the count Ceph is moving to. Aim for about 100 PGs per OSD over all pools, " +
				"counting each copy (PGs × size ÷ OSDs); too many PGs cost OSD memory and CPU, too few spread data unevenly.",
			Validators: []validator.Int64{int64validator.Between(1, maxPoolPGNum), powerOfTwoValidator{}},
		},
		"pg_num_min": schema.Int64Attribute{
			Optional: true,
			MarkdownDescription: "Lowest PG count the autoscaler may choose, a power of two up to 32768 and not above `pg_num`. " +
				"Unset means Ceph's floor (32 for the autoscaler).",
			Validators: []validator.Int64{int64validator.Between(1, maxPoolPGNum), powerOfTwoValidator{}},
		},
		"pg_autoscale_mode": schema.StringAttribute{
			Optional: true, Computed: true, Default: stringdefault.StaticString("warn"),
			MarkdownDescription: "The PG autoscaler: `warn` (default, as PVE: it only raises a health warning when `pg_num` is " +
				"off by more than a factor of 3), `on` (it changes `pg_num` itself, moving data when it does), or `off`.",
			Validators: []validator.String{stringvalidator.OneOf("on", "off", "warn")},
		},
		"application": schema.StringAttribute{
			Optional: true, Computed: true, Default: stringdefault.StaticString("rbd"),
			MarkdownDescription: "What the pool holds: `rbd` (guest disks; default), `cephfs` or `rgw`. Ceph does not switch " +
				"an enabled application through PVE, so a change is refused at plan.",
			Validators: []validator.String{stringvalidator.OneOf("rbd", "cephfs", "rgw")},
		},
		"crush_rule": schema.StringAttribute{
			Optional: true, Computed: true,
			MarkdownDescription: "CRUSH rule that places the copies, such as `replicated_rule` (Ceph's default: one copy per host). " +
				"Changed in place; Ceph then moves the data the new rule places elsewhere.",
			Validators:    []validator.String{stringvalidator.LengthAtLeast(1)},
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
		},
		"target_size": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "Expected size of the pool's data for the autoscaler, in bytes or with `K`, `M`, `G` or `T` " +
				"(binary), such as `500G`. Conflicts with `target_size_ratio`. Removing it clears it in Ceph.",
			Validators: []validator.String{
				stringvalidator.RegexMatches(targetSizeRE, "must be a number of bytes, optionally with K, M, G or T, such as 500G"),
				stringvalidator.ConflictsWith(path.MatchRoot("target_size_ratio")),
			},
		},
		"target_size_ratio": schema.Float64Attribute{
			Optional: true,
			MarkdownDescription: "Expected share of the cluster's capacity for the autoscaler, relative to the other pools' " +
				"ratios (such as `1.0` for the only pool). Conflicts with `target_size`. Removing it clears it in Ceph.",
			Validators: []validator.Float64{float64validator.AtLeast(0)},
		},
	}
}

// poolLifecycleAttributes are what creating and destroying the pool also do, or refuse.
func poolLifecycleAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"add_storages": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			MarkdownDescription: "Also create the PVE storage for guest disks on the pool when creating it: type `rbd`, the pool's " +
				"name as storage id, content `images,rootdir`, `krbd` off (PVE's `add_storages`). Default false. Destroying the " +
				"pool then removes the pool's RBD storages too. PVE offers this only when a pool is created, so changing it later " +
				"is refused at plan; after an import, the first apply just records it.",
		},
		"deletion_protection": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(true),
			MarkdownDescription: "While true (the default), destroying the pool is refused at plan and at apply. Set it to false " +
				"and apply before destroying.",
		},
		"force_delete": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			MarkdownDescription: "Destroy the pool even while its RBD storage still holds guest disks (PVE's `force`). " +
				"Default false: PVE then refuses with `ceph pool '<name>' still in use by storage '<storage>'`. " +
				"The disks are lost with the pool.",
		},
	}
}

// poolReportedAttributes are what Ceph reports about the pool.
func poolReportedAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"pool_id": schema.Int64Attribute{
			Computed: true, MarkdownDescription: "Ceph's numeric pool id (the prefix of its PG ids).",
			PlanModifiers: []planmodifier.Int64{int64planmodifier.UseStateForUnknown()},
		},
		"autoscale_pg_num": schema.Int64Attribute{
			Computed:            true,
			MarkdownDescription: "The PG count the autoscaler considers right for the pool (`pg_num_final`), also in `warn` and `off` mode.",
		},
		"used_bytes": schema.Int64Attribute{
			Computed: true, MarkdownDescription: "Raw bytes the pool uses, all copies counted.",
		},
		"used_fraction": schema.Float64Attribute{
			Computed: true, MarkdownDescription: "Share of the pool's capacity in use, 0 to 1 (Ceph's `percent_used`).",
		},
	}
}

// ValidateConfig refuses unsafe or impossible combinations, naming the
// attribute and the fix.
func (r *poolResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m poolModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	known := func(v types.Int64) bool { return !v.IsNull() && !v.IsUnknown() }
	size, minSize := int64(defaultPoolSize), int64(defaultPoolMinSize)
	sizeKnown, minKnown := !m.Size.IsUnknown(), !m.MinSize.IsUnknown()
	if known(m.Size) {
		size = m.Size.ValueInt64()
	}
	if known(m.MinSize) {
		minSize = m.MinSize.ValueInt64()
	}
	if sizeKnown && size == 1 {
		resp.Diagnostics.AddAttributeError(path.Root("size"), "Pool without redundancy",
			"size = 1 keeps a single copy of every object: one failed disk loses data. Ceph refuses it without "+
				"mon_allow_pool_size_one and PVE cannot set it. Use size = 3 (or at least 2).")
	}
	if minKnown && minSize == 1 && !m.AllowMinSize1.IsUnknown() && !m.AllowMinSize1.ValueBool() {
		resp.Diagnostics.AddAttributeError(path.Root("min_size"), "Unsafe min_size",
			"min_size = 1 lets Ceph accept writes while only one copy is available; if that disk fails before recovery, "+
				"the writes are lost and PGs become incomplete. Use min_size = 2. If you need it as a temporary emergency "+
				"measure, also set allow_min_size_1 = true.")
	}
	if sizeKnown && minKnown && size > 1 && minSize > size {
		resp.Diagnostics.AddAttributeError(path.Root("min_size"), "min_size above size",
			fmt.Sprintf("min_size = %d exceeds size = %d: no placement group could ever serve I/O, and Ceph refuses it. "+
				"Set min_size to at most %d (2 for size 3).", minSize, size, size))
	}
	mode := m.PGAutoscaleMode
	if known(m.PGNum) && !mode.IsUnknown() && mode.ValueString() == "on" {
		resp.Diagnostics.AddAttributeError(path.Root("pg_num"), "pg_num with the autoscaler on",
			"With pg_autoscale_mode = \"on\" Ceph's autoscaler sets pg_num itself, so a configured pg_num would be "+
				"reverted on every apply, moving data each time. Leave pg_num unset (the provider reports Ceph's value), steer "+
				"the autoscaler with pg_num_min, target_size or target_size_ratio, or use pg_autoscale_mode = \"warn\".")
	}
	if known(m.PGNum) && known(m.PGNumMin) && m.PGNumMin.ValueInt64() > m.PGNum.ValueInt64() {
		resp.Diagnostics.AddAttributeError(path.Root("pg_num_min"), "pg_num_min above pg_num",
			fmt.Sprintf("pg_num_min = %d exceeds pg_num = %d, which Ceph refuses. Lower pg_num_min or raise pg_num.",
				m.PGNumMin.ValueInt64(), m.PGNum.ValueInt64()))
	}
	if !m.TargetSize.IsNull() && !m.TargetSize.IsUnknown() {
		if b, ok := parseTargetSize(m.TargetSize.ValueString()); ok && b == 0 {
			resp.Diagnostics.AddAttributeError(path.Root("target_size"), "Empty target_size",
				"target_size = 0 means no target size; leave target_size out instead.")
		}
	}
	if !m.TargetSizeRatio.IsNull() && !m.TargetSizeRatio.IsUnknown() && m.TargetSizeRatio.ValueFloat64() == 0 {
		resp.Diagnostics.AddAttributeError(path.Root("target_size_ratio"), "Empty target_size_ratio",
			"target_size_ratio = 0 means no target ratio; leave target_size_ratio out instead.")
	}
	if !m.AddStorages.IsUnknown() && m.AddStorages.ValueBool() && !m.Name.IsNull() && !m.Name.IsUnknown() &&
		!storageIDRE.MatchString(m.Name.ValueString()) {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Pool name is not a storage id",
			fmt.Sprintf("With add_storages the pool name %q is also the PVE storage id, which must start with a letter, end with "+
				"a letter or digit, and hold only letters, digits, '-', '_' and '.'. PVE refuses it with \"pool name contains "+
				"characters which are illegal for storage naming\".", m.Name.ValueString()))
	}
}

// ModifyPlan refuses what would need a replacement or lose data, and keeps
// pg_num from the state while nothing can change it.
func (r *poolResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	r.planWhole(ctx, req, resp)
	r.checkRefs(ctx, req, resp)
	if req.State.Raw.IsNull() {
		return // create
	}
	var state poolModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if req.Plan.Raw.IsNull() {
		if state.DeletionProtection.IsNull() || state.DeletionProtection.ValueBool() {
			framework.RefuseDestroy(&resp.Diagnostics, "deletion_protection", "Ceph pool "+state.Name.ValueString(),
				fmt.Sprintf("Destroying Ceph pool %s would delete all its data, and deletion_protection is true. To destroy it, "+
					"set deletion_protection = false and apply that first (with force_delete = true if guest disks on its "+
					"storage may be destroyed too). To stop managing the pool without destroying it, use a removed block "+
					"with lifecycle { destroy = false }.", state.Name.ValueString()))
		}
		return
	}
	var plan, config poolModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	refuseFixedPoolChanges(&plan, &state, &resp.Diagnostics)
	// Just imported (add_storages not recorded yet) and the configuration
	// leaves add_storages at its default: recording it would be the only
	// change, and would make the computed PG counts unknown, so an adopted
	// pool would never plan empty. Keep the state as it is.
	if state.AddStorages.IsNull() && config.AddStorages.IsNull() {
		resp.Diagnostics.Append(resp.Plan.Set(ctx, importedPlan(plan, &state))...)
		if resp.Plan.Raw.Equal(req.State.Raw) {
			return
		}
		resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	}
	// pg_num left to Ceph keeps its value unless the autoscaler may move it
	// or a raised pg_num_min makes the provider raise it.
	if config.PGNum.IsNull() && plan.PGNum.IsUnknown() && !state.PGNum.IsNull() {
		autoscaled := state.PGAutoscaleMode.ValueString() == "on" || plan.PGAutoscaleMode.IsUnknown() || plan.PGAutoscaleMode.ValueString() == "on"
		raised := plan.PGNumMin.IsUnknown() || (!plan.PGNumMin.IsNull() && plan.PGNumMin.ValueInt64() > state.PGNum.ValueInt64())
		if !autoscaled && !raised {
			resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("pg_num"), state.PGNum)...)
		}
	}
}

// refuseFixedPoolChanges refuses changes of what an existing pool cannot
// change: its name, its application and add_storages.
func refuseFixedPoolChanges(plan, state *poolModel, diags *diag.Diagnostics) {
	if !plan.Name.IsUnknown() && plan.Name.ValueString() != state.Name.ValueString() {
		framework.RefuseChange(diags, "name", "a Ceph pool",
			fmt.Sprintf("PVE's API has no rename for Ceph pools, and replacing pool %s with a new pool %s would destroy its data, "+
				"so the provider does neither. Keep name = %q. To rename, run `ceph osd pool rename %s %s` on a node (and "+
				"update the storage's pool), then change name and import the pool again.",
				state.Name.ValueString(), plan.Name.ValueString(), state.Name.ValueString(), state.Name.ValueString(), plan.Name.ValueString()))
	}
	if !state.Application.IsNull() && !plan.Application.IsUnknown() && plan.Application.ValueString() != state.Application.ValueString() {
		framework.RefuseChange(diags, "application", "a Ceph pool",
			fmt.Sprintf("Pool %s holds %s data; Ceph refuses to enable another application on it through PVE, and replacing "+
				"the pool would destroy its data. Keep application = %q, or create a separate pool.",
				state.Name.ValueString(), state.Application.ValueString(), state.Application.ValueString()))
	}
	if !state.AddStorages.IsNull() && !plan.AddStorages.IsUnknown() && plan.AddStorages.ValueBool() != state.AddStorages.ValueBool() {
		framework.RefuseChange(diags, "add_storages", "a Ceph pool",
			fmt.Sprintf("PVE creates the pool's RBD storage only together with the pool, so add_storages cannot change for the "+
				"existing pool %s. Keep add_storages = %t and manage the storage separately (Datacenter → Storage).",
				state.Name.ValueString(), state.AddStorages.ValueBool()))
	}
}

// importedPlan is plan with add_storages left unrecorded and the values
// Ceph computes taken from state: the plan of a just imported pool whose
// configuration changes nothing else.
func importedPlan(plan poolModel, state *poolModel) *poolModel {
	plan.AddStorages = types.BoolNull()
	if plan.PGNum.IsUnknown() {
		plan.PGNum = state.PGNum
	}
	if plan.AutoscalePGNum.IsUnknown() {
		plan.AutoscalePGNum = state.AutoscalePGNum
	}
	if plan.UsedBytes.IsUnknown() {
		plan.UsedBytes = state.UsedBytes
	}
	if plan.UsedFraction.IsUnknown() {
		plan.UsedFraction = state.UsedFraction
	}
	if plan.PoolID.IsUnknown() {
		plan.PoolID = state.PoolID
	}
	if plan.CrushRule.IsUnknown() {
		plan.CrushRule = state.CrushRule
	}
	return &plan
}

func (r *poolResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan poolModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	name, node := plan.Name.ValueString(), plan.Node.ValueString()
	c := r.NodeClient(ctx, node, &resp.Diagnostics)
	if c == nil {
		return
	}
	// PVE applies the settings to an existing pool of that name instead of
	// failing; adopting it silently would later let a destroy delete it.
	if _, err := c.CephPool(ctx, node, name); err == nil {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Ceph pool already exists",
			fmt.Sprintf("A Ceph pool named %s already exists. Import it instead of creating it: terraform import %s.<name> %s/%s",
				name, poolTypeName, node, name))
		return
	} else if !errors.Is(err, pve.ErrNotFound) {
		framework.AddUnable(&resp.Diagnostics, "Create", "Ceph pool", name, err)
		return
	}
	tflog.Info(ctx, "creating Ceph pool", map[string]any{"pool": name, "node": node})
	// A lost answer is followed through the worker it started, re-POSTed
	// only when there is none.
	upid, err := c.StartTask(ctx, node, "cephcreatepool", name, func() (string, error) {
		return c.CreateCephPool(ctx, node, name, plan.createRequest())
	})
	r.PD.Reads.Invalidate(framework.CephPoolsCacheKey)
	if _, err := c.Await(ctx, upid, err); err != nil {
		// The worker's first step makes the pool, the rest sets it up
		// (API2/Ceph/Pool.pm createpool: create_pool, then the storages),
		// and nothing removes it on failure. Absent before, the pool is
		// this create's: adopted (what the worker did not finish shows as
		// a change in the next plan). A tainted pool would be destroyed by
		// the next apply, which deletion_protection refuses.
		if _, gerr := c.CephPool(ctx, node, name); gerr != nil || !framework.FailedTask(err) {
			framework.AddUnable(&resp.Diagnostics, "Create", "Ceph pool", name, err)
			return
		}
		framework.WarnAdopted(&resp.Diagnostics, "Ceph pool", name, err)
	}
	r.finishWrite(ctx, c, "Create", &plan, &resp.State, &resp.Diagnostics)
}

// finishWrite reads the pool back, puts min_size right where PVE's
// set_pool skipped it after a size change, and stores the result.
func (r *poolResource) finishWrite(ctx context.Context, c *pve.Client, action string, plan *poolModel, st stateSetter, diags *diag.Diagnostics) {
	name, node := plan.Name.ValueString(), plan.Node.ValueString()
	p, err := c.CephPool(ctx, node, name)
	if err != nil {
		framework.AddUnable(diags, "Read", "Ceph pool", name, err)
		return
	}
	// PVE compares each key with the pool before the first change, and a
	// new size makes Ceph recalculate min_size: an unchanged min_size sent
	// together with a new size is skipped and lost.
	if want := plan.MinSize; !want.IsUnknown() && !want.IsNull() && p.MinSize != want.ValueInt64() {
		tflog.Info(ctx, "setting min_size again after the size change reset it", map[string]any{"pool": name, "min_size": want.ValueInt64(), "reset_to": p.MinSize})
		n := want.ValueInt64()
		upid, err := c.UpdateCephPool(ctx, node, name, pve.CephPoolRequest{MinSize: &n})
		if _, err := c.Await(ctx, upid, err); err != nil {
			framework.AddUnable(diags, action, "Ceph pool", name, fmt.Errorf("set min_size = %d after the size change: %w", n, err))
			return
		}
		if p, err = c.CephPool(ctx, node, name); err != nil {
			framework.AddUnable(diags, "Read", "Ceph pool", name, err)
			return
		}
	}
	// pg_num as planned, or unset at create PVE's default (what was sent).
	want := int64(0)
	if !plan.PGNum.IsUnknown() && !plan.PGNum.IsNull() {
		want = plan.PGNum.ValueInt64()
	} else if action == "Create" {
		want = defaultPoolPGNum
		if n := plan.createRequest().PGNum; n != nil {
			want = *n
		}
	}
	if p, err = r.pgNumAsPlanned(ctx, c, plan, p, want); err != nil {
		framework.AddUnable(diags, action, "Ceph pool", name, err)
		return
	}
	var state poolModel
	state.fromAPI(p, node, plan)
	diags.Append(st.Set(ctx, &state)...)
}

// pgNumAsPlanned sets pg_num to want again where PVE's set_pool skipped
// it: set_pool compares the request with the pool's actual pg_num, not with
// where Ceph is taking it. That happens twice over:
//   - PVE's create_pool makes the pool in the cluster's default autoscale
//     mode (on) and sets the planned mode after it, so an autoscaler pass in
//     between leaves its own target while the actual pg_num still equals the
//     planned one;
//   - pg_num set back to where a split or merge under way still is: asked
//     for 128 while merging from 128 to 64, PVE says "skipping 'pg_num', did
//     not change" and Ceph goes on to 64 (real Ceph 16, make testlab).
//
// With SSH, Ceph's own command sets it at once. Without, the set goes
// through PVE once Ceph has taken its first step away from want.
func (r *poolResource) pgNumAsPlanned(ctx context.Context, c *pve.Client, plan *poolModel, p *pve.CephPool, want int64) (*pve.CephPool, error) {
	if want == 0 || plan.PGAutoscaleMode.ValueString() == "on" || pgNumTarget(p) == want {
		return p, nil
	}
	name, node := plan.Name.ValueString(), plan.Node.ValueString()
	tflog.Info(ctx, "PVE skipped pg_num while Ceph is taking the pool elsewhere; setting it again",
		map[string]any{"pool": name, "pg_num": want, "pg_num_now": p.PGNum, "ceph_target": pgNumTarget(p)})
	if r.PD.NodeExec != nil {
		if _, err := (cephCLI{ex: r.PD.NodeExec, node: node}).run(ctx, "osd", "pool", "set", name, "pg_num", strconv.FormatInt(want, 10)); err != nil {
			return nil, fmt.Errorf("set pg_num = %d again (Ceph is taking the pool to %d): %w", want, pgNumTarget(p), err)
		}
		return c.CephPool(ctx, node, name)
	}
	var err error
	for p.PGNum == want && pgNumTarget(p) != want {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("pool %s is on its way to pg_num %d and Ceph has not begun moving from %d, so PVE cannot set pg_num = %d "+
				"yet (with SSH configured, the provider sets it through Ceph at once): %w", name, pgNumTarget(p), p.PGNum, want, ctx.Err())
		case <-time.After(time.Second):
		}
		if p, err = c.CephPool(ctx, node, name); err != nil {
			return nil, err
		}
	}
	if pgNumTarget(p) == want {
		return p, nil
	}
	upid, err := c.UpdateCephPool(ctx, node, name, pve.CephPoolRequest{PGNum: &want})
	if _, err := c.Await(ctx, upid, err); err != nil {
		return nil, fmt.Errorf("set pg_num = %d again (Ceph is taking the pool to %d): %w", want, pgNumTarget(p), err)
	}
	return c.CephPool(ctx, node, name)
}

type stateSetter interface {
	Set(context.Context, any) diag.Diagnostics
}

func (r *poolResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var prior poolModel
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	name, node := prior.Name.ValueString(), prior.Node.ValueString()
	c := r.NodeClient(ctx, node, &resp.Diagnostics)
	if c == nil {
		return
	}
	p, err := c.CephPool(ctx, node, name)
	if errors.Is(err, pve.ErrNotFound) {
		tflog.Warn(ctx, "Ceph pool is gone; removing it from the state", map[string]any{"pool": name})
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "Ceph pool", name, err)
		return
	}
	var state poolModel
	state.fromAPI(p, node, &prior)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *poolResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state poolModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	name, node := state.Name.ValueString(), plan.Node.ValueString()
	c := r.NodeClient(ctx, node, &resp.Diagnostics)
	if c == nil {
		return
	}
	// Before anything else: a lower pg_num_min, so that a lower pg_num is
	// not refused against the old one (PVE applies pg_num first).
	steps := updateSteps(&plan, &state)
	for i, req := range steps {
		tflog.Info(ctx, "updating Ceph pool", map[string]any{"pool": name, "step": i + 1, "of": len(steps)})
		upid, err := c.UpdateCephPool(ctx, node, name, req)
		if _, err := c.Await(ctx, upid, err); err != nil {
			framework.AddUnable(&resp.Diagnostics, "Update", "Ceph pool", name, err)
			if p, gerr := c.CephPool(ctx, node, name); gerr == nil {
				var st poolModel
				st.fromAPI(p, node, &state)
				resp.Diagnostics.Append(resp.State.Set(ctx, &st)...)
			}
			return
		}
	}
	r.finishWrite(ctx, c, "Update", &plan, &resp.State, &resp.Diagnostics)
}

// updateSteps are the PUTs that take the pool from state to plan: only
// what changed, in one request unless pg_num_min has to go down first.
func updateSteps(plan, state *poolModel) []pve.CephPoolRequest {
	var req pve.CephPoolRequest
	req.Size = poolIntChange(plan.Size, state.Size, false)
	req.MinSize = poolIntChange(plan.MinSize, state.MinSize, false)
	req.PGNum = poolIntChange(plan.PGNum, state.PGNum, false)
	req.PGNumMin = poolIntChange(plan.PGNumMin, state.PGNumMin, true)
	// Ceph refuses pg_num_min above pg_num: raise pg_num with it.
	if req.PGNumMin != nil && req.PGNum == nil && plan.PGNum.IsUnknown() && *req.PGNumMin > state.PGNum.ValueInt64() {
		n := *req.PGNumMin
		req.PGNum = &n
	}
	req.PGAutoscaleMode = poolStringChange(plan.PGAutoscaleMode, state.PGAutoscaleMode)
	req.Application = poolStringChange(plan.Application, state.Application)
	req.CrushRule = poolStringChange(plan.CrushRule, state.CrushRule)
	req.TargetSize = targetSizeChange(plan.TargetSize, state.TargetSize)
	req.TargetSizeRatio = targetRatioChange(plan.TargetSizeRatio, state.TargetSizeRatio)
	if req == (pve.CephPoolRequest{}) {
		return nil
	}
	if req.PGNumMin != nil && !state.PGNumMin.IsNull() && *req.PGNumMin < state.PGNumMin.ValueInt64() && req.PGNum != nil {
		first := pve.CephPoolRequest{PGNumMin: req.PGNumMin}
		req.PGNumMin = nil
		return []pve.CephPoolRequest{first, req}
	}
	return []pve.CephPoolRequest{req}
}

// poolIntChange is the value to send for an integer setting: nil when
// unchanged or unknown, 0 to clear a removed clearable one.
func poolIntChange(p, s types.Int64, clearable bool) *int64 {
	switch {
	case p.IsUnknown():
		return nil
	case p.IsNull():
		if clearable && !s.IsNull() {
			zero := int64(0)
			return &zero
		}
		return nil
	case s.IsNull() || p.ValueInt64() != s.ValueInt64():
		n := p.ValueInt64()
		return &n
	}
	return nil
}

// poolStringChange is the value to send for a string setting, "" when
// unchanged, unknown or removed (it then stays as it is).
func poolStringChange(p, s types.String) string {
	if p.IsUnknown() || p.IsNull() || p.ValueString() == s.ValueString() {
		return ""
	}
	return p.ValueString()
}

// targetSizeChange is the target_size to send: "" when unchanged, "0" to
// clear it.
func targetSizeChange(p, s types.String) string {
	switch {
	case p.IsUnknown():
	case p.IsNull():
		if !s.IsNull() {
			return "0"
		}
	default:
		pb, _ := parseTargetSize(p.ValueString())
		sb, _ := parseTargetSize(s.ValueString())
		if s.IsNull() || pb != sb {
			return p.ValueString()
		}
	}
	return ""
}

// targetRatioChange is the target_size_ratio to send: nil when unchanged,
// 0 to clear it.
func targetRatioChange(p, s types.Float64) *float64 {
	switch {
	case p.IsUnknown():
	case p.IsNull():
		if !s.IsNull() {
			zero := 0.0
			return &zero
		}
	case s.IsNull() || p.ValueFloat64() != s.ValueFloat64():
		f := p.ValueFloat64()
		return &f
	}
	return nil
}

func (r *poolResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state poolModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	name, node := state.Name.ValueString(), state.Node.ValueString()
	if state.DeletionProtection.IsNull() || state.DeletionProtection.ValueBool() {
		framework.RefuseDestroy(&resp.Diagnostics, "deletion_protection", "Ceph pool "+name,
			"deletion_protection is true. Set deletion_protection = false and apply that before destroying the pool; destroying it deletes all its data.")
		return
	}
	c := r.NodeClient(ctx, node, &resp.Diagnostics)
	if c == nil {
		return
	}
	if _, err := c.CephPool(ctx, node, name); errors.Is(err, pve.ErrNotFound) {
		return
	} else if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Delete", "Ceph pool", name, err)
		return
	}
	removeStorages, force := state.AddStorages.ValueBool(), state.ForceDelete.ValueBool()
	tflog.Info(ctx, "destroying Ceph pool", map[string]any{"pool": name, "remove_storages": removeStorages, "force": force})
	upid, err := c.DestroyCephPool(ctx, node, name, removeStorages, force)
	_, err = c.Await(ctx, upid, err)
	r.PD.Reads.Invalidate(framework.CephPoolsCacheKey)
	switch {
	case err == nil:
	case strings.Contains(err.Error(), "unrecognized pool"):
		// Gone meanwhile.
	case strings.Contains(err.Error(), "still in use by storage"):
		framework.AddUnable(&resp.Diagnostics, "Delete", "Ceph pool", name, fmt.Errorf("%w\n\nGuest disks (RBD images) are "+
			"still on the pool's storage. Move or delete them first; or set force_delete = true, apply, and destroy again "+
			"to destroy them together with the pool", err))
	default:
		framework.AddUnable(&resp.Diagnostics, "Delete", "Ceph pool", name, err)
	}
}

// ImportState takes "<node>/<pool>".
func (r *poolResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	node, name, ok := strings.Cut(req.ID, "/")
	if !ok || node == "" || name == "" || !poolNameRE.MatchString(name) {
		resp.Diagnostics.AddError("Invalid import ID",
			fmt.Sprintf("Import a Ceph pool as <node>/<pool>, such as z2g4a/ceph (the node whose API to use); got %q.", req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), name)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), name)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("node"), node)...)
}
