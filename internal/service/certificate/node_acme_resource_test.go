package certificate_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

// testDirectory is a private ACME CA like the reference lab's; the
// simulator never contacts it. Against a real cluster PVE_ACC_ACME_DIRECTORY
// and PVE_ACC_ACME_DOMAIN (the node's FQDN) name a CA that can validate.
func acmeTarget(t *testing.T, e *acctest.Env, node string) (directory, domain string) {
	t.Helper()
	if e.Sim != nil {
		return "https://ca.lab.example/acme/acme/directory", node + ".lab.example"
	}
	directory, domain = os.Getenv("PVE_ACC_ACME_DIRECTORY"), os.Getenv("PVE_ACC_ACME_DOMAIN")
	if directory == "" || domain == "" {
		t.Skip("set PVE_ACC_ACME_DIRECTORY and PVE_ACC_ACME_DOMAIN to order certificates from a real CA")
	}
	return directory, domain
}

func acmeConfig(provider, directory, contact, node, domain, extra string) string {
	return provider + fmt.Sprintf(`
resource "pve_acme_account" "internal" {
  name      = "internal"
  contact   = [%s]
  directory = %q
}

resource "pve_node_acme" "api" {
  node    = %q
  account = pve_acme_account.internal.name
  domains = [{ domain = %q }]
  %s
}
`, contact, directory, node, domain, extra)
}

func TestAccNodeACME_orderRenewImport(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	node := e.Node(t, 1) // not the endpoint's node: its pin must keep matching
	root := rootProvider(t, e)
	directory, domain := acmeTarget(t, e, node)
	const acct, nacme = "pve_acme_account.internal", "pve_node_acme.api"
	var first string
	fallback := nodeSSLFingerprint(t, e, node)
	e.Run(t, resource.TestCase{
		CheckDestroy: func(s *terraform.State) error {
			names, err := e.Client.ACMEAccounts(context.Background())
			if err != nil {
				return err
			}
			if len(names) != 0 {
				return fmt.Errorf("accounts left after destroy: %v", names)
			}
			return presents(e, node, func() string { return fallback })(s)
		},
		Steps: []resource.TestStep{
			{
				Config: acmeConfig(root, directory, `"ops@lab.example"`, node, domain, ""),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(acct, "status", "valid"),
					resource.TestCheckResourceAttrSet(acct, "location"),
					resource.TestCheckResourceAttr(nacme, "account", "internal"),
					resource.TestCheckResourceAttr(nacme, "domains.0.plugin", "standalone"),
					resource.TestCheckResourceAttrSet(nacme, "fingerprint"),
					resource.TestCheckResourceAttrSet(nacme, "not_after"),
					func(s *terraform.State) error {
						first = s.RootModule().Resources[nacme].Primary.Attributes["fingerprint"]
						return nil
					},
					presents(e, node, func() string { return first }),
					func(*terraform.State) error {
						nc, err := e.Client.NodeConfig(context.Background(), node)
						if err != nil {
							return err
						}
						if nc.ACMEAccount != "internal" || nc.ACMEDomains[0].Domain != domain {
							return fmt.Errorf("node config %+v", nc)
						}
						return nil
					},
				),
			},
			{
				// Contact changes in place; a trigger renews in place.
				Config: acmeConfig(root, directory, `"noc@lab.example", "ops@lab.example"`, node, domain, `renew_trigger = "1"`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(acct, plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction(nacme, plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue(nacme, tfjsonPath("fingerprint")),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(acct, "contact.#", "2"),
					func(s *terraform.State) error {
						if fp := s.RootModule().Resources[nacme].Primary.Attributes["fingerprint"]; fp == first {
							return fmt.Errorf("renewal kept fingerprint %s", fp)
						}
						return nil
					},
				),
			},
			{
				// Inside renew_before (the simulated private CA issues 24 h
				// certificates), every plan renews.
				Config: acmeConfig(root, directory, `"noc@lab.example", "ops@lab.example"`, node, domain, `renew_trigger = "1"
  renew_before  = "48h"`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectUnknownValue(nacme, tfjsonPath("fingerprint")),
				}},
				// A window longer than the lifetime: even the fresh
				// certificate is due, so the next plan renews again.
				ExpectNonEmptyPlan: true,
			},
			{
				Config: acmeConfig(root, directory, `"noc@lab.example", "ops@lab.example"`, node, domain, `renew_trigger = "1"
  renew_before  = "1h"`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(nacme, tfjsonPath("renew_before"), knownString("1h")),
				}},
				Check: func(s *terraform.State) error {
					return presents(e, node, func() string { return s.RootModule().Resources[nacme].Primary.Attributes["fingerprint"] })(s)
				},
			},
			{
				Config: acmeConfig(root, directory, `"noc@lab.example", "ops@lab.example"`, node, domain, `renew_trigger = "1"
  renew_before  = "1h"`),
				PlanOnly: true, // outside the window: nothing to do
			},
			{
				ResourceName: acct, ImportState: true, ImportStateId: "internal", ImportStateVerify: true,
			},
			{
				ResourceName: nacme, ImportState: true, ImportStateId: node, ImportStateVerify: true,
				ImportStateVerifyIgnore: []string{"renew_before", "renew_trigger"},
			},
		},
	})
}

func TestAccACMEAccount_needsRoot(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{{
			Config: e.Config(`
resource "pve_acme_account" "le" {
  name    = "le"
  contact = ["ops@lab.example"]
}
`),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)pve_acme_account needs root@pam with a password.*refuses\s+every\s+API\s+token`),
		}},
	})
}

func TestAccACMEAccount_termsOfService(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	if e.Sim == nil {
		t.Skip("registers with Let's Encrypt's directory; simulator only")
	}
	root := rootProvider(t, e)
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				Config: root + `
resource "pve_acme_account" "le" {
  name    = "le"
  contact = ["ops@lab.example"]
}
`,
				ExpectError: regexp.MustCompile(`(?s)Terms of service must be accepted.*set tos_url =\s+"https://letsencrypt\.org/`),
			},
			{
				Config: root + `
resource "pve_acme_account" "le" {
  name    = "le"
  contact = ["ops@lab.example"]
  tos_url = "https://letsencrypt.org/documents/LE-SA-v1.5-February-24-2025.pdf"
}
`,
				Check: resource.TestCheckResourceAttr("pve_acme_account.le", "directory", "https://acme-v02.api.letsencrypt.org/directory"),
			},
		},
	})
}
