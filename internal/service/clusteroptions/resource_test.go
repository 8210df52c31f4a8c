package clusteroptions_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

const addr = "pve_cluster_options.this"

// checkPVE asserts what PVE reports, not what Terraform stored.
func checkPVE(e *acctest.Env, check func(*pve.ClusterOptions) error) resource.TestCheckFunc {
	return func(*terraform.State) error {
		o, err := e.Client.ClusterOptions(context.Background())
		if err != nil {
			return err
		}
		return check(o)
	}
}

func wantObject(o *pve.ClusterOptions, key string, want map[string]string) error {
	got := o.Object(key, "")
	if fmt.Sprint(got) != fmt.Sprint(want) {
		return fmt.Errorf("PVE reports %s = %v, want %v", key, got, want)
	}
	return nil
}

func TestAccClusterOptions_lifecycle(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	full := e.Config(`
resource "pve_cluster_options" "this" {
  migration = {
    type    = "secure"
    network = "169.254.50.0/24"
  }
  ha_shutdown_policy = "migrate"
  crs = {
    ha                    = "static"
    ha_rebalance_on_start = true
  }
  bwlimit = {
    clone   = 102400
    restore = 51200
  }
  next_id = {
    lower = 1000
    upper = 2000
  }
  tag_style = {
    shape     = "full"
    color_map = "prod:ff0000"
  }
  keyboard    = "de"
  max_workers = 4
  email_from  = "pve@example.com"
  mac_prefix  = "BC:24:11:5"
  description = <<-EOT
    Reference lab.
    Managed by Terraform.
  EOT
}
`)
	e.Run(t, resource.TestCase{
		CheckDestroy: checkPVE(e, func(o *pve.ClusterOptions) error {
			for _, k := range []string{"migration", "ha", "crs", "bwlimit", "next-id", "tag-style", "keyboard", "max_workers", "email_from"} {
				if o.Has(k) {
					return fmt.Errorf("%s still set after destroy: %s", k, o.Raw[k])
				}
			}
			if o.String("mac_prefix") != "BC:24:11" || o.String("description") != "" {
				return fmt.Errorf("after destroy: mac_prefix %q description %q", o.String("mac_prefix"), o.String("description"))
			}
			return nil
		}),
		Steps: []resource.TestStep{
			{
				Config: full,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "id", "cluster"),
					resource.TestCheckResourceAttr(addr, "migration.network", "169.254.50.0/24"),
					resource.TestCheckResourceAttr(addr, "crs.ha_rebalance_on_start", "true"),
					resource.TestCheckResourceAttr(addr, "bwlimit.clone", "102400"),
					resource.TestCheckNoResourceAttr(addr, "bwlimit.move"),
					resource.TestCheckResourceAttr(addr, "description", "Reference lab.\nManaged by Terraform.\n"),
					checkPVE(e, func(o *pve.ClusterOptions) error {
						for k, want := range map[string]map[string]string{
							"migration": {"type": "secure", "network": "169.254.50.0/24"},
							"ha":        {"shutdown_policy": "migrate"},
							"crs":       {"ha": "static", "ha-rebalance-on-start": "1"},
							"bwlimit":   {"clone": "102400", "restore": "51200"},
							"next-id":   {"lower": "1000", "upper": "2000"},
							"tag-style": {"shape": "full", "color-map": "prod:ff0000"},
						} {
							if err := wantObject(o, k, want); err != nil {
								return err
							}
						}
						if o.String("keyboard") != "de" || o.String("max_workers") != "4" || o.String("mac_prefix") != "BC:24:11:5" {
							return fmt.Errorf("PVE reports %v", o.Raw)
						}
						return nil
					}),
				),
			},
			{
				ResourceName:      addr,
				ImportState:       true,
				ImportStateId:     "cluster",
				ImportStateVerify: true,
			},
			{
				// Changing one sub-key rewrites the property string.
				Config: e.Config(`
resource "pve_cluster_options" "this" {
  migration = {
    type    = "insecure"
    network = "169.254.50.0/24"
  }
  ha_shutdown_policy = "freeze"
  keyboard           = "en-us"
}
`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "migration.type", "insecure"),
					resource.TestCheckNoResourceAttr(addr, "crs"),
					resource.TestCheckResourceAttr(addr, "mac_prefix", "BC:24:11"),
					// Options left out are deleted, not sent empty.
					checkPVE(e, func(o *pve.ClusterOptions) error {
						if err := wantObject(o, "migration", map[string]string{"type": "insecure", "network": "169.254.50.0/24"}); err != nil {
							return err
						}
						for _, k := range []string{"crs", "bwlimit", "next-id", "tag-style", "max_workers", "email_from"} {
							if o.Has(k) {
								return fmt.Errorf("%s still set: %s", k, o.Raw[k])
							}
						}
						if o.String("mac_prefix") != "BC:24:11" || o.String("description") != "" || o.String("keyboard") != "en-us" {
							return fmt.Errorf("PVE reports %v", o.Raw)
						}
						return nil
					}),
				),
			},
			{
				// Drift: changed in the GUI, shown in the next plan.
				PreConfig: func() {
					err := e.Client.UpdateClusterOptions(context.Background(), map[string]string{"keyboard": "fr", "console": "xtermjs", "migration": "secure"}, nil)
					if err != nil {
						t.Fatal(err)
					}
				},
				Config:             e.Config(`resource "pve_cluster_options" "this" {}`),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				// Everything unset: applying removes the drift as well.
				Config: e.Config(`resource "pve_cluster_options" "this" {}`),
				Check: checkPVE(e, func(o *pve.ClusterOptions) error {
					for _, k := range []string{"keyboard", "console", "migration", "ha"} {
						if o.Has(k) {
							return fmt.Errorf("%s still set: %s", k, o.Raw[k])
						}
					}
					return nil
				}),
			},
		},
	})
}

