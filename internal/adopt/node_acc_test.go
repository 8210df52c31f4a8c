package adopt_test

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// The node base of the hand-built reference lab: the root CA, the
// journal-upload configuration and drop-in, the enabled service, the
// timer's drop-in (imported with restart_units), tuned; the rings set by
// hand listed, not adopted.
func TestAccAdoptNode(t *testing.T) {
	t.Parallel()
	a := adoptLab(t, "reference", "node")
	t.Log(string(a.files["node.tf"]))
	t.Log(a.res.Imports)
	t.Log(a.res.Skipped)
	a.env.Run(t, resource.TestCase{Steps: a.steps(t)})
	_ = strings.Contains
}
