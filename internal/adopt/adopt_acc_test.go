package adopt_test

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// The whole of each shipped lab built by hand, every area at once: the
// adoption writes nothing, the first plan is only imports (one per import
// block: 0 to add, change or destroy), applying them writes nothing (API
// request log and SSH command log), the next plan is empty (issue #12).
func TestAccAdoptHandBuilt(t *testing.T) {
	for _, lab := range []string{"reference", "diskless", "consumer"} {
		t.Run(lab, func(t *testing.T) {
			t.Parallel()
			a := adoptLab(t, lab)
			a.env.Run(t, resource.TestCase{Steps: a.steps(t)})
		})
	}
}
