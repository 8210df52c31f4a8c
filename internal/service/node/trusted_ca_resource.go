package node

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
)

const trustedCATypeName = "pve_node_trusted_ca"

var (
	_ resource.Resource                   = (*trustedCAResource)(nil)
	_ resource.ResourceWithConfigure      = (*trustedCAResource)(nil)
	_ resource.ResourceWithImportState    = (*trustedCAResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*trustedCAResource)(nil)
	_ resource.ResourceWithValidateConfig = (*trustedCAResource)(nil)
)

// NewTrustedCAResource is the constructor the provider registers.
func NewTrustedCAResource() resource.Resource {
	return &trustedCAResource{framework.ResourceBase{TypeName: trustedCATypeName}}
}

type trustedCAResource struct{ framework.ResourceBase }

type trustedCAModel struct {
	ID          types.String `tfsdk:"id"`
	Node        types.String `tfsdk:"node"`
	Name        types.String `tfsdk:"name"`
	PEM         types.String `tfsdk:"pem"`
	Path        types.String `tfsdk:"path"`
	Fingerprint types.String `tfsdk:"fingerprint_sha256"`
	Subject     types.String `tfsdk:"subject"`
	NotAfter    types.String `tfsdk:"not_after"`
	Trusted     types.Bool   `tfsdk:"trusted"`
}

const (
	localCADir = "/usr/local/share/ca-certificates/"
	sslCertDir = "/etc/ssl/certs/"
)

// caNameRE is a file name for update-ca-certificates without its .crt
// suffix.
var caNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

func caPath(name string) string     { return localCADir + name + ".crt" }
func caLinkPath(name string) string { return sslCertDir + name + ".pem" }

func (r *trustedCAResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A CA certificate in a node's system trust store, such as the reference lab's internal root CA: the " +
			"provider writes the PEM to `/usr/local/share/ca-certificates/<name>.crt` and runs `update-ca-certificates`, then checks " +
			"that the certificate is linked into `/etc/ssl/certs` (which OpenSSL, curl, apt, Ceph's and PVE's own tools read).\n\n" +
			"The PEM is checked at plan time: exactly one certificate, and a CA (basic constraints `CA:TRUE`). A file changed or " +
			"removed on the node, or a certificate `update-ca-certificates` has not linked, shows up in the next plan. Destroying " +
			"the resource removes the file and runs `update-ca-certificates` again, which drops the certificate from the store.\n\n" +
			"This is the node's operating-system trust store; it does not change which certificate `pveproxy` serves (see " +
			"`pve_node_certificate`). Needs the provider's `ssh` block (root, or a user with password-less sudo).",
		Attributes: map[string]schema.Attribute{
			"id":   framework.IDAttribute("`<node>/<name>`."),
			"node": framework.NodeAttribute("", framework.NodeReplaces),
			"name": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "File name without `.crt`, such as `root-ca-a`: the certificate goes to `/usr/local/share/ca-certificates/<name>.crt`.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:          []validator.String{caNameValidator{}},
			},
			"pem": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "The CA certificate, PEM-encoded (`-----BEGIN CERTIFICATE-----`), one certificate; written byte for byte.",
			},
			"path": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The file on the node, `/usr/local/share/ca-certificates/<name>.crt`.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"fingerprint_sha256": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "SHA-256 fingerprint of the certificate (colon-separated hex, as `openssl x509 -fingerprint -sha256` prints it).",
			},
			"subject": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The certificate's subject.",
			},
			"not_after": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "End of the certificate's validity (RFC 3339).",
			},
			"trusted": schema.BoolAttribute{
				Computed: true,
				MarkdownDescription: "Whether `update-ca-certificates` has linked the file into `/etc/ssl/certs`; false when it was not " +
					"run after the file changed (the next apply runs it).",
			},
		},
	}
}

type caNameValidator struct{}

func (caNameValidator) Description(context.Context) string {
	return "a file name without .crt: letters, digits, '.', '_', '-'"
}
func (v caNameValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }
func (caNameValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	v := req.ConfigValue.ValueString()
	switch {
	case strings.HasSuffix(v, ".crt"):
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid name",
			fmt.Sprintf("name is the file name without .crt (the provider adds it): use %q.", strings.TrimSuffix(v, ".crt")))
	case !caNameRE.MatchString(v):
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid name",
			fmt.Sprintf("name must be a file name of letters, digits, '.', '_' or '-' (at most 100, no '/'), such as root-ca-a; got %q.", v))
	}
}

