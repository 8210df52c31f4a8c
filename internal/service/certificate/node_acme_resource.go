package certificate

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

const (
	nodeACMETypeName     = "pve_node_acme"
	defaultOrderTimeout  = 10 * time.Minute
	standalonePlugin     = "standalone"
	defaultACMEAccountID = "default"
)

var (
	_ resource.Resource                   = (*nodeACMEResource)(nil)
	_ resource.ResourceWithConfigure      = (*nodeACMEResource)(nil)
	_ resource.ResourceWithImportState    = (*nodeACMEResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*nodeACMEResource)(nil)
	_ resource.ResourceWithValidateConfig = (*nodeACMEResource)(nil)
)

// NewNodeACMEResource is the constructor the provider registers.
func NewNodeACMEResource() resource.Resource {
	return &nodeACMEResource{framework.ResourceBase{TypeName: nodeACMETypeName}}
}

type nodeACMEResource struct{ framework.ResourceBase }

type nodeACMEModel struct {
	ID           types.String   `tfsdk:"id"`
	Node         types.String   `tfsdk:"node"`
	Account      types.String   `tfsdk:"account"`
	Domains      types.List     `tfsdk:"domains"`
	RenewBefore  types.String   `tfsdk:"renew_before"`
	RenewTrigger types.String   `tfsdk:"renew_trigger"`
	Fingerprint  types.String   `tfsdk:"fingerprint"`
	NotAfter     types.String   `tfsdk:"not_after"`
	Issuer       types.String   `tfsdk:"issuer"`
	Timeouts     timeouts.Value `tfsdk:"timeouts"`
}

type acmeDomainModel struct {
	Domain types.String `tfsdk:"domain"`
	Plugin types.String `tfsdk:"plugin"`
	Alias  types.String `tfsdk:"alias"`
}

var acmeDomainAttrTypes = map[string]attr.Type{"domain": types.StringType, "plugin": types.StringType, "alias": types.StringType}

func (r *nodeACMEResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A node's ACME certificate: the node configuration (`acme: account=...`, `acmedomainN`) and the certificate ordered with it, " +
			"which the node's API then presents. Create configures the node and orders the certificate; changing the account or the domains " +
			"orders a new one. PVE renews ACME certificates itself (`pve-daily-update`, within 30 days of expiry); " +
			"set `renew_before` to let Terraform renew when a plan runs inside that window, or change `renew_trigger` to renew on demand. " +
			"Destroy revokes the certificate at the CA and removes the node's ACME settings; the node falls back to its PVE-signed certificate.\n\n" +
			"A provider pinned with `tls_fingerprint` to this node stops trusting it once the new certificate is served: point the provider at another node, or use `ca_cert`.\n\n" +
			"Credentials: an API token with `Sys.Modify` on `/` (node configuration) and `/nodes/{node}` is enough; the account itself (`pve_acme_account`) needs root@pam.",
		Attributes: map[string]schema.Attribute{
			"id":   framework.IDAttribute("The node name."),
			"node": framework.NodeAttribute("", framework.NodeReplaces),
			"account": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString(defaultACMEAccountID),
				MarkdownDescription: "ACME account (`pve_acme_account.NAME.name`). Default `default`, as in PVE.",
				Validators:          []validator.String{stringvalidator.RegexMatches(configIDRE, "must be an ACME account name")},
			},
			"domains": schema.ListNestedAttribute{
				Required: true,
				MarkdownDescription: "Domains of the certificate, the first one its subject; stored as `acmedomain0`, `acmedomain1`, ... (at most 6). " +
					"Every domain must resolve to the node for `standalone` validation (HTTP on port 80), or be served by the DNS plugin.",
				Validators: []validator.List{listvalidator.SizeBetween(1, pve.MaxACMEDomainIndex+1)},
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"domain": schema.StringAttribute{
						Required: true, MarkdownDescription: "Domain name, such as `z2g4a.lab.example`. PVE compares domains in lower case.",
						Validators: []validator.String{stringvalidator.RegexMatches(domainRE, "must be a fully qualified domain name")},
					},
					"plugin": schema.StringAttribute{
						Optional: true, Computed: true, Default: stringdefault.StaticString(standalonePlugin),
						MarkdownDescription: "Challenge plugin (`pve_acme_plugin.NAME.id`). Default `standalone` (HTTP-01 on port 80 of the node).",
						Validators:          []validator.String{stringvalidator.RegexMatches(configIDRE, "must be a plugin id")},
					},
					"alias": schema.StringAttribute{
						Optional: true, MarkdownDescription: "Domain whose `_acme-challenge` record the DNS plugin writes instead (DNS alias mode).",
						Validators: []validator.String{stringvalidator.RegexMatches(aliasRE, "must be a domain name")},
					},
				}},
			},
			"renew_before": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Renew from Terraform when a plan runs less than this long before the certificate expires, as a Go duration such as `720h` (30 days) " +
					"or `8h` for 24-hour certificates. Unset: Terraform never renews on its own and leaves it to PVE.",
				Validators: []validator.String{durationValidator{}},
			},
			"renew_trigger": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Any value; changing it renews the certificate at the next apply (for example a date, or a rotation counter).",
			},
			"fingerprint": schema.StringAttribute{Computed: true, MarkdownDescription: "SHA-256 fingerprint of the certificate the node has (`AB:CD:...`)."},
			"not_after":   schema.StringAttribute{Computed: true, MarkdownDescription: "Expiry of the certificate (RFC 3339)."},
			"issuer":      schema.StringAttribute{Computed: true, MarkdownDescription: "Issuer of the certificate, as PVE reports it."},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		},
	}
}

