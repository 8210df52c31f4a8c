package adopt_test

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

func TestAccAdoptCluster(t *testing.T) {
	t.Parallel()
	a := adoptLab(t, "reference", "cluster")
	a.env.Run(t, resource.TestCase{Steps: a.steps(t)})
}
