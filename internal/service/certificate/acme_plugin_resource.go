package certificate

import (
	"context"
	"errors"
	"sort"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

const acmePluginTypeName = "pve_acme_plugin"

var (
	_ resource.ResourceWithConfigure        = (*acmePluginResource)(nil)
	_ resource.ResourceWithImportState      = (*acmePluginResource)(nil)
	_ resource.ResourceWithConfigValidators = (*acmePluginResource)(nil)
)

// NewACMEPluginResource is the constructor the provider registers.
func NewACMEPluginResource() resource.Resource {
	return &acmePluginResource{framework.ResourceBase{TypeName: acmePluginTypeName}}
}

type acmePluginResource struct{ framework.ResourceBase }

type acmePluginModel struct {
	ID              types.String `tfsdk:"id"`
	Type            types.String `tfsdk:"type"`
	API             types.String `tfsdk:"api"`
	Data            types.Map    `tfsdk:"data"`
	ValidationDelay types.Int64  `tfsdk:"validation_delay"`
	Nodes           types.Set    `tfsdk:"nodes"`
	Disable         types.Bool   `tfsdk:"disable"`
}

func (r *acmePluginResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	resp.Schema = schema.Schema{
		MarkdownDescription: "An ACME challenge plugin (Datacenter → ACME → Challenge Plugins), stored cluster-wide in " +
			"`/etc/pve/priv/acme/plugins.cfg`. A `dns` plugin proves domain ownership through a DNS provider's API " +
			"(the acme.sh DNS API scripts PVE ships, such as `cf`, `pdns` or `nsupdate`); nodes name it in `pve_node_acme`. " +
			"PVE's built-in `standalone` plugin (HTTP-01 on port 80) always exists and needs no resource.\n\n" +
			"Options left out are deleted from PVE, so PVE's defaults apply. Changes made outside Terraform show up in the next plan.\n\n" +
			"Credentials: an API token with `Sys.Modify` on `/` is enough.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Required: true, PlanModifiers: replace,
				MarkdownDescription: "Plugin name, such as `lab-dns`. Changing it creates a new plugin.",
				Validators: []validator.String{
					stringvalidator.RegexMatches(configIDRE, "must start with a letter and contain only letters, digits, '-' and '_' (at least two characters)"),
					stringvalidator.NoneOf("standalone"),
				},
			},
			"type": schema.StringAttribute{
				Required: true, PlanModifiers: replace,
				MarkdownDescription: "`dns` (DNS-01 through a DNS API) or `standalone` (HTTP-01 on port 80). Changing it creates a new plugin.",
				Validators:          []validator.String{stringvalidator.OneOf("dns", "standalone")},
			},
			"api": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "The acme.sh DNS API of a `dns` plugin, such as `cf` (Cloudflare), `pdns` (PowerDNS) or `nsupdate` (RFC 2136).",
				Validators:          []validator.String{stringvalidator.RegexMatches(acmeAPIRE, "must be an acme.sh DNS API name such as cf, pdns or nsupdate")},
			},
			"data": schema.MapAttribute{
				ElementType: types.StringType, Optional: true, Sensitive: true,
				MarkdownDescription: "Settings of the DNS API as acme.sh expects them, such as `{ CF_Token = \"...\" }`. PVE stores them in a root-only file; they are sensitive here.",
				Validators:          []validator.Map{mapvalidator.SizeAtLeast(1), mapvalidator.KeysAre(stringvalidator.RegexMatches(dataKeyRE, "must be an acme.sh variable name such as CF_Token"))},
			},
			"validation_delay": schema.Int64Attribute{
				Optional:            true,
				MarkdownDescription: "Seconds to wait after publishing the DNS record before the CA checks it (0 to 172800; PVE's default 30).",
				Validators:          []validator.Int64{int64validator.Between(0, 172800)},
			},
			"nodes": schema.SetAttribute{
				ElementType: types.StringType, Optional: true,
				MarkdownDescription: "Nodes the plugin is limited to (PVE's default: all).",
				Validators:          []validator.Set{setvalidator.SizeAtLeast(1), setvalidator.ValueStringsAre(framework.NodeName())},
			},
			"disable": schema.BoolAttribute{
				Optional:            true,
				MarkdownDescription: "Disable the plugin without deleting it.",
			},
		},
	}
}

// ConfigValidators: a DNS plugin needs its API; a standalone one has none.
func (r *acmePluginResource) ConfigValidators(context.Context) []resource.ConfigValidator {
	return []resource.ConfigValidator{dnsPluginValidator{}}
}

type dnsPluginValidator struct{}

