package framework

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
)

// ProviderDataFrom converts what Configure receives into *ProviderData. It
// returns nil without error while the provider is not configured yet (the
// framework calls Configure early with nil during validation).
func ProviderDataFrom(data any, diags *diag.Diagnostics) *ProviderData {
	if data == nil {
		return nil
	}
	pd, ok := data.(*ProviderData)
	if !ok {
		diags.AddError("Unexpected provider data",
			fmt.Sprintf("Expected *framework.ProviderData, got %T. This is a bug in the provider; please report it.", data))
		return nil
	}
	return pd
}

// RequireConfigured reports a clear error when a resource runs without a
// configured provider, which happens when provider arguments were unknown.
func RequireConfigured(pd *ProviderData, diags *diag.Diagnostics) bool {
	if pd == nil || pd.Client == nil {
		diags.AddError("Provider not configured",
			"The pve provider was not configured, usually because an argument such as endpoint depends on a value that is not known until apply. Set the provider arguments from known values.")
		return false
	}
	return true
}
