package certificate_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

// The certificate tests install certificates on the SECOND node. The test
// provider talks to the first node, pinned to its tls_fingerprint; a
// custom certificate on that node would break the pin after the first
// apply (exactly what the README warns users about). Managing another
// node's certificate through the endpoint keeps the provider connected,
// as PVE proxies /nodes/{node}/... inside the cluster.

func certConfig(e *acctest.Env, node string, c testCert) string {
	return e.Config(fmt.Sprintf(`
resource "pve_node_certificate" "api" {
  node        = %q
  certificate = <<-EOT
%sEOT
  private_key = <<-EOT
%sEOT
}
`, node, c.cert, c.key))
}

func TestAccNodeCertificate_rotation(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	node := e.Node(t, 1)
	const addr = "pve_node_certificate.api"
	c1, c2 := validCert(t, node+".lab.example"), validCert(t, node+".lab.example")
	fallback := nodeSSLFingerprint(t, e, node)
	e.Run(t, resource.TestCase{
		CheckDestroy: func(s *terraform.State) error { return presents(e, node, func() string { return fallback })(s) },
		Steps: []resource.TestStep{
			{
				Config: certConfig(e, node, c1),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					// The fingerprint is known at plan time.
					plancheck.ExpectKnownValue(addr, tfjsonPath("fingerprint"), knownString(leafFingerprint(c1.cert))),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "id", node),
					resource.TestCheckResourceAttr(addr, "fingerprint", leafFingerprint(c1.cert)),
					resource.TestCheckResourceAttr(addr, "subject", "/CN="+node+".lab.example"),
					resource.TestCheckResourceAttr(addr, "issuer", "/CN=Lab test CA"),
					resource.TestCheckResourceAttr(addr, "san.#", "2"),
					resource.TestCheckResourceAttr(addr, "san.1", "127.0.0.1"),
					resource.TestCheckResourceAttrSet(addr, "not_after"),
					presents(e, node, func() string { return leafFingerprint(c1.cert) }),
				),
			},
			{
				// Rotation: a new certificate and key update in place and
				// the node serves the new one.
				Config: certConfig(e, node, c2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(addr, tfjsonPath("fingerprint"), knownString(leafFingerprint(c2.cert))),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "fingerprint", leafFingerprint(c2.cert)),
					presents(e, node, func() string { return leafFingerprint(c2.cert) }),
				),
			},
			{
				// PVE returns neither the key nor the chain (only the leaf).
				ResourceName:            addr,
				ImportState:             true,
				ImportStateId:           node,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"private_key", "certificate"},
			},
		},
	})
}

func TestAccNodeCertificate_drift(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	node := e.Node(t, 1)
	const addr = "pve_node_certificate.api"
	c1, other := validCert(t, node+".lab.example"), validCert(t, "someone-else.example")
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{Config: certConfig(e, node, c1)},
			{
				// Someone replaces the certificate in the UI: the plan shows it.
				PreConfig: func() {
					if _, err := e.Client.UploadCustomCertificate(context.Background(), node, other.cert, other.key, true, true); err != nil {
						t.Fatal(err)
					}
				},
				Config:             certConfig(e, node, c1),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				Config: certConfig(e, node, c1),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: presents(e, node, func() string { return leafFingerprint(c1.cert) }),
			},
			{
				// Removed outside Terraform: planned for creation again.
				PreConfig: func() {
					if err := e.Client.DeleteCustomCertificate(context.Background(), node, true); err != nil {
						t.Fatal(err)
					}
				},
				Config: certConfig(e, node, c1),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate),
				}},
				Check: presents(e, node, func() string { return leafFingerprint(c1.cert) }),
			},
		},
	})
}

func TestAccNodeCertificate_invalidAtPlan(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	node := e.Node(t, 1)
	good, other := validCert(t, "a.example"), validCert(t, "b.example")
	expired := newCert(t, "old.example", time.Now().AddDate(-1, 0, 0), time.Now().Add(-time.Hour))
	requests := 0
	if e.Sim != nil {
		requests = len(e.Sim.Requests())
	}
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{Config: certConfig(e, node, testCert{cert: "not a certificate\n", key: good.key}), PlanOnly: true,
				ExpectError: regexp.MustCompile(`(?s)Invalid certificate.*contains no PEM certificate`)},
			{Config: certConfig(e, node, testCert{cert: good.cert, key: other.key}), PlanOnly: true,
				ExpectError: regexp.MustCompile(`(?s)Invalid private key.*does not match the\s+certificate`)},
			{Config: certConfig(e, node, testCert{cert: good.key, key: good.key}), PlanOnly: true,
				ExpectError: regexp.MustCompile(`(?s)Invalid certificate.*contains a "PRIVATE KEY" PEM block`)},
			{Config: certConfig(e, node, expired), PlanOnly: true,
				ExpectError: regexp.MustCompile(`(?s)Certificate has expired.*old\.example`)},
		},
	})
	if e.Sim != nil {
		for _, r := range e.Sim.Requests()[requests:] {
			if r.Method != "GET" {
				t.Errorf("an invalid configuration reached PVE: %s %s", r.Method, r.Path)
			}
		}
	}
}
