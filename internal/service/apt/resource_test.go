package apt_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

// checkStatus asserts what the node reports for standard repositories:
// "on", "off" or "absent".
func checkStatus(e *acctest.Env, node string, want map[string]string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		repos, err := e.Client.APTRepositories(context.Background(), node)
		if err != nil {
			return err
		}
		for handle, w := range want {
			s := repos.Standard(handle)
			if s == nil {
				return fmt.Errorf("node %s does not offer %s", node, handle)
			}
			got := "absent"
			if s.Status != nil && *s.Status {
				got = "on"
			} else if s.Status != nil {
				got = "off"
			}
			if got != w {
				return fmt.Errorf("node %s reports %s %s, want %s", node, handle, got, w)
			}
		}
		return nil
	}
}

// aptPaths are where a fresh node keeps its repositories: PVE 9 (trixie)
// uses deb822 .sources files, PVE 8 (bookworm) one-line .list files.
type aptPaths struct{ ceph, enterprise, noSubscription, noSubscriptionIndex string }

func pathsOf(t *testing.T, e *acctest.Env) aptPaths {
	t.Helper()
	v, err := e.Client.Version(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(v.Release, "8.") {
		return aptPaths{"/etc/apt/sources.list.d/ceph.list", "/etc/apt/sources.list.d/pve-enterprise.list", "/etc/apt/sources.list", "3"}
	}
	return aptPaths{"/etc/apt/sources.list.d/ceph.sources", "/etc/apt/sources.list.d/pve-enterprise.sources", "/etc/apt/sources.list.d/proxmox.sources", "0"}
}

// The reference lab: no-subscription on, enterprise off, Ceph Squid
// no-subscription on, Ceph Squid enterprise off.
func labConfig(e *acctest.Env, node, cephPath string, enterprise bool) string {
	return e.Config(fmt.Sprintf(`
resource "pve_apt_repository" "no_subscription" {
  node   = %[1]q
  handle = "no-subscription"
}

resource "pve_apt_repository" "enterprise" {
  node    = %[1]q
  handle  = "enterprise"
  enabled = %[2]t
}

resource "pve_apt_repository" "ceph_no_subscription" {
  node   = %[1]q
  handle = "ceph-squid-no-subscription"
}

resource "pve_apt_repository" "ceph_enterprise" {
  node    = %[1]q
  path    = %[3]q
  index   = 0
  enabled = false
}
`, node, enterprise, cephPath))
}

func TestAccAPTRepository_referenceLab(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	if e.Sim == nil {
		t.Skip("changes the node's APT sources; runs against the simulator only")
	}
	node := e.Node(t, 0)
	p := pathsOf(t, e)
	e.Run(t, resource.TestCase{
		// Destroy puts back what was there: added repositories end up
		// disabled (PVE cannot remove entries), existing ones as they were.
		CheckDestroy: checkStatus(e, node, map[string]string{
			"no-subscription": "off", "ceph-squid-no-subscription": "off",
			"enterprise": "on", "ceph-squid-enterprise": "on",
		}),
		Steps: []resource.TestStep{
			{
				Config: labConfig(e, node, p.ceph, false),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("pve_apt_repository.no_subscription", "id", node+"/no-subscription"),
					resource.TestCheckResourceAttr("pve_apt_repository.no_subscription", "enabled", "true"),
					resource.TestCheckResourceAttr("pve_apt_repository.no_subscription", "name", "No-Subscription"),
					resource.TestCheckResourceAttr("pve_apt_repository.no_subscription", "path", p.noSubscription),
					resource.TestCheckResourceAttr("pve_apt_repository.no_subscription", "index", p.noSubscriptionIndex),
					resource.TestCheckResourceAttr("pve_apt_repository.enterprise", "path", p.enterprise),
					resource.TestCheckResourceAttr("pve_apt_repository.ceph_enterprise", "id", node+"/"+p.ceph+":0"),
					resource.TestCheckNoResourceAttr("pve_apt_repository.ceph_enterprise", "name"),
					checkStatus(e, node, map[string]string{
						"no-subscription": "on", "enterprise": "off",
						"ceph-squid-no-subscription": "on", "ceph-squid-enterprise": "off", "test": "absent",
					}),
				),
			},
			{
				ResourceName:      "pve_apt_repository.no_subscription",
				ImportState:       true,
				ImportStateId:     node + "/no-subscription",
				ImportStateVerify: true,
			},
			{
				ResourceName:      "pve_apt_repository.ceph_enterprise",
				ImportState:       true,
				ImportStateId:     node + "/" + p.ceph + ":0",
				ImportStateVerify: true,
			},
			{
				// Toggled in the GUI: the next plan shows it and apply
				// turns it back.
				PreConfig: func() {
					ctx := context.Background()
					if err := e.Client.AddStandardAPTRepository(ctx, node, "enterprise", ""); err != nil {
						t.Fatal(err)
					}
					if err := e.Client.SetAPTRepositoryEnabled(ctx, node, p.ceph, 0, true, ""); err != nil {
						t.Fatal(err)
					}
				},
				Config: labConfig(e, node, p.ceph, false),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("pve_apt_repository.enterprise", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("pve_apt_repository.ceph_enterprise", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("pve_apt_repository.no_subscription", plancheck.ResourceActionNoop),
				}},
				Check: checkStatus(e, node, map[string]string{"enterprise": "off", "ceph-squid-enterprise": "off"}),
			},
			{
				// Toggling in the configuration.
				Config: labConfig(e, node, p.ceph, true),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("pve_apt_repository.enterprise", plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("pve_apt_repository.enterprise", "enabled", "true"),
					checkStatus(e, node, map[string]string{"enterprise": "on", "no-subscription": "on"}),
				),
			},
		},
	})
}

