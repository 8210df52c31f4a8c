package ha_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

// An HA resource for a guest that does not exist: PVE refuses it in the
// apply; the plan names the guest and lists the cluster's guests, and
// nothing but reads reaches PVE. A sid of the wrong type is refused too.
func TestAccHAResource_planRefusesMissingGuest(t *testing.T) {
	for _, tc := range []struct{ name, attr, want string }{
		{"vmid", `vmid = 4242`, `(?s)Unable to plan pve_ha_resource: guest 4242 does not exist.*vmid = 4242.*lists vm:100`},
		{"sid", `sid = "vm:4242"`, `(?s)Unable to plan pve_ha_resource: guest 4242 does not exist.*sid = "vm:4242".*lists vm:100`},
		{"type", `sid = "ct:100"`, `(?s)Unable to plan pve_ha_resource: guest 100 is not of the type in sid.*is a VM.*sid = "vm:100"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := acctest.New(t)
			if e.Sim == nil {
				t.Skip("asserts the simulator's request log")
			}
			testVM(t, e)
			e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
				PreConfig:   func() { e.Sim.ResetRequests() },
				Config:      e.Config(fmt.Sprintf("resource \"pve_ha_resource\" \"vm\" {\n  %s\n  state = \"started\"\n}\n", tc.attr)),
				ExpectError: regexp.MustCompile(strings.ReplaceAll(tc.want, " ", `\s+`)),
			}}})
			for _, r := range e.Sim.Requests() {
				if r.Method != "GET" {
					t.Errorf("refused at plan, yet %s %s was sent", r.Method, r.Path)
				}
			}
		})
	}
}

// A guest the same plan creates is let through.
func TestAccHAResource_planAcceptsVMOfSamePlan(t *testing.T) {
	e := acctest.New(t)
	if e.Sim == nil {
		t.Skip("creates a VM")
	}
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
		Config: e.Config(fmt.Sprintf(`
resource "pve_vm" "vm" {
  node = %q
  vmid = 4243
  name = "ha-refs"
}
resource "pve_ha_resource" "vm" {
  vmid  = pve_vm.vm.vmid
  state = "stopped"
}
`, e.Node(t, 0))),
		Check: resource.TestCheckResourceAttr("pve_ha_resource.vm", "sid", "vm:4243"),
	}}})
}
