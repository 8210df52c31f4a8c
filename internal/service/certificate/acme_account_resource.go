package certificate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
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
	acmeAccountTypeName  = "pve_acme_account"
	defaultACMEDirectory = "https://acme-v02.api.letsencrypt.org/directory"
	defaultACMETimeout   = 5 * time.Minute
)

var (
	_ resource.Resource                = (*acmeAccountResource)(nil)
	_ resource.ResourceWithConfigure   = (*acmeAccountResource)(nil)
	_ resource.ResourceWithImportState = (*acmeAccountResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*acmeAccountResource)(nil)
)

// NewACMEAccountResource is the constructor the provider registers.
func NewACMEAccountResource() resource.Resource {
	return &acmeAccountResource{framework.ResourceBase{TypeName: acmeAccountTypeName}}
}

type acmeAccountResource struct{ framework.ResourceBase }

type acmeAccountModel struct {
	ID        types.String   `tfsdk:"id"`
	Name      types.String   `tfsdk:"name"`
	Contact   types.List     `tfsdk:"contact"`
	Directory types.String   `tfsdk:"directory"`
	TOSURL    types.String   `tfsdk:"tos_url"`
	Location  types.String   `tfsdk:"location"`
	Status    types.String   `tfsdk:"status"`
	Timeouts  timeouts.Value `tfsdk:"timeouts"`
}

