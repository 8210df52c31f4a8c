package certificate

import (
	"context"
	"errors"
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
	nodeCertificateTypeName = "pve_node_certificate"
	defaultCertTimeout      = 2 * time.Minute
)

var (
	_ resource.Resource                   = (*nodeCertificateResource)(nil)
	_ resource.ResourceWithConfigure      = (*nodeCertificateResource)(nil)
	_ resource.ResourceWithImportState    = (*nodeCertificateResource)(nil)
	_ resource.ResourceWithValidateConfig = (*nodeCertificateResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*nodeCertificateResource)(nil)
)

// NewNodeCertificateResource is the constructor the provider registers.
func NewNodeCertificateResource() resource.Resource {
	return &nodeCertificateResource{framework.ResourceBase{TypeName: nodeCertificateTypeName}}
}

type nodeCertificateResource struct{ framework.ResourceBase }

type nodeCertificateModel struct {
	ID          types.String   `tfsdk:"id"`
	Node        types.String   `tfsdk:"node"`
	Certificate types.String   `tfsdk:"certificate"`
	PrivateKey  types.String   `tfsdk:"private_key"`
	Fingerprint types.String   `tfsdk:"fingerprint"`
	NotBefore   types.String   `tfsdk:"not_before"`
	NotAfter    types.String   `tfsdk:"not_after"`
	Subject     types.String   `tfsdk:"subject"`
	Issuer      types.String   `tfsdk:"issuer"`
	SAN         types.List     `tfsdk:"san"`
	Timeouts    timeouts.Value `tfsdk:"timeouts"`
}

func (r *nodeCertificateResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	computed := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: desc}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A custom certificate for a node's API and web UI (pveproxy, port 8006): PVE's `pveproxy-ssl.pem` and `.key`. " +
			"The node presents it as soon as the resource is applied (pveproxy is restarted). Changing `certificate` or `private_key` rotates it in place; " +
			"destroying the resource removes it and the node falls back to its PVE-signed certificate (`pve-ssl.pem`).\n\n" +
			"The chain, the key, whether they match and whether the certificate has expired are checked at plan time.\n\n" +
			"**Keeping the provider connected.** After a rotation the node presents a new certificate, so a provider pinned with `tls_fingerprint` to that node " +
			"no longer trusts it. Point the provider's `endpoint` at another node of the cluster, or pin with `ca_cert` a CA that signs both the old and the new certificate.\n\n" +
			"Credentials: an API token with `Sys.Modify` on `/nodes/{node}` is enough.",
		Attributes: map[string]schema.Attribute{
			"id":   framework.IDAttribute("The node name."),
			"node": framework.NodeAttribute("", framework.NodeReplaces),
			"certificate": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "PEM certificate chain, the node's certificate first, then intermediates. " +
					"If it is replaced outside Terraform, the next plan shows the node's certificate here and puts this one back.",
			},
			"private_key": schema.StringAttribute{
				Required: true, Sensitive: true,
				MarkdownDescription: "Unencrypted PEM private key of the certificate. PVE never returns a key, so the configured value is kept in state " +
					"(treat the state as secret) and cannot be imported.",
			},
			"fingerprint": computed("SHA-256 fingerprint of the certificate, as PVE shows it (`AB:CD:...`); known at plan time. Use it to pin clients."),
			"not_before":  computed("Start of validity (RFC 3339)."),
			"not_after":   computed("End of validity (RFC 3339)."),
			"subject":     computed("Subject as PVE reports it (OpenSSL one-line form, `/CN=...`)."),
			"issuer":      computed("Issuer as PVE reports it."),
			"san": schema.ListAttribute{
				ElementType: types.StringType, Computed: true,
				MarkdownDescription: "Subject alternative names (DNS names and IP addresses) as PVE reports them.",
			},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		},
	}
}

