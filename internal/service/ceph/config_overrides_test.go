package ceph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
)

// checkBackfillsShown waits (at most 30 s) until `ceph config show
// <daemon>` reports osd_max_backfills = value from source: the manager
// learns what a restarted daemon uses a few seconds after it started (real
// Ceph 16), so the check polls.
func checkBackfillsShown(t *testing.T, e *acctest.Env, daemon, value, source string) resource.TestCheckFunc {
	const key = "osd_max_backfills"
	ex := e.NodeExec(t)
	return func(*terraform.State) error {
		var last string
		for deadline := time.Now().Add(30 * time.Second); ; {
			res, err := ex.Run(context.Background(), e.Nodes[1], nodeexec.Cmd("ceph", "config", "show", daemon, "--format", "json"))
			if err != nil {
				last = err.Error()
			} else {
				var entries []struct{ Name, Value, Source string }
				if err := json.Unmarshal(res.Stdout, &entries); err != nil {
					return fmt.Errorf("ceph config show %s: %w", daemon, err)
				}
				last = "no entry (the compiled-in default)"
				for _, en := range entries {
					if en.Name == key {
						last = fmt.Sprintf("%q from %q", en.Value, en.Source)
						if en.Value == value && en.Source == source {
							return nil
						}
					}
				}
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("ceph config show %s: %s is %s, want %q from %q", daemon, key, last, value, source)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
}

// A key in ceph.conf hides the configuration database's value from the
// daemons that read the file (Ceph's order of sources): a config_db setting
// that ceph.conf also sets for the same daemons warns at plan and at apply,
// and `ceph config show` keeps reporting the file's value. Once the line is
// gone from ceph.conf and the OSDs restarted, the database's value is used.
func TestAccCephConfig_fileOverridesDatabase(t *testing.T) {
	t.Parallel()
	e := cephConfigEnv(t, 10, true)
	node := e.Node(t, 0)
	file := func(settings map[string]string) string {
		return cephConfigHCL("file", node, "osd", "ceph_conf", settings, "  apply = \"rolling_restart\"\n")
	}
	db := cephConfigHCL("db", node, "osd", "", map[string]string{"osd_max_backfills": "2"}, "")
	overridden := regexp.MustCompile(`(?s)ceph\.conf overrides osd_max_backfills for osd.*` +
		`/etc/pve/ceph\.conf sets osd_max_backfills = 3 in \[osd\].*keep "3" and not the database's "2"`)
	tc := resource.TestCase{}
	rec := acctest.RecordDiagnostics(&tc)
	tc.Steps = []resource.TestStep{
		{
			// ceph.conf first: the OSDs restart onto it.
			Config: e.Config(file(map[string]string{"osd_max_backfills": "3"})),
			Check:  checkBackfillsShown(t, e, "osd.0", "3", "file"),
		},
		{
			// The database's value cannot win: said at plan and at apply.
			PreConfig: rec.Reset,
			Config:    e.Config(file(map[string]string{"osd_max_backfills": "3"}), db),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("pve_ceph_config.db", plancheck.ResourceActionCreate),
				rec.ExpectWarning(overridden),
			}},
			Check: resource.ComposeAggregateTestCheckFunc(
				rec.CheckApplyWarning(overridden),
				checkDB(t, e, "osd", map[string]string{"osd_max_backfills": "2"}),
				checkBackfillsShown(t, e, "osd.4", "3", "file"),
			),
		},
		{
			// The line leaves ceph.conf; the restart brings the database's value.
			Config: e.Config(file(map[string]string{"bdev_enable_discard": "false"}), db),
			Check: resource.ComposeAggregateTestCheckFunc(
				checkBackfillsShown(t, e, "osd.0", "2", "mon"),
				checkBackfillsShown(t, e, "osd.5", "2", "mon"),
			),
		},
	}
	e.Run(t, tc)
}