// parseCA checks that s is exactly one PEM certificate of a CA.
func parseCA(s string) (*x509.Certificate, error) {
	block, rest := pem.Decode([]byte(s))
	if block == nil {
		return nil, errors.New("is not PEM: expected -----BEGIN CERTIFICATE-----")
	}
	if block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("holds a %s block, not a CERTIFICATE", block.Type)
	}
	if len(bytes.TrimSpace(rest)) > 0 {
		return nil, errors.New("holds more than one PEM block; update-ca-certificates reads one certificate per file, so use one resource per certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("is not a valid certificate: %w", err)
	}
	if !cert.BasicConstraintsValid || !cert.IsCA {
		return nil, fmt.Errorf("is not a CA certificate (%q has no basic constraints CA:TRUE): trust the CA that issued it, not a server certificate", cert.Subject.String())
	}
	return cert, nil
}

func caFingerprint(c *x509.Certificate) string {
	sum := sha256.Sum256(c.Raw)
	parts := make([]string, len(sum))
	for i, b := range sum {
		parts[i] = fmt.Sprintf("%02X", b)
	}
	return strings.Join(parts, ":")
}

// describeCA fills the attributes derived from the PEM (unknown when it
// is unknown, empty when it does not parse).
func describeCA(m *trustedCAModel) {
	if m.PEM.IsUnknown() {
		m.Fingerprint, m.Subject, m.NotAfter = types.StringUnknown(), types.StringUnknown(), types.StringUnknown()
		return
	}
	block, _ := pem.Decode([]byte(m.PEM.ValueString()))
	var cert *x509.Certificate
	if block != nil {
		cert, _ = x509.ParseCertificate(block.Bytes)
	}
	if cert == nil {
		m.Fingerprint, m.Subject, m.NotAfter = types.StringValue(""), types.StringValue(""), types.StringValue("")
		return
	}
	m.Fingerprint = types.StringValue(caFingerprint(cert))
	m.Subject = types.StringValue(cert.Subject.String())
	m.NotAfter = types.StringValue(cert.NotAfter.UTC().Format(time.RFC3339))
}

func (r *trustedCAResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m trustedCAModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || m.PEM.IsNull() || m.PEM.IsUnknown() {
		return
	}
	cert, err := parseCA(m.PEM.ValueString())
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("pem"), "Invalid pem", "The pem "+err.Error()+".")
		return
	}
	if time.Now().After(cert.NotAfter) {
		resp.Diagnostics.AddAttributeWarning(path.Root("pem"), "CA certificate has expired",
			fmt.Sprintf("%q expired at %s; TLS clients on the node refuse certificates it issued.", cert.Subject.String(), cert.NotAfter.UTC().Format(time.RFC3339)))
	}
}

func (r *trustedCAResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	framework.PlanRequireNodeExec(r.PD, &resp.Diagnostics, trustedCATypeName)
	framework.PlanCheckNodeAttr(ctx, r.PD, req, resp, trustedCATypeName)
	var plan trustedCAModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	describeCA(&plan)
	plan.Trusted = types.BoolValue(true)
	if !plan.Node.IsUnknown() && !plan.Name.IsUnknown() {
		plan.ID = types.StringValue(plan.Node.ValueString() + "/" + plan.Name.ValueString())
		plan.Path = types.StringValue(caPath(plan.Name.ValueString()))
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, plan)...)
}

// read fills m from the node; found is false when the file is gone.
func (r *trustedCAResource) read(ctx context.Context, m *trustedCAModel) (found bool, err error) {
	ex := r.PD.NodeExec
	node, name := m.Node.ValueString(), m.Name.ValueString()
	content, ok, err := readOptionalFile(ctx, ex, node, caPath(name))
	if err != nil || !ok {
		return false, err
	}
	linked, ok, err := readOptionalFile(ctx, ex, node, caLinkPath(name))
	if err != nil {
		return false, err
	}
	m.ID = types.StringValue(node + "/" + name)
	m.Path = types.StringValue(caPath(name))
	m.PEM = types.StringValue(string(content))
	m.Trusted = types.BoolValue(ok && bytes.Equal(linked, content))
	describeCA(m)
	return true, nil
}