func (r *acmeAccountResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	resp.Schema = schema.Schema{
		MarkdownDescription: "An ACME account, registered with a CA and stored cluster-wide (`/etc/pve/priv/acme`). " +
			"Nodes order certificates with it (`pve_node_acme`). Changing `contact` updates the account at the CA in place; " +
			"destroying the resource deactivates the account at the CA (PVE keeps the file renamed to `_deactivated_NAME_N`).\n\n" +
			"Credentials: **root@pam with a password** (`username`/`password` in the provider). PVE reserves the account API to root@pam and refuses every API token.",
		Attributes: map[string]schema.Attribute{
			"id": framework.IDAttribute("The account name."),
			"name": schema.StringAttribute{
				Required: true, PlanModifiers: replace,
				MarkdownDescription: "Account name, such as `internal` or `default` (a node uses `default` unless told otherwise). Changing it registers a new account.",
				Validators:          []validator.String{stringvalidator.RegexMatches(configIDRE, "must start with a letter and contain only letters, digits, '-' and '_' (at least two characters)")},
			},
			"contact": schema.ListAttribute{
				ElementType: types.StringType, Required: true,
				MarkdownDescription: "Contact e-mail addresses the CA may use (expiry notices). Updated in place.",
				Validators: []validator.List{
					listvalidator.SizeAtLeast(1), listvalidator.UniqueValues(),
					listvalidator.ValueStringsAre(stringvalidator.RegexMatches(emailRE, "must be an e-mail address")),
				},
			},
			"directory": schema.StringAttribute{
				Optional: true, Computed: true, PlanModifiers: replace,
				Default:             stringdefault.StaticString(defaultACMEDirectory),
				MarkdownDescription: "ACME directory URL of the CA. Default Let's Encrypt (`" + defaultACMEDirectory + "`). Changing it registers a new account.",
				Validators:          []validator.String{stringvalidator.RegexMatches(directoryRE, "must be an http:// or https:// URL")},
			},
			"tos_url": schema.StringAttribute{
				Optional: true, PlanModifiers: replace,
				MarkdownDescription: "Terms of service URL of the CA; setting it states agreement. Required by CAs that publish terms (Let's Encrypt); " +
					"the error on create names the URL to set. Private CAs usually have none.",
			},
			"location": schema.StringAttribute{
				Computed: true, MarkdownDescription: "Account URL at the CA.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"status": schema.StringAttribute{
				Computed: true, MarkdownDescription: "Account status at the CA (`valid`).",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		},
	}
}

// requireRoot fails clearly when the provider uses an API token: ACME
// accounts are root@pam's.
func requireRoot(pd *framework.ProviderData, diags *diag.Diagnostics) bool {
	if pd == nil {
		return true
	}
	return framework.RequireRootTicket(pd.Client, diags, acmeAccountTypeName)
}

// rootClient is the endpoint's client when it is logged in as root@pam
// with a password, as PVE requires for ACME accounts; nil after adding
// why not to diags.
func (r *acmeAccountResource) rootClient(diags *diag.Diagnostics) *pve.Client {
	c := r.Client(diags)
	if c == nil || !requireRoot(r.PD, diags) {
		return nil
	}
	return c
}

// ModifyPlan reports a token at plan time rather than at apply.
func (r *acmeAccountResource) ModifyPlan(_ context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() && req.State.Raw.IsNull() {
		return
	}
	requireRoot(r.PD, &resp.Diagnostics)
}

func (r *acmeAccountResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	c := r.rootClient(&resp.Diagnostics)
	if c == nil {
		return
	}
	var plan acmeAccountModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Create(ctx, defaultACMETimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	name, dir := plan.Name.ValueString(), plan.Directory.ValueString()
	var contact []string
	resp.Diagnostics.Append(plan.Contact.ElementsAs(ctx, &contact, false)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if plan.TOSURL.IsNull() {
		// A clear error before the CA refuses with its own words.
		if tos, err := c.ACMETermsOfService(ctx, dir); err == nil && tos != "" {
			resp.Diagnostics.AddAttributeError(path.Root("tos_url"), "Terms of service must be accepted",
				fmt.Sprintf("The CA at %s publishes terms of service at %s and refuses registration without agreement. Read them and set tos_url = %q.", dir, tos, tos))
			return
		}
	}
	upid, err := c.RegisterACMEAccount(ctx, name, contact, dir, plan.TOSURL.ValueString())
	if err == nil {
		_, err = c.WaitTask(ctx, upid)
	}
	// PVE refuses an existing account file before forking, and the worker
	// unlinks it when the CA refuses (API2/ACMEAccount.pm register_account):
	// an account there after a failed task was registered by this one,
	// unless the worker found another's file ("already exists"): adopted.
	if err != nil {
		if !framework.FailedTask(err) || strings.Contains(err.Error(), "already exists") {
			framework.AddUnable(&resp.Diagnostics, "Create", "ACME account", name, err)
			return
		}
		if a, aerr := c.ACMEAccount(ctx, name); aerr != nil || a.Directory != dir {
			framework.AddUnable(&resp.Diagnostics, "Create", "ACME account", name, err)
			return
		}
		framework.WarnAdopted(&resp.Diagnostics, "ACME account", name, err)
	}
	if r.readInto(ctx, c, &plan, &resp.Diagnostics) {
		resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
	} else if !resp.Diagnostics.HasError() {
		resp.Diagnostics.AddError("Unable to Create ACME account "+name, "The registration task succeeded but PVE does not list the account.")
	}
}

// readInto fills the computed values and the contact from PVE.
func (r *acmeAccountResource) readInto(ctx context.Context, c *pve.Client, m *acmeAccountModel, diags *diag.Diagnostics) bool {
	name := m.Name.ValueString()
	a, err := c.ACMEAccount(ctx, name)
	if err != nil {
		if !pve.IsNotFound(err) {
			framework.AddUnable(diags, "Read", "ACME account", name, err)
		}
		return false
	}
	m.ID = types.StringValue(name)
	m.Directory = types.StringValue(a.Directory)
	m.Location = types.StringValue(a.Location)
	m.Status = types.StringValue(a.Status)
	if a.TOSURL != "" {
		m.TOSURL = types.StringValue(a.TOSURL)
	}
	contact := a.Contact
	if contact == nil {
		contact = []string{}
	}
	var d diag.Diagnostics
	m.Contact, d = types.ListValueFrom(ctx, types.StringType, contact)
	diags.Append(d...)
	return true
}

func (r *acmeAccountResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	c := r.rootClient(&resp.Diagnostics)
	if c == nil {
		return
	}
	var st acmeAccountModel
	resp.Diagnostics.Append(req.State.Get(ctx, &st)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !r.readInto(ctx, c, &st, &resp.Diagnostics) {
		if !resp.Diagnostics.HasError() {
			tflog.Warn(ctx, "ACME account no longer exists; removing it from state", map[string]any{"name": st.Name.ValueString()})
			resp.State.RemoveResource(ctx)
		}
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, st)...)
}

func (r *acmeAccountResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	c := r.rootClient(&resp.Diagnostics)
	if c == nil {
		return
	}
	var plan acmeAccountModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Update(ctx, defaultACMETimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	name := plan.Name.ValueString()
	var contact []string
	resp.Diagnostics.Append(plan.Contact.ElementsAs(ctx, &contact, false)...)
	if resp.Diagnostics.HasError() {
		return
	}
	upid, err := c.UpdateACMEAccount(ctx, name, contact)
	if err == nil {
		_, err = c.WaitTask(ctx, upid)
	}
	if err != nil {
		framework.AddUnable(&resp.Diagnostics, "Update", "ACME account", name, err)
		return
	}
	if r.readInto(ctx, c, &plan, &resp.Diagnostics) {
		resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
	} else if !resp.Diagnostics.HasError() {
		resp.Diagnostics.AddError("Unable to Update ACME account "+name, "PVE accepted the update but no longer lists the account.")
	}
}

func (r *acmeAccountResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	c := r.rootClient(&resp.Diagnostics)
	if c == nil {
		return
	}
	var st acmeAccountModel
	resp.Diagnostics.Append(req.State.Get(ctx, &st)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := st.Timeouts.Delete(ctx, defaultACMETimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	name := st.Name.ValueString()
	upid, err := c.DeactivateACMEAccount(ctx, name)
	if err == nil {
		_, err = c.WaitTask(ctx, upid)
	}
	if err != nil && !errors.Is(err, pve.ErrNotFound) {
		framework.AddUnable(&resp.Diagnostics, "Delete", "ACME account", name, err)
	}
}

func (r *acmeAccountResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if !configIDRE.MatchString(req.ID) {
		resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf("Expected the account name, such as internal; got %q.", req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), req.ID)...)
}
