package framework

import (
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// FailedTask reports whether err is a PVE task that ran and failed (PVE
// accepted the request and forked the worker), the one case in which a
// create may have left its object behind: a worker that dies after its
// work (killed, or failing in a last step) keeps what it made.
func FailedTask(err error) bool {
	var te *pve.TaskError
	return errors.As(err, &te)
}

// WarnAdopted says that resource id, absent before this create and there
// now as planned after its create task failed, is kept in the state: it
// is the object the task made, and creating it again would fail or make
// a second one.
func WarnAdopted(diags *diag.Diagnostics, resource, id string, err error) {
	diags.AddWarning(fmt.Sprintf("Adopted %s %s left by its failed create task", resource, id),
		fmt.Sprintf("PVE's create task failed after it had made the %s, which was absent before this create and "+
			"is there now as planned; it is kept in the state rather than made again. A setting the worker did not "+
			"finish shows in the next plan.\n\n%v", resource, err))
}