func (r *nodeACMEResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m nodeACMEModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || m.Domains.IsUnknown() || m.Domains.IsNull() {
		return
	}
	var doms []acmeDomainModel
	resp.Diagnostics.Append(m.Domains.ElementsAs(ctx, &doms, false)...)
	seen := map[string]int{}
	for i, d := range doms {
		if d.Domain.IsUnknown() || d.Domain.IsNull() {
			continue
		}
		k := strings.ToLower(d.Domain.ValueString())
		if j, dup := seen[k]; dup {
			resp.Diagnostics.AddAttributeError(path.Root("domains").AtListIndex(i).AtName("domain"), "Duplicate domain",
				fmt.Sprintf("%q is already domain %d; PVE compares domains in lower case and refuses duplicates.", d.Domain.ValueString(), j))
		}
		seen[k] = i
	}
}

type durationValidator struct{}

func (durationValidator) Description(context.Context) string {
	return "must be a positive Go duration such as 720h"
}
func (v durationValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }
func (durationValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if d, err := time.ParseDuration(req.ConfigValue.ValueString()); err != nil || d <= 0 {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid duration", fmt.Sprintf("%q is not a positive duration such as 720h or 8h.", req.ConfigValue.ValueString()))
	}
}

// ModifyPlan decides whether apply orders or renews a certificate: then
// its computed values are unknown, which is what the plan shows.
func (r *nodeACMEResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	framework.PlanCheckNodeAttr(ctx, r.PD, req, resp, nodeACMETypeName)
	if req.Plan.Raw.IsNull() || req.State.Raw.IsNull() {
		return
	}
	var plan, state nodeACMEModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	renew := !plan.Account.Equal(state.Account) || !plan.Domains.Equal(state.Domains) || !plan.RenewTrigger.Equal(state.RenewTrigger) ||
		state.Fingerprint.IsNull() || state.Fingerprint.ValueString() == ""
	if !renew && !plan.RenewBefore.IsNull() && !plan.RenewBefore.IsUnknown() {
		window, _ := time.ParseDuration(plan.RenewBefore.ValueString())
		if na, err := time.Parse(time.RFC3339, state.NotAfter.ValueString()); err == nil && time.Until(na) < window {
			renew = true
			resp.Diagnostics.AddWarning("Certificate of node "+plan.Node.ValueString()+" will be renewed",
				fmt.Sprintf("It expires at %s, less than renew_before (%s) from now.", state.NotAfter.ValueString(), plan.RenewBefore.ValueString()))
		}
	}
	if renew {
		plan.Fingerprint, plan.NotAfter, plan.Issuer = types.StringUnknown(), types.StringUnknown(), types.StringUnknown()
	} else {
		plan.Fingerprint, plan.NotAfter, plan.Issuer = state.Fingerprint, state.NotAfter, state.Issuer
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, plan)...)
}

