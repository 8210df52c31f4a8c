package node_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

const caAddr = "pve_node_trusted_ca.this"

// testCert returns a PEM certificate: a self-signed root CA, or a server
// certificate when ca is false.
func testCert(t *testing.T, cn string, ca bool) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: cn, Organization: []string{"pvelab"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(10 * 365 * 24 * time.Hour),
		BasicConstraintsValid: true,
		IsCA:                  ca,
	}
	if ca {
		tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign
	} else {
		tmpl.DNSNames = []string{cn}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func caConfig(node, name, pemText string) string {
	return fmt.Sprintf(`
resource "pve_node_trusted_ca" "this" {
  node = %q
  name = %q
  pem  = %q
}
`, node, name, pemText)
}

// checkTrusted asserts the certificate is in the node's trust store: its
// file and the link update-ca-certificates made, read over SSH.
func checkTrusted(t *testing.T, e *acctest.Env, node, name, pemText string) resource.TestCheckFunc {
	return resource.ComposeTestCheckFunc(
		checkFile(t, e, node, "/usr/local/share/ca-certificates/"+name+".crt", pemText),
		checkFile(t, e, node, "/etc/ssl/certs/"+name+".pem", pemText),
	)
}

func TestAccNodeTrustedCA_lifecycle(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	requireNodeWrites(t, e)
	node := e.Node(t, 0)
	ca1 := testCert(t, "pvelab root CA A", true)
	ca2 := testCert(t, "pvelab root CA A (renewed)", true)
	crt := "/usr/local/share/ca-certificates/root-ca-a.crt"
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				Config: e.Config(caConfig(node, "root-ca-a", ca1)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(caAddr, tfjsonpath.New("subject"), knownvalue.StringExact("CN=pvelab root CA A,O=pvelab")),
				}},
				Check: checkTrusted(t, e, node, "root-ca-a", ca1),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(caAddr, tfjsonpath.New("id"), knownvalue.StringExact(node+"/root-ca-a")),
					statecheck.ExpectKnownValue(caAddr, tfjsonpath.New("path"), knownvalue.StringExact(crt)),
					statecheck.ExpectKnownValue(caAddr, tfjsonpath.New("trusted"), knownvalue.Bool(true)),
				},
			},
			{ResourceName: caAddr, ImportState: true, ImportStateId: node + "/root-ca-a", ImportStateVerify: true},
			{
				Config: e.Config(caConfig(node, "root-ca-a", ca2)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(caAddr, plancheck.ResourceActionUpdate),
				}},
				Check: checkTrusted(t, e, node, "root-ca-a", ca2),
			},
			// Drift: the file is overwritten on the node.
			{
				PreConfig: func() {
					ex := e.NodeExec(t)
					if err := writeOutside(ex, node, crt, ca1); err != nil {
						t.Fatal(err)
					}
				},
				Config:   e.Config(caConfig(node, "root-ca-a", ca2)),
				PlanOnly: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(caAddr, plancheck.ResourceActionUpdate),
				}},
				ExpectNonEmptyPlan: true,
			},
			{Config: e.Config(caConfig(node, "root-ca-a", ca2)), Check: checkTrusted(t, e, node, "root-ca-a", ca2)},
			// Drift: removed from the trust store (file deleted and
			// update-ca-certificates run): planned as a new create.
			{
				PreConfig: func() {
					outside(t, e, node, "rm", "-f", "--", crt)()
					outside(t, e, node, "update-ca-certificates")()
				},
				Config:   e.Config(caConfig(node, "root-ca-a", ca2)),
				PlanOnly: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(caAddr, plancheck.ResourceActionCreate),
				}},
				ExpectNonEmptyPlan: true,
			},
			{Config: e.Config(caConfig(node, "root-ca-a", ca2)), Check: checkTrusted(t, e, node, "root-ca-a", ca2)},
		},
		CheckDestroy: resource.ComposeTestCheckFunc(
			checkNoFile(t, e, node, crt),
			checkNoFile(t, e, node, "/etc/ssl/certs/root-ca-a.pem"),
			func(*terraform.State) error {
				if e.Sim != nil && slices.Contains(e.Sim.TrustedCAs(node), "root-ca-a.crt") {
					return fmt.Errorf("trust store still lists root-ca-a.crt: %v", e.Sim.TrustedCAs(node))
				}
				return nil
			},
		),
	})
}

// The file is in place but update-ca-certificates did not run (or failed):
// the certificate is not trusted, and the next apply runs it.
func TestAccNodeTrustedCA_notLinkedIsDrift(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	requireSim(t, e, "writes the trust store behind update-ca-certificates' back")
	node := e.Node(t, 1)
	ca := testCert(t, "pvelab root CA B", true)
	cfg := e.Config(caConfig(node, "root-ca-b", ca))
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				PreConfig: func() {
					outside(t, e, node, "rm", "-f", "--", "/etc/ssl/certs/root-ca-b.pem")()
				},
				Config:   cfg,
				PlanOnly: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(caAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(caAddr, tfjsonpath.New("trusted"), knownvalue.Bool(true)),
				}},
				ExpectNonEmptyPlan: true,
			},
			{Config: cfg, Check: checkTrusted(t, e, node, "root-ca-b", ca)},
		},
	})
}

func TestAccNodeTrustedCA_planErrors(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	node := e.Node(t, 2)
	ca := testCert(t, "pvelab root CA", true)
	leaf := testCert(t, "z2g4a.lab.example", false)
	step := func(name, pemText, want string) resource.TestStep {
		return resource.TestStep{Config: e.Config(caConfig(node, name, pemText)), PlanOnly: true, ExpectError: errRE(want)}
	}
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			step("server", leaf, `Invalid pem.*is not a CA certificate \("CN=z2g4a.lab.example,O=pvelab" has no basic constraints CA:TRUE\)`),
			step("two", ca+ca, `Invalid pem.*more than one PEM block.*one resource per certificate`),
			step("junk", "hello", `Invalid pem.*is not PEM`),
			step("root-ca-a.crt", ca, `Invalid name.*without .crt.*use "root-ca-a"`),
			step("../../etc/passwd", ca, `Invalid name.*no '/'`),
			{Config: e.ProviderConfigWithoutSSH(t) + caConfig(node, "root-ca-a", ca), PlanOnly: true,
				ExpectError: errRE(`pve_node_trusted_ca needs SSH access to the nodes`)},
		},
	})
}