func (r *trustedCAResource) write(ctx context.Context, action string, m *trustedCAModel, diags *diag.Diagnostics) bool {
	if r.Client(diags) == nil || !framework.RequireNodeExec(r.PD, diags, trustedCATypeName) {
		return false
	}
	ex := r.PD.NodeExec
	node, name := m.Node.ValueString(), m.Name.ValueString()
	id := node + "/" + name
	unlock, err := ex.Lock(ctx, node)
	if err != nil {
		framework.AddUnable(diags, action, "trusted CA", id, err)
		return false
	}
	defer unlock()
	if err := ex.WriteFile(ctx, node, nodeexec.File{Path: caPath(name), Content: []byte(m.PEM.ValueString()), Mode: 0o644, MakeDirs: true}); err != nil {
		framework.AddUnable(diags, action, "trusted CA", id, err)
		return false
	}
	res, err := ex.Run(ctx, node, nodeexec.Cmd("update-ca-certificates"))
	if err != nil {
		framework.AddUnable(diags, action, "trusted CA", id, err)
		return false
	}
	tflog.Info(ctx, "update-ca-certificates", map[string]any{"node": node, "output": string(res.Stdout)})
	got := *m
	found, err := r.read(ctx, &got)
	switch {
	case err != nil:
		framework.AddUnable(diags, action, "trusted CA", id, err)
		return false
	case !found || got.PEM.ValueString() != m.PEM.ValueString():
		framework.AddUnable(diags, action, "trusted CA", id, fmt.Errorf("%s does not hold the certificate after writing it", caPath(name)))
		return false
	case !got.Trusted.ValueBool():
		framework.AddUnable(diags, action, "trusted CA", id, fmt.Errorf("update-ca-certificates did not link %s into the trust store as %s; its output:\n%s%s",
			caPath(name), caLinkPath(name), res.Stdout, res.Stderr))
		return false
	}
	*m = got
	return true
}

func (r *trustedCAResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan trustedCAModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() || !r.write(ctx, "Create", &plan, &resp.Diagnostics) {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *trustedCAResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan trustedCAModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() || !r.write(ctx, "Update", &plan, &resp.Diagnostics) {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *trustedCAResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state trustedCAModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() || r.Client(&resp.Diagnostics) == nil ||
		!framework.RequireNodeExec(r.PD, &resp.Diagnostics, trustedCATypeName) {
		return
	}
	found, err := r.read(ctx, &state)
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Read", "trusted CA", state.Node.ValueString()+"/"+state.Name.ValueString(), err)
		return
	}
	if !found {
		tflog.Warn(ctx, "the CA file is gone from the node", map[string]any{"path": caPath(state.Name.ValueString())})
		resp.State.RemoveResource(ctx)
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// Delete removes the file and drops the certificate from the store.
func (r *trustedCAResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state trustedCAModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() || r.Client(&resp.Diagnostics) == nil ||
		!framework.RequireNodeExec(r.PD, &resp.Diagnostics, trustedCATypeName) {
		return
	}
	ex := r.PD.NodeExec
	node, name := state.Node.ValueString(), state.Name.ValueString()
	fail := func(err error) { framework.AddUnable(&resp.Diagnostics, "Delete", "trusted CA", node+"/"+name, err) }
	unlock, err := ex.Lock(ctx, node)
	if err != nil {
		fail(err)
		return
	}
	defer unlock()
	if err := ex.RemoveFile(ctx, node, caPath(name)); err != nil {
		fail(err)
		return
	}
	if _, err := ex.Run(ctx, node, nodeexec.Cmd("update-ca-certificates")); err != nil {
		fail(err)
		return
	}
	if _, ok, err := readOptionalFile(ctx, ex, node, caLinkPath(name)); err != nil || ok {
		if err == nil {
			err = fmt.Errorf("%s is still in the trust store after update-ca-certificates", caLinkPath(name))
		}
		fail(err)
	}
}

func (r *trustedCAResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	node, name, ok := splitImportID(req.ID)
	if !ok || !caNameRE.MatchString(name) || strings.HasSuffix(name, ".crt") {
		resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf("Import %s with <node>/<name> (the file name without .crt), such as z2g4a/root-ca-a; got %q.", trustedCATypeName, req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("node"), node)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), name)...)
}