func (m *nodeACMEModel) domains(ctx context.Context, diags *diag.Diagnostics) []pve.ACMEDomain {
	var doms []acmeDomainModel
	diags.Append(m.Domains.ElementsAs(ctx, &doms, false)...)
	out := make([]pve.ACMEDomain, 0, len(doms))
	for _, d := range doms {
		ad := pve.ACMEDomain{Domain: d.Domain.ValueString(), Alias: d.Alias.ValueString()}
		if p := d.Plugin.ValueString(); p != "" && p != standalonePlugin {
			ad.Plugin = p
		}
		out = append(out, ad)
	}
	return out
}

// writeConfig sets acme and acmedomain0..N and deletes higher indexes.
func (r *nodeACMEResource) writeConfig(ctx context.Context, c *pve.Client, m *nodeACMEModel) error {
	var diags diag.Diagnostics
	doms := m.domains(ctx, &diags)
	if diags.HasError() {
		return fmt.Errorf("domains: %v", diags)
	}
	cur, err := c.NodeConfig(ctx, m.Node.ValueString())
	if err != nil {
		return err
	}
	set := map[string]string{"acme": "account=" + m.Account.ValueString()}
	for i, d := range doms {
		set["acmedomain"+strconv.Itoa(i)] = d.String()
	}
	var del []string
	for i := range cur.ACMEDomains {
		if i >= len(doms) {
			del = append(del, "acmedomain"+strconv.Itoa(i))
		}
	}
	return c.UpdateNodeConfig(ctx, m.Node.ValueString(), set, del, cur.Digest)
}

func (r *nodeACMEResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan nodeACMEModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Create(ctx, defaultOrderTimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	node := plan.Node.ValueString()
	c := r.NodeClient(ctx, node, &resp.Diagnostics)
	if c == nil {
		return
	}
	if err := r.writeConfig(ctx, c, &plan); err != nil {
		framework.AddUnable(&resp.Diagnostics, "Create", "node ACME configuration", node, err)
		return
	}
	upid, err := c.OrderNodeCertificate(ctx, node, false)
	if err == nil {
		_, err = c.WaitTask(ctx, upid)
	}
	if err != nil {
		if strings.Contains(err.Error(), "'force' is not set") {
			err = fmt.Errorf("%w\n\nNode %s already has a custom certificate; import this resource (terraform import %s.NAME %s) to take over its ACME certificate, or remove the other certificate first", err, node, nodeACMETypeName, node)
		}
		framework.AddUnable(&resp.Diagnostics, "Create", "node ACME certificate", node, err)
		// The configuration is on the node: keep it in state (tainted).
	}
	r.finish(ctx, c, &plan, &resp.State, &resp.Diagnostics)
}

func (r *nodeACMEResource) finish(ctx context.Context, c *pve.Client, m *nodeACMEModel, st stateSetter, diags *diag.Diagnostics) {
	m.ID = types.StringValue(m.Node.ValueString())
	ci, err := customCertificate(ctx, c, m.Node.ValueString())
	if err != nil {
		framework.AddUnable(diags, "Read", "node certificate", m.Node.ValueString(), err)
		return
	}
	m.setCert(ci)
	diags.Append(st.Set(ctx, m)...)
}

func (m *nodeACMEModel) setCert(ci *pve.CertificateInfo) {
	if ci == nil {
		m.Fingerprint, m.NotAfter, m.Issuer = types.StringNull(), types.StringNull(), types.StringNull()
		return
	}
	m.Fingerprint = types.StringValue(ci.Fingerprint)
	m.NotAfter = types.StringValue(rfc3339(ci.NotAfter))
	m.Issuer = types.StringValue(ci.Issuer)
}

func (r *nodeACMEResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var st nodeACMEModel
	resp.Diagnostics.Append(req.State.Get(ctx, &st)...)
	if resp.Diagnostics.HasError() {
		return
	}
	node := st.Node.ValueString()
	c := r.NodeClient(ctx, node, &resp.Diagnostics)
	if c == nil {
		return
	}
	nc, err := c.NodeConfig(ctx, node)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "node ACME configuration", node, err)
		return
	}
	if _, has := nc.Raw["acme"]; !has && len(nc.ACMEDomains) == 0 {
		tflog.Warn(ctx, "node has no ACME configuration any more; removing it from state", map[string]any{"node": node})
		resp.State.RemoveResource(ctx)
		return
	}
	st.Account = types.StringValue(defaultACMEAccountID)
	if nc.ACMEAccount != "" {
		st.Account = types.StringValue(nc.ACMEAccount)
	}
	var elems []attr.Value
	for i := 0; i <= pve.MaxACMEDomainIndex; i++ {
		d, ok := nc.ACMEDomains[i]
		if !ok {
			continue
		}
		plugin := d.Plugin
		if plugin == "" {
			plugin = standalonePlugin
		}
		alias := types.StringNull()
		if d.Alias != "" {
			alias = types.StringValue(d.Alias)
		}
		elems = append(elems, basetypes.NewObjectValueMust(acmeDomainAttrTypes, map[string]attr.Value{
			"domain": types.StringValue(d.Domain), "plugin": types.StringValue(plugin), "alias": alias,
		}))
	}
	list, d := types.ListValue(types.ObjectType{AttrTypes: acmeDomainAttrTypes}, elems)
	resp.Diagnostics.Append(d...)
	st.Domains = list
	r.finish(ctx, c, &st, &resp.State, &resp.Diagnostics)
}

