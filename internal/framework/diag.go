package framework

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// AddUnable adds the provider's standard error: a summary naming the action
// and the object, with PVE's own error text as the detail.
func AddUnable(diags *diag.Diagnostics, action, resource, id string, err error) {
	summary := fmt.Sprintf("Unable to %s %s", action, resource)
	if id != "" {
		summary += " " + id
	}
	diags.AddError(summary, err.Error())
}

// RequireRootTicket reports, as an error titled "<what> needs root@pam with
// a password", that c is not logged in as root@pam with a password. PVE
// reserves some calls (cluster create and join, ACME accounts, OSD create
// and destroy) to that login and answers API tokens, even root's own, with
// 403 "Permission check failed (user != root@pam)".
func RequireRootTicket(c *pve.Client, diags *diag.Diagnostics, what string) bool {
	if c == nil || c.IsRootTicket() {
		return true
	}
	diags.AddError(what+" needs root@pam with a password",
		fmt.Sprintf("PVE allows this only to root@pam logged in with a password and refuses every API token, even root's own "+
			"(403 \"Permission check failed (user != root@pam)\"). The provider uses %s as %q. "+
			"Set username = \"root@pam\" and password in the provider block (or PVE_USERNAME and PVE_PASSWORD) instead of api_token, "+
			"if need be in a second, aliased provider block used only for such resources.", c.Endpoint(), c.AuthUser()))
	return false
}