// A standard repository the node does not offer fails at apply with the
// handles the node does offer; nothing is hard-coded in the provider.
func TestAccAPTRepository_unknownHandle(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	node := e.Node(t, 0)
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
		Config: e.Config(fmt.Sprintf(`
resource "pve_apt_repository" "x" {
  node   = %q
  handle = "ceph-pacific-no-subscription"
}
`, node)),
		ExpectError: regexp.MustCompile(`(?s)offers no standard repository "ceph-pacific-no-subscription".*it\s+offers:.*ceph-squid-no-subscription`),
	}}})
}

func TestAccAPTRepository_invalidAtPlan(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	for _, tc := range []struct{ body, want string }{
		{`handle = "no-subscription"
  path = "/etc/apt/sources.list"
  index = 0`, `(?s)handle.*path|path.*handle`},
		{`enabled = true`, `(?s)handle.*path|path.*handle`},
		{`path = "/etc/apt/sources.list.d/ceph.sources"`, `(?s)index`},
		{`path = "/tmp/ceph.sources"
  index = 0`, `(?s)path.*must be /etc/apt/sources.list`},
		{`path = "/etc/apt/sources.list"
  index = -1`, `(?s)index.*at least 0`},
		{`handle = "No Subscription"`, `(?s)handle.*repository handle`},
	} {
		e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
			Config:      e.Config(`resource "pve_apt_repository" "x" {` + "\n  node = \"z2g4a\"\n  " + tc.body + "\n}\n"),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(tc.want),
		}}})
	}
}

func TestAccAPTRepository_missingEntry(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	node := e.Node(t, 0)
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
		Config: e.Config(fmt.Sprintf(`
resource "pve_apt_repository" "x" {
  node  = %q
  path  = "/etc/apt/sources.list.d/ceph.sources"
  index = 7
}
`, node)),
		ExpectError: regexp.MustCompile(`(?s)no APT entry 7 in /etc/apt/sources.list.d/ceph.sources.*it\s+has:`),
	}}})
}

// The reference lab's repositories with the answer to an add (PUT) or an
// enable/disable (POST) lost, before PVE acted or after: read back, sent
// again only when PVE did not do it, one apply converges. A fresh node
// lacks both no-subscription repositories (two adds) and has both
// enterprise ones on (two disables). The reference lab failed "Unable to
// Create APT repository z2g4b/ceph-squid-enterprise ... EOF".
func TestAccAPTRepository_answerLost(t *testing.T) {
	t.Parallel()
	for _, method := range []string{"PUT", "POST"} {
		t.Run(method, func(t *testing.T) {
			t.Parallel()
			acctest.EachDrop(t, func(t *testing.T, drop string) {
				e := acctest.New(t)
				if e.Sim == nil {
					t.Skip("changes the node's APT sources; runs against the simulator only")
				}
				node := e.Node(t, 0)
				p := pathsOf(t, e)
				e.Run(t, e.LostAnswerCase(method, "/nodes/*/apt/repositories", drop, 2, labConfig(e, node, p.ceph, false),
					checkStatus(e, node, map[string]string{
						"no-subscription": "on", "enterprise": "off",
						"ceph-squid-no-subscription": "on", "ceph-squid-enterprise": "off",
					})))
			})
		})
	}
}
