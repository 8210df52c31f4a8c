package adopt_test

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// The storages of the reference lab built by hand (the installer's local
// and local-lvm, the RBD storage ceph): imports only, nothing written,
// empty plan after.
func TestAccAdoptStorage(t *testing.T) {
	t.Parallel()
	a := adoptLab(t, "reference", "storage")
	a.env.Run(t, resource.TestCase{Steps: a.steps(t)})
}
