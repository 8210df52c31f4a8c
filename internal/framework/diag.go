package framework

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
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