func (r *nodeACMEResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state nodeACMEModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Update(ctx, defaultOrderTimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	node := plan.Node.ValueString()
	c := r.NodeClient(ctx, node, &resp.Diagnostics)
	if c == nil {
		return
	}
	reconfigure := !plan.Account.Equal(state.Account) || !plan.Domains.Equal(state.Domains)
	if reconfigure {
		if err := r.writeConfig(ctx, c, &plan); err != nil {
			framework.AddUnable(&resp.Diagnostics, "Update", "node ACME configuration", node, err)
			return
		}
	}
	if plan.Fingerprint.IsUnknown() {
		var upid string
		var err error
		if reconfigure || state.Fingerprint.IsNull() {
			// New domains need a new order; force replaces the old one.
			upid, err = c.OrderNodeCertificate(ctx, node, true)
		} else {
			// Terraform decided the certificate is due: PVE's own 30-day
			// rule must not veto renew_before or renew_trigger.
			upid, err = c.RenewNodeCertificate(ctx, node, true)
		}
		if err == nil {
			_, err = c.WaitTask(ctx, upid)
		}
		if err != nil {
			framework.AddUnable(&resp.Diagnostics, "Update", "node ACME certificate", node, err)
		}
	}
	r.finish(ctx, c, &plan, &resp.State, &resp.Diagnostics)
}

func (r *nodeACMEResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var st nodeACMEModel
	resp.Diagnostics.Append(req.State.Get(ctx, &st)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := st.Timeouts.Delete(ctx, defaultOrderTimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	node := st.Node.ValueString()
	c := r.NodeClient(ctx, node, &resp.Diagnostics)
	if c == nil {
		return
	}
	ci, err := customCertificate(ctx, c, node)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Delete", "node ACME certificate", node, err)
		return
	}
	if ci != nil {
		upid, err := c.RevokeNodeCertificate(ctx, node)
		if err == nil {
			_, err = c.WaitTask(ctx, upid)
		}
		if err != nil {
			framework.AddUnable(&resp.Diagnostics, "Delete", "node ACME certificate", node, err)
			return
		}
	}
	nc, err := c.NodeConfig(ctx, node)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Delete", "node ACME configuration", node, err)
		return
	}
	var del []string
	if _, ok := nc.Raw["acme"]; ok {
		del = append(del, "acme")
	}
	for i := range nc.ACMEDomains {
		del = append(del, "acmedomain"+strconv.Itoa(i))
	}
	if len(del) == 0 {
		return
	}
	if err := c.UpdateNodeConfig(ctx, node, nil, del, nc.Digest); err != nil {
		framework.AddUnable(&resp.Diagnostics, "Delete", "node ACME configuration", node, err)
	}
}

func (r *nodeACMEResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if !framework.IsNodeName(req.ID) {
		resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf("Expected the node name, such as z2g4a; got %q.", req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("node"), req.ID)...)
}