// ValidateConfig checks the chain and key at plan time, naming the
// attribute.
func (r *nodeCertificateResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m nodeCertificateModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || m.Certificate.IsUnknown() || m.Certificate.IsNull() {
		return
	}
	pc, err := parseChain(m.Certificate.ValueString())
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("certificate"), "Invalid certificate", "The certificate chain "+err.Error()+".")
		return
	}
	now := time.Now()
	if now.After(pc.leaf.NotAfter) {
		resp.Diagnostics.AddAttributeError(path.Root("certificate"), "Certificate has expired",
			fmt.Sprintf("The certificate for %q expired at %s; clients would refuse it.", pc.leaf.Subject.CommonName, rfc3339(pc.leaf.NotAfter)))
	} else if now.Before(pc.leaf.NotBefore) {
		resp.Diagnostics.AddAttributeWarning(path.Root("certificate"), "Certificate not yet valid",
			fmt.Sprintf("The certificate is valid only from %s; clients refuse it until then.", rfc3339(pc.leaf.NotBefore)))
	}
	for i, c := range pc.chain[1:] {
		if pc.chain[i].CheckSignatureFrom(c) != nil {
			resp.Diagnostics.AddAttributeWarning(path.Root("certificate"), "Chain out of order",
				fmt.Sprintf("Certificate %d of the chain did not sign certificate %d; pveproxy sends the chain as given, leaf first, then each issuer.", i+2, i+1))
			break
		}
	}
	if m.PrivateKey.IsUnknown() || m.PrivateKey.IsNull() {
		return
	}
	if err := checkKey(m.Certificate.ValueString(), m.PrivateKey.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("private_key"), "Invalid private key", "The private key "+err.Error()+".")
	}
}

// ModifyPlan computes what PVE will report for a new certificate, so the
// plan shows the new fingerprint and validity.
func (r *nodeCertificateResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	framework.PlanCheckNodeAttr(ctx, r.PD, req, resp, nodeCertificateTypeName)
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan, state nodeCertificateModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if !req.State.Raw.IsNull() {
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	unchanged := !req.State.Raw.IsNull() && plan.Certificate.Equal(state.Certificate) && plan.PrivateKey.Equal(state.PrivateKey) && plan.Node.Equal(state.Node)
	if unchanged {
		plan.Fingerprint, plan.NotBefore, plan.NotAfter = state.Fingerprint, state.NotBefore, state.NotAfter
		plan.Subject, plan.Issuer, plan.SAN = state.Subject, state.Issuer, state.SAN
	} else {
		plan.Fingerprint, plan.NotBefore, plan.NotAfter = types.StringUnknown(), types.StringUnknown(), types.StringUnknown()
		plan.Subject, plan.Issuer, plan.SAN = types.StringUnknown(), types.StringUnknown(), types.ListUnknown(types.StringType)
		if !plan.Certificate.IsUnknown() {
			if pc, err := parseChain(plan.Certificate.ValueString()); err == nil {
				plan.Fingerprint = types.StringValue(fingerprint(pc.leaf))
				plan.NotBefore = types.StringValue(rfc3339(pc.leaf.NotBefore))
				plan.NotAfter = types.StringValue(rfc3339(pc.leaf.NotAfter))
			}
		}
	}
	if plan.ID.IsUnknown() && !plan.Node.IsUnknown() {
		plan.ID = plan.Node
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, plan)...)
}

