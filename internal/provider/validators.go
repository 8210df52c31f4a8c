package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// apiTokenValidator rejects a malformed token at validate time, without
// ever echoing the secret.
type apiTokenValidator struct{}

func (apiTokenValidator) Description(context.Context) string {
	return "must look like USER@REALM!TOKENID=SECRET"
}

func (v apiTokenValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (apiTokenValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, _, err := pve.ParseAPIToken(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Malformed API token", err.Error())
	}
}

// attrError records a configure-time error tied to the attribute it is
// about, so Terraform points at the right line.
func attrError(d *diag.Diagnostics, attribute, summary, detail string) {
	d.AddAttributeError(path.Root(attribute), summary, detail)
}