func (dnsPluginValidator) Description(context.Context) string {
	return "api is required for dns plugins and not allowed for standalone ones"
}
func (v dnsPluginValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (dnsPluginValidator) ValidateResource(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m acmePluginModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || m.Type.IsUnknown() {
		return
	}
	switch m.Type.ValueString() {
	case "dns":
		if m.API.IsNull() {
			resp.Diagnostics.AddAttributeError(path.Root("api"), "Missing DNS API",
				"A dns plugin needs `api`, the acme.sh DNS API of your DNS provider, such as \"cf\" or \"pdns\".")
		}
	case "standalone":
		for _, a := range []struct {
			name string
			set  bool
		}{{"api", !m.API.IsNull()}, {"data", !m.Data.IsNull()}, {"validation_delay", !m.ValidationDelay.IsNull()}} {
			if a.set {
				resp.Diagnostics.AddAttributeError(path.Root(a.name), "Not a DNS plugin",
					"`"+a.name+"` applies to dns plugins only; remove it or set type = \"dns\".")
			}
		}
	}
}

func (m *acmePluginModel) plugin(ctx context.Context) (pve.ACMEPlugin, diag.Diagnostics) {
	var diags diag.Diagnostics
	p := pve.ACMEPlugin{ID: m.ID.ValueString(), Type: m.Type.ValueString(), API: m.API.ValueString(),
		ValidationDelay: m.ValidationDelay.ValueInt64Pointer(), Disable: m.Disable.ValueBool()}
	if !m.Data.IsNull() {
		diags.Append(m.Data.ElementsAs(ctx, &p.Data, false)...)
	}
	if !m.Nodes.IsNull() {
		diags.Append(m.Nodes.ElementsAs(ctx, &p.Nodes, false)...)
		sort.Strings(p.Nodes)
	}
	return p, diags
}

// unset lists the PVE options m leaves out, which an update deletes.
func (m *acmePluginModel) unset() []string {
	var del []string
	for opt, null := range map[string]bool{
		"api": m.API.IsNull(), "data": m.Data.IsNull(), "validation-delay": m.ValidationDelay.IsNull(),
		"nodes": m.Nodes.IsNull(), "disable": m.Disable.IsNull() || !m.Disable.ValueBool(),
	} {
		if null {
			del = append(del, opt)
		}
	}
	sort.Strings(del)
	return del
}

// fill sets m from what PVE reports. Values PVE reports as its default are
// kept null when the configuration left them out, so no diff appears.
func (m *acmePluginModel) fill(p *pve.ACMEPlugin) {
	m.Type = types.StringValue(p.Type)
	m.API = optString(p.API)
	if len(p.Data) == 0 {
		m.Data = types.MapNull(types.StringType)
	} else {
		elems := map[string]attrValue{}
		for k, v := range p.Data {
			elems[k] = types.StringValue(v)
		}
		m.Data = types.MapValueMust(types.StringType, elems)
	}
	m.ValidationDelay = types.Int64PointerValue(p.ValidationDelay)
	if len(p.Nodes) == 0 {
		m.Nodes = types.SetNull(types.StringType)
	} else {
		elems := make([]attrValue, 0, len(p.Nodes))
		for _, n := range p.Nodes {
			elems = append(elems, types.StringValue(n))
		}
		m.Nodes = types.SetValueMust(types.StringType, elems)
	}
	if !p.Disable && m.Disable.IsNull() {
		m.Disable = types.BoolNull()
	} else {
		m.Disable = types.BoolValue(p.Disable)
	}
}

func (r *acmePluginResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	c := r.Client(&resp.Diagnostics)
	if c == nil {
		return
	}
	var plan acmePluginModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	p, d := plan.plugin(ctx)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := c.CreateACMEPlugin(ctx, p); err != nil {
		framework.AddUnable(&resp.Diagnostics, "Create", "ACME plugin", p.ID, err)
		return
	}
	r.readInto(ctx, c, &plan, &resp.Diagnostics, "Create")
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *acmePluginResource) readInto(ctx context.Context, c *pve.Client, m *acmePluginModel, diags *diag.Diagnostics, action string) bool {
	p, err := c.ACMEPlugin(ctx, m.ID.ValueString())
	if errors.Is(err, pve.ErrNotFound) {
		return false
	}
	if err != nil {
		framework.AddUnable(diags, action, "ACME plugin", m.ID.ValueString(), err)
		return true
	}
	m.fill(p)
	return true
}

func (r *acmePluginResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	c := r.Client(&resp.Diagnostics)
	if c == nil {
		return
	}
	var state acmePluginModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !r.readInto(ctx, c, &state, &resp.Diagnostics, "Read") {
		resp.State.RemoveResource(ctx)
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *acmePluginResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	c := r.Client(&resp.Diagnostics)
	if c == nil {
		return
	}
	var plan acmePluginModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	p, d := plan.plugin(ctx)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := c.UpdateACMEPlugin(ctx, p, plan.unset(), ""); err != nil {
		framework.AddUnable(&resp.Diagnostics, "Update", "ACME plugin", p.ID, err)
		return
	}
	if !r.readInto(ctx, c, &plan, &resp.Diagnostics, "Update") && !resp.Diagnostics.HasError() {
		resp.Diagnostics.AddError("Unable to Update ACME plugin "+p.ID, "The plugin disappeared from PVE while it was being updated.")
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *acmePluginResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	c := r.Client(&resp.Diagnostics)
	if c == nil {
		return
	}
	var state acmePluginModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := c.DeleteACMEPlugin(ctx, state.ID.ValueString()); err != nil && !errors.Is(err, pve.ErrNotFound) {
		framework.AddUnable(&resp.Diagnostics, "Delete", "ACME plugin", state.ID.ValueString(), err)
	}
}

func (r *acmePluginResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if req.ID == "standalone" {
		resp.Diagnostics.AddError("Cannot import the standalone plugin", "PVE's built-in standalone plugin always exists and is not managed by pve_acme_plugin.")
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
}