func (r *nodeCertificateResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan nodeCertificateModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Create(ctx, defaultCertTimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r.upload(ctx, "Create", &plan, false, &resp.State, &resp.Diagnostics)
}

func (r *nodeCertificateResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan nodeCertificateModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Update(ctx, defaultCertTimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r.upload(ctx, "Update", &plan, true, &resp.State, &resp.Diagnostics)
}

type stateSetter interface {
	Set(ctx context.Context, v any) diag.Diagnostics
}

// upload installs the certificate and restarts pveproxy. Create does not
// force, so an existing custom or ACME certificate is never silently
// replaced; PVE's refusal then explains, and import adopts it.
func (r *nodeCertificateResource) upload(ctx context.Context, action string, plan *nodeCertificateModel, force bool, st stateSetter, diags *diag.Diagnostics) {
	node := plan.Node.ValueString()
	c := r.NodeClient(ctx, node, diags)
	if c == nil {
		return
	}
	info, err := c.UploadCustomCertificate(ctx, node, plan.Certificate.ValueString(), plan.PrivateKey.ValueString(), force, true)
	if err != nil {
		if !force && strings.Contains(err.Error(), "force flag is not set") {
			err = fmt.Errorf("%w\n\nNode %s already has a custom certificate (uploaded by hand or ordered by ACME). Import it first (terraform import %s.NAME %s) to manage it here", err, node, nodeCertificateTypeName, node)
		}
		framework.AddUnable(diags, action, "node certificate", node, err)
		return
	}
	plan.ID = types.StringValue(node)
	diags.Append(plan.fromInfo(ctx, info)...)
	diags.Append(st.Set(ctx, plan)...)
}

func (m *nodeCertificateModel) fromInfo(ctx context.Context, ci *pve.CertificateInfo) diag.Diagnostics {
	m.Fingerprint = types.StringValue(ci.Fingerprint)
	m.NotBefore = types.StringValue(rfc3339(ci.NotBefore))
	m.NotAfter = types.StringValue(rfc3339(ci.NotAfter))
	m.Subject = types.StringValue(ci.Subject)
	m.Issuer = types.StringValue(ci.Issuer)
	san := ci.SAN
	if san == nil {
		san = []string{}
	}
	var d diag.Diagnostics
	m.SAN, d = types.ListValueFrom(ctx, types.StringType, san)
	return d
}

func (r *nodeCertificateResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var st nodeCertificateModel
	resp.Diagnostics.Append(req.State.Get(ctx, &st)...)
	if resp.Diagnostics.HasError() {
		return
	}
	node := st.Node.ValueString()
	c := r.NodeClient(ctx, node, &resp.Diagnostics)
	if c == nil {
		return
	}
	ci, err := customCertificate(ctx, c, node)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "node certificate", node, err)
		return
	}
	if ci == nil {
		tflog.Warn(ctx, "node has no custom certificate any more; removing it from state", map[string]any{"node": node})
		resp.State.RemoveResource(ctx)
		return
	}
	if st.Fingerprint.ValueString() != ci.Fingerprint {
		// Replaced outside Terraform (or imported): record what the node
		// has, so the plan shows the difference.
		st.Certificate = types.StringValue(ci.PEM)
	}
	st.ID = types.StringValue(node)
	resp.Diagnostics.Append(st.fromInfo(ctx, ci)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, st)...)
}

// customCertificate returns the node's pveproxy-ssl.pem info, nil when it
// has none.
func customCertificate(ctx context.Context, c *pve.Client, node string) (*pve.CertificateInfo, error) {
	list, err := c.NodeCertificates(ctx, node)
	if err != nil {
		return nil, err
	}
	for i := range list {
		if list[i].Filename == pve.CertFileCustom {
			return &list[i], nil
		}
	}
	return nil, nil
}

func (r *nodeCertificateResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var st nodeCertificateModel
	resp.Diagnostics.Append(req.State.Get(ctx, &st)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := st.Timeouts.Delete(ctx, defaultCertTimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	node := st.Node.ValueString()
	c := r.NodeClient(ctx, node, &resp.Diagnostics)
	if c == nil {
		return
	}
	if err := c.DeleteCustomCertificate(ctx, node, true); err != nil && !errors.Is(err, pve.ErrNotFound) {
		framework.AddUnable(&resp.Diagnostics, "Delete", "node certificate", node, err)
	}
}

func (r *nodeCertificateResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if !framework.IsNodeName(req.ID) {
		resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf("Expected the node name, such as z2g4a; got %q.", req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("node"), req.ID)...)
}
