package certificate_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

func pluginConfig(body string) string {
	return fmt.Sprintf("resource \"pve_acme_plugin\" \"dns\" {\n  id = \"lab-dns\"\n%s\n}\n", body)
}

// checkPlugin asserts what PVE stores for lab-dns.
func checkPlugin(e *acctest.Env, check func(*pve.ACMEPlugin) error) resource.TestCheckFunc {
	return func(*terraform.State) error {
		p, err := e.Client.ACMEPlugin(context.Background(), "lab-dns")
		if err != nil {
			return err
		}
		return check(p)
	}
}

func TestAccACMEPlugin_lifecycle(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	const addr = "pve_acme_plugin.dns"
	first := pluginConfig(`
  type             = "dns"
  api              = "pdns"
  data             = { PDNS_Url = "http://ns1.lab.example:8081", PDNS_Token = "s3cret" }
  validation_delay = 0
  nodes            = ["z2g4a", "z2g4b"]
`)
	second := pluginConfig(`
  type    = "dns"
  api     = "pdns"
  data    = { PDNS_Url = "http://ns1.lab.example:8081", PDNS_Token = "rotated" }
  disable = true
`)
	e.Run(t, resource.TestCase{
		CheckDestroy: func(*terraform.State) error {
			_, err := e.Client.ACMEPlugin(context.Background(), "lab-dns")
			if !errors.Is(err, pve.ErrNotFound) {
				return fmt.Errorf("plugin after destroy: %w", err)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: e.Config(first),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "validation_delay", "0"),
					resource.TestCheckNoResourceAttr(addr, "disable"),
					checkPlugin(e, func(p *pve.ACMEPlugin) error {
						if p.Type != "dns" || p.API != "pdns" || p.Data["PDNS_Token"] != "s3cret" || p.ValidationDelay == nil ||
							*p.ValidationDelay != 0 || fmt.Sprint(p.Nodes) != "[z2g4a z2g4b]" || p.Disable {
							return fmt.Errorf("PVE has %+v", p)
						}
						return nil
					}),
				),
			},
			{ResourceName: addr, ImportState: true, ImportStateVerify: true, ImportStateId: "lab-dns"},
			{
				// Rotating the token, dropping the delay and nodes, disabling: in place.
				Config: e.Config(second),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: checkPlugin(e, func(p *pve.ACMEPlugin) error {
					if p.Data["PDNS_Token"] != "rotated" || p.ValidationDelay != nil || len(p.Nodes) != 0 || !p.Disable {
						return fmt.Errorf("PVE has %+v", p)
					}
					return nil
				}),
			},
			{
				// Someone re-enables it and changes the token in the GUI.
				PreConfig: func() {
					p := pve.ACMEPlugin{ID: "lab-dns", API: "pdns", Data: map[string]string{"PDNS_Url": "http://ns1.lab.example:8081", "PDNS_Token": "gui"}}
					if err := e.Client.UpdateACMEPlugin(context.Background(), p, []string{"disable"}, ""); err != nil {
						t.Fatal(err)
					}
				},
				Config:             e.Config(second),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{Config: e.Config(second), Check: checkPlugin(e, func(p *pve.ACMEPlugin) error {
				if p.Data["PDNS_Token"] != "rotated" || !p.Disable {
					return fmt.Errorf("drift not corrected: %+v", p)
				}
				return nil
			})},
		},
	})
}

func TestAccACMEPlugin_invalid(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	for _, tc := range []struct{ name, body, want string }{
		{"dns without api", `type = "dns"`, `(?s)Missing DNS API.*needs .api.`},
		{"standalone with api", "type = \"standalone\"\n api = \"cf\"", `(?s)api.*applies to dns plugins only`},
		{"bad data key", "type = \"dns\"\n api = \"cf\"\n data = { \"CF Token\" = \"x\" }", `acme.sh variable name`},
		{"delay range", "type = \"dns\"\n api = \"cf\"\n validation_delay = 200000", `validation_delay`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
				Config: e.Config(pluginConfig(tc.body)), PlanOnly: true, ExpectError: regexp.MustCompile(tc.want),
			}}})
		})
	}
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
		Config:      e.Config("resource \"pve_acme_plugin\" \"s\" {\n  id   = \"standalone\"\n  type = \"standalone\"\n}\n"),
		PlanOnly:    true,
		ExpectError: regexp.MustCompile(`(?s)id.*standalone`),
	}}})
}