// The drift step above proves only that some plan is not empty; this one
// checks the plan names the changed attribute.
func TestAccClusterOptions_driftNamesAttribute(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	cfg := e.Config(`
resource "pve_cluster_options" "this" {
  ha_shutdown_policy = "migrate"
}
`)
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				PreConfig: func() {
					if err := e.Client.UpdateClusterOptions(context.Background(), map[string]string{"ha": "shutdown_policy=freeze"}, nil); err != nil {
						t.Fatal(err)
					}
				},
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(addr, tfjsonpath.New("ha_shutdown_policy"), knownvalue.StringExact("migrate")),
				}},
				Check: checkPVE(e, func(o *pve.ClusterOptions) error {
					return wantObject(o, "ha", map[string]string{"shutdown_policy": "migrate"})
				}),
			},
		},
	})
}

func TestAccClusterOptions_invalidAtPlan(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	for _, tc := range []struct{ body, want string }{
		{`migration = { type = "fast" }`, `(?s)migration.type.*value must be one of`},
		{`migration = { type = "secure", network = "169.254.50.0" }`, `(?s)Invalid CIDR.*169.254.50.0`},
		{`ha_shutdown_policy = "later"`, `(?s)ha_shutdown_policy.*value must be one of`},
		{`mac_prefix = "BD:24:11"`, `(?s)mac_prefix.*unicast MAC address prefix`},
		{`next_id = { lower = 5000, upper = 2000 }`, `next_id.lower \(5000\) must be less than next_id.upper`},
		{`next_id = { lower = 2000000 }`, `next_id.lower \(2000000\) must be less than next_id.upper`},
		{`bwlimit = {}`, `(?s)Empty bwlimit`},
		{`bwlimit = { clone = -1 }`, `(?s)bwlimit.clone.*at least 0`},
		{`email_from = "nobody"`, `(?s)email_from.*email address`},
		{`console = "applet"`, `(?s)console.*value must be one of`},
	} {
		e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
			Config:      e.Config(`resource "pve_cluster_options" "this" {` + "\n  " + tc.body + "\n}\n"),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(tc.want),
		}}})
	}
}

func TestAccClusterOptions_httpProxy(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
		Config: e.Config(`resource "pve_cluster_options" "this" { http_proxy = "http://proxy:3128/" }`),
		Check: resource.ComposeAggregateTestCheckFunc(
			resource.TestCheckResourceAttr(addr, "http_proxy", "http://proxy:3128/"),
			checkPVE(e, func(o *pve.ClusterOptions) error {
				if o.String("http_proxy") != "http://proxy:3128/" {
					return fmt.Errorf("PVE reports http_proxy %q", o.String("http_proxy"))
				}
				return nil
			}),
		),
	}}})
}

func TestAccClusterOptions_importRejectsOtherIDs(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
		Config:        e.Config(`resource "pve_cluster_options" "this" {}`),
		ResourceName:  addr,
		ImportState:   true,
		ImportStateId: "datacenter",
		ExpectError:   regexp.MustCompile(`import it with the ID "cluster"`),
	}}})
}

// The reference lab's options written with the answer lost, before PVE
// acted or after: the PUT sets values absolutely, so it is sent again and
// the apply converges (PVE took it twice when the first one took effect).
func TestAccClusterOptions_answerLost(t *testing.T) {
	t.Parallel()
	acctest.EachDrop(t, func(t *testing.T, drop string) {
		e := acctest.New(t)
		if e.Sim == nil {
			t.Skip("drops connections: runs against the simulator only")
		}
		cfg := e.Config(`
resource "pve_cluster_options" "this" {
  migration = {
    type    = "secure"
    network = "169.254.50.0/24"
  }
  ha_shutdown_policy = "migrate"
}
`)
		puts := 1
		if drop == "drop-after" {
			puts = 2
		}
		e.Run(t, e.LostAnswerCase("PUT", "/cluster/options", drop, puts, cfg, checkPVE(e, func(o *pve.ClusterOptions) error {
			return wantObject(o, "migration", map[string]string{"type": "secure", "network": "169.254.50.0/24"})
		})))
	})
}
