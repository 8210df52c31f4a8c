package ha

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
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

const groupTypeName = "pve_ha_group"

var (
	_ resource.Resource                = (*groupResource)(nil)
	_ resource.ResourceWithConfigure   = (*groupResource)(nil)
	_ resource.ResourceWithImportState = (*groupResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*groupResource)(nil)
)

// NewGroupResource is the constructor the provider registers.
func NewGroupResource() resource.Resource {
	return &groupResource{framework.ResourceBase{TypeName: groupTypeName}}
}

type groupResource struct{ framework.ResourceBase }

type groupModel struct {
	ID         types.String `tfsdk:"id"`
	Group      types.String `tfsdk:"group"`
	Nodes      types.Map    `tfsdk:"nodes"`
	Restricted types.Bool   `tfsdk:"restricted"`
	NoFailback types.Bool   `tfsdk:"nofailback"`
	Comment    types.String `tfsdk:"comment"`
}

func (r *groupResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A PVE 8 HA group (`/etc/pve/ha/groups.cfg`, GUI: Datacenter → HA → Groups): the nodes, by " +
			"priority, on which the HA resources naming it (`pve_ha_resource.group`) run. PVE 9 migrated groups to " +
			"node-affinity rules and has none; the plan says so (use `pve_ha_rule`).\n\n" +
			"PVE refuses to delete a group while a resource uses it. Changing `group` replaces it (nothing but the group " +
			"is deleted). Credentials: an API token with `Sys.Console` on `/` (`Sys.Audit` to read).",
		Attributes: map[string]schema.Attribute{
			"id": framework.IDAttribute("The group id, same as `group`."),
			"group": schema.StringAttribute{
				Required: true, MarkdownDescription: "Group id: a letter, then letters, digits, `_` or `-`.",
				Validators:    []validator.String{stringvalidator.RegexMatches(configIDRE, "must start with a letter, followed by letters, digits, _ or - (at least 2 characters)")},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"nodes": schema.MapAttribute{
				Required: true, ElementType: types.Int64Type,
				MarkdownDescription: "Node name → priority. Resources run on the online node with the highest priority; 0 is the lowest (PVE writes no priority for it).",
				Validators: []validator.Map{mapvalidator.SizeAtLeast(1),
					mapvalidator.KeysAre(framework.NodeName()),
					mapvalidator.ValueInt64sAre(int64validator.AtLeast(0))},
			},
			"restricted": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				MarkdownDescription: "Resources may run only on the group's nodes; with none of them online they are stopped.",
			},
			"nofailback": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				MarkdownDescription: "Do not move resources back to a node of higher priority when it comes online.",
			},
			"comment": schema.StringAttribute{
				Optional: true, MarkdownDescription: "Description.",
				Validators: []validator.String{stringvalidator.LengthBetween(1, 4096)},
			},
		},
	}
}

// ModifyPlan refuses groups on PVE 9.
func (r *groupResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || !req.State.Raw.IsNull() || r.PD == nil || r.PD.Client == nil {
		return
	}
	pve9, release, err := releaseIs9(ctx, r.PD)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "PVE version", "", err)
		return
	}
	if pve9 {
		resp.Diagnostics.AddError("HA groups were migrated to rules",
			fmt.Sprintf("PVE %s has no HA groups (\"ha groups have been migrated to rules\"); use a pve_ha_rule of type node-affinity.", release))
	}
}

func (m *groupModel) request(ctx context.Context) (pve.HAGroup, diag.Diagnostics) {
	nodes, diags := encodeNodes(ctx, m.Nodes)
	return pve.HAGroup{Group: m.Group.ValueString(), Nodes: nodes, Restricted: m.Restricted.ValueBool(),
		NoFailback: m.NoFailback.ValueBool(), Comment: m.Comment.ValueString()}, diags
}

func groupFromAPI(g *pve.HAGroup) (*groupModel, diag.Diagnostics) {
	nodes, diags := decodeNodes(g.Nodes)
	m := &groupModel{ID: types.StringValue(g.Group), Group: types.StringValue(g.Group), Nodes: nodes,
		Restricted: types.BoolValue(g.Restricted), NoFailback: types.BoolValue(g.NoFailback), Comment: types.StringNull()}
	if g.Comment != "" {
		m.Comment = types.StringValue(g.Comment)
	}
	return m, diags
}

func (r *groupResource) write(ctx context.Context, action string, plan *groupModel, st stateSetter, diags *diag.Diagnostics) {
	if diags.HasError() {
		return
	}
	c := r.Client(diags)
	if c == nil {
		return
	}
	g, d := plan.request(ctx)
	diags.Append(d...)
	if diags.HasError() {
		return
	}
	var err error
	if action == "Create" {
		err = c.CreateHAGroup(ctx, g)
	} else {
		err = c.UpdateHAGroup(ctx, g)
	}
	if err != nil {
		framework.AddUnable(diags, action, "HA group", g.Group, err)
		return
	}
	got, err := c.HAGroup(ctx, g.Group)
	if err != nil {
		framework.AddUnable(diags, "Read", "HA group", g.Group, err)
		return
	}
	m, d := groupFromAPI(got)
	diags.Append(d...)
	diags.Append(st.Set(ctx, m)...)
}

func (r *groupResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan groupModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	r.write(ctx, "Create", &plan, &resp.State, &resp.Diagnostics)
}

func (r *groupResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan groupModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	r.write(ctx, "Update", &plan, &resp.State, &resp.Diagnostics)
}

func (r *groupResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var prior groupModel
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	c := r.Client(&resp.Diagnostics)
	if c == nil {
		return
	}
	id := prior.Group.ValueString()
	if id == "" {
		id = prior.ID.ValueString()
	}
	got, err := c.HAGroup(ctx, id)
	if pve.IsHANotFound(err) {
		tflog.Info(ctx, "HA group no longer exists; removing it from state", map[string]any{"group": id})
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "HA group", id, err)
		return
	}
	m, d := groupFromAPI(got)
	resp.Diagnostics.Append(d...)
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

func (r *groupResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var prior groupModel
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	c := r.Client(&resp.Diagnostics)
	if c == nil {
		return
	}
	if err := c.DeleteHAGroup(ctx, prior.Group.ValueString()); err != nil && !pve.IsHANotFound(err) {
		framework.AddUnable(&resp.Diagnostics, "Delete", "HA group", prior.Group.ValueString(), err)
	}
}

func (r *groupResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if !configIDRE.MatchString(req.ID) {
		resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf("Import a pve_ha_group by its group id, such as prefer_z2g4b; got %q.", req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("group"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
}
