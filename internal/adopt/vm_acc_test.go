package adopt_test

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

func TestAccAdoptVMs(t *testing.T) {
	t.Parallel()
	a := adoptLab(t, "reference", "vm")
	t.Log(a.config)
	t.Logf("%s", a.files["ADOPTION.md"])
	a.env.Run(t, resource.TestCase{Steps: a.steps(t)})
}
