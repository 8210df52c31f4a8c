package ha

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

const ruleTypeName = "pve_ha_rule"

var (
	_ resource.Resource                   = (*ruleResource)(nil)
	_ resource.ResourceWithConfigure      = (*ruleResource)(nil)
	_ resource.ResourceWithImportState    = (*ruleResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*ruleResource)(nil)
	_ resource.ResourceWithValidateConfig = (*ruleResource)(nil)

	configIDRE = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_-]+$`)
	ruleSIDRE  = regexp.MustCompile(`^[a-z]+:\S+$`)
)

// NewRuleResource is the constructor the provider registers.
func NewRuleResource() resource.Resource {
	return &ruleResource{framework.ResourceBase{TypeName: ruleTypeName}}
}

type ruleResource struct{ framework.ResourceBase }

type ruleModel struct {
	ID        types.String `tfsdk:"id"`
	Rule      types.String `tfsdk:"rule"`
	Type      types.String `tfsdk:"type"`
	Resources types.Set    `tfsdk:"resources"`
	Nodes     types.Map    `tfsdk:"nodes"`
	Strict    types.Bool   `tfsdk:"strict"`
	Affinity  types.String `tfsdk:"affinity"`
	Disable   types.Bool   `tfsdk:"disable"`
	Comment   types.String `tfsdk:"comment"`
}

func (r *ruleResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A PVE 9 HA rule (`/etc/pve/ha/rules.cfg`, GUI: Datacenter → HA → Affinity Rules): where HA " +
			"resources may run. A `node-affinity` rule keeps its resources on `nodes` (by priority; only there with `strict`), " +
			"a `resource-affinity` rule keeps its resources together (`positive`) or apart (`negative`). PVE 8 has no rules " +
			"(use `pve_ha_group`); the plan says so.",
		Attributes: map[string]schema.Attribute{
			"id": framework.IDAttribute("The rule id, same as `rule`."),
			"rule": schema.StringAttribute{
				Required: true, MarkdownDescription: "Rule id: a letter, then letters, digits, `_` or `-`.",
				Validators:    []validator.String{stringvalidator.RegexMatches(configIDRE, "must start with a letter, followed by letters, digits, _ or - (at least 2 characters)")},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"type": schema.StringAttribute{
				Required: true, MarkdownDescription: "`node-affinity` or `resource-affinity`; PVE cannot change a rule's type.",
				Validators:    []validator.String{stringvalidator.OneOf("node-affinity", "resource-affinity")},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"resources": schema.SetAttribute{
				Required: true, ElementType: types.StringType,
				MarkdownDescription: "The HA resources (sids such as `vm:100`) the rule applies to.",
				Validators: []validator.Set{setvalidator.SizeAtLeast(1),
					setvalidator.ValueStringsAre(stringvalidator.RegexMatches(ruleSIDRE, "must be an HA resource id such as vm:100"))},
			},
			"nodes": schema.MapAttribute{
				Optional: true, ElementType: types.Int64Type,
				MarkdownDescription: "`node-affinity` only (required there): node name → priority. Resources run on the online " +
					"node with the highest priority; 0 is the lowest (PVE writes no priority for it).",
				Validators: []validator.Map{mapvalidator.SizeAtLeast(1),
					mapvalidator.KeysAre(framework.NodeName()),
					mapvalidator.ValueInt64sAre(int64validator.AtLeast(0))},
			},
			"strict": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				MarkdownDescription: "`node-affinity` only: the resources may run only on `nodes`; with none of them online they " +
					"are stopped. Default `false`: `nodes` are preferred, any node is used when none is available.",
			},
			"affinity": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "`resource-affinity` only (required there): `positive` keeps the resources on one node, `negative` on different nodes.",
				Validators:          []validator.String{stringvalidator.OneOf("positive", "negative")},
			},
			"disable": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				MarkdownDescription: "Keep the rule but do not apply it.",
			},
			"comment": schema.StringAttribute{
				Optional: true, MarkdownDescription: "Description.",
				Validators: []validator.String{stringvalidator.LengthBetween(1, 4096)},
			},
		},
	}
}

func (r *ruleResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m ruleModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || m.Type.IsUnknown() {
		return
	}
	switch m.Type.ValueString() {
	case "node-affinity":
		if m.Nodes.IsNull() {
			resp.Diagnostics.AddAttributeError(path.Root("nodes"), "Missing nodes", "A node-affinity rule needs nodes (node name → priority).")
		}
		if !m.Affinity.IsNull() {
			resp.Diagnostics.AddAttributeError(path.Root("affinity"), "affinity is for resource-affinity rules",
				"Remove affinity: a node-affinity rule places its resources on nodes.")
		}
	case "resource-affinity":
		if m.Affinity.IsNull() {
			resp.Diagnostics.AddAttributeError(path.Root("affinity"), "Missing affinity",
				"A resource-affinity rule needs affinity = \"positive\" (together) or \"negative\" (apart).")
		}
		if !m.Nodes.IsNull() {
			resp.Diagnostics.AddAttributeError(path.Root("nodes"), "nodes is for node-affinity rules",
				"Remove nodes, or use a separate node-affinity rule for the same resources.")
		}
		if !m.Strict.IsNull() && !m.Strict.IsUnknown() && m.Strict.ValueBool() {
			resp.Diagnostics.AddAttributeError(path.Root("strict"), "strict is for node-affinity rules", "Remove strict.")
		}
		if !m.Resources.IsUnknown() && len(m.Resources.Elements()) == 1 {
			resp.Diagnostics.AddAttributeError(path.Root("resources"), "Too few resources",
				"A resource-affinity rule needs at least two resources; PVE ignores it otherwise (\"rule is ineffective as there are less than two resources\").")
		}
	}
}

// ModifyPlan refuses rules on PVE 8.
func (r *ruleResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || !req.State.Raw.IsNull() || r.PD == nil || r.PD.Client == nil {
		return
	}
	pve9, release, err := releaseIs9(ctx, r.PD)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "PVE version", "", err)
		return
	}
	if !pve9 {
		resp.Diagnostics.AddError("HA rules need PVE 9",
			fmt.Sprintf("PVE %s has no HA rules; place HA resources with a pve_ha_group (group on pve_ha_resource) instead.", release))
	}
}

func (m *ruleModel) request(ctx context.Context) (pve.HARule, diag.Diagnostics) {
	var diags diag.Diagnostics
	rule := pve.HARule{Rule: m.Rule.ValueString(), Type: m.Type.ValueString(), Strict: m.Strict.ValueBool(),
		Affinity: m.Affinity.ValueString(), Disable: m.Disable.ValueBool(), Comment: m.Comment.ValueString()}
	diags.Append(m.Resources.ElementsAs(ctx, &rule.Resources, false)...)
	sort.Strings(rule.Resources)
	if !m.Nodes.IsNull() {
		nodes, d := encodeNodes(ctx, m.Nodes)
		diags.Append(d...)
		rule.Nodes = nodes
	}
	return rule, diags
}

func (r *ruleResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan ruleModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	c := r.Client(&resp.Diagnostics)
	if c == nil {
		return
	}
	rule, d := plan.request(ctx)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := c.CreateHARule(ctx, rule); err != nil {
		framework.AddUnable(&resp.Diagnostics, "Create", "HA rule", rule.Rule, err)
		return
	}
	r.readInto(ctx, c, rule.Rule, &resp.State, &resp.Diagnostics)
}

func (r *ruleResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan ruleModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	c := r.Client(&resp.Diagnostics)
	if c == nil {
		return
	}
	rule, d := plan.request(ctx)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := c.UpdateHARule(ctx, rule); err != nil {
		framework.AddUnable(&resp.Diagnostics, "Update", "HA rule", rule.Rule, err)
		return
	}
	r.readInto(ctx, c, rule.Rule, &resp.State, &resp.Diagnostics)
}

type stateSetter interface {
	Set(context.Context, any) diag.Diagnostics
}

// readInto stores what PVE reports after a write.
func (r *ruleResource) readInto(ctx context.Context, c *pve.Client, id string, st stateSetter, diags *diag.Diagnostics) {
	got, err := c.HARule(ctx, id)
	if err != nil {
		framework.AddUnable(diags, "Read", "HA rule", id, err)
		return
	}
	m, d := ruleFromAPI(got)
	diags.Append(d...)
	diags.Append(st.Set(ctx, m)...)
	warnRuleErrors(got, diags)
}

// warnRuleErrors says when PVE ignores the rule because it is infeasible.
func warnRuleErrors(got *pve.HARule, diags *diag.Diagnostics) {
	if len(got.Errors) == 0 {
		return
	}
	keys := make([]string, 0, len(got.Errors))
	for k := range got.Errors {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(got.Errors[k], ", "))
	}
	diags.AddWarning("HA rule "+got.Rule+" is not applied",
		"PVE reports the rule as infeasible and ignores it until this is fixed:\n"+b.String())
}

func ruleFromAPI(got *pve.HARule) (*ruleModel, diag.Diagnostics) {
	var diags diag.Diagnostics
	m := &ruleModel{ID: types.StringValue(got.Rule), Rule: types.StringValue(got.Rule), Type: types.StringValue(got.Type),
		Nodes: types.MapNull(types.Int64Type), Strict: types.BoolValue(got.Strict), Affinity: types.StringNull(),
		Disable: types.BoolValue(got.Disable), Comment: types.StringNull()}
	res, d := types.SetValueFrom(context.Background(), types.StringType, got.Resources)
	diags.Append(d...)
	m.Resources = res
	if got.Nodes != "" {
		nodes, d := decodeNodes(got.Nodes)
		diags.Append(d...)
		m.Nodes = nodes
	}
	if got.Affinity != "" {
		m.Affinity = types.StringValue(got.Affinity)
	}
	if got.Comment != "" {
		m.Comment = types.StringValue(got.Comment)
	}
	return m, diags
}

func (r *ruleResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var prior ruleModel
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	c := r.Client(&resp.Diagnostics)
	if c == nil {
		return
	}
	id := prior.Rule.ValueString()
	if id == "" {
		id = prior.ID.ValueString()
	}
	got, err := c.HARule(ctx, id)
	if pve.IsHANotFound(err) {
		tflog.Info(ctx, "HA rule no longer exists; removing it from state", map[string]any{"rule": id})
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "HA rule", id, err)
		return
	}
	m, d := ruleFromAPI(got)
	resp.Diagnostics.Append(d...)
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
	warnRuleErrors(got, &resp.Diagnostics)
}

func (r *ruleResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var prior ruleModel
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	c := r.Client(&resp.Diagnostics)
	if c == nil {
		return
	}
	if err := c.DeleteHARule(ctx, prior.Rule.ValueString()); err != nil && !pve.IsHANotFound(err) {
		framework.AddUnable(&resp.Diagnostics, "Delete", "HA rule", prior.Rule.ValueString(), err)
	}
}

func (r *ruleResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if !configIDRE.MatchString(req.ID) {
		resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf("Import a pve_ha_rule by its rule id, such as vm100_on_z2g4b; got %q.", req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("rule"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
}
