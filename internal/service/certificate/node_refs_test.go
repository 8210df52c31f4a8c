package certificate_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

// A certificate for a node the cluster does not have is refused at plan
// (framework.PlanCheckNodeAttr); nothing but reads reaches PVE.
func TestAccNodeCertificate_planRefusesUnknownNode(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	if e.Sim == nil {
		t.Skip("asserts the simulator's request log")
	}
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
		PreConfig:   func() { e.Sim.ResetRequests() },
		Config:      certConfig(e, "nosuch", validCert(t, "nosuch.example")),
		ExpectError: regexp.MustCompile(strings.ReplaceAll(`(?s)Error running pre-apply plan.*Unable to plan pve_node_certificate: unknown node nosuch.*GET /nodes lists [^)]*`+e.Node(t, 0), " ", `\s+`)),
	}}})
	for _, r := range e.Sim.Requests() {
		if r.Method != "GET" {
			t.Errorf("refused at plan, yet %s %s was sent", r.Method, r.Path)
		}
	}
}
