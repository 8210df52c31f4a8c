package node_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

// The import ID's options record what the provider does after it writes
// (restart_units, reload_units), which the node cannot tell: imported so,
// the hand-built timer drop-in plans no change. Without the option the
// same configuration plans an update of restart_units alone.
func TestAccNodeFile_importOptions(t *testing.T) {
	t.Parallel()
	e := acctest.HandBuilt(t)
	node := e.Node(t, 0)
	const p = "/etc/systemd/system/pve-daily-update.timer.d/override.conf"
	config := func(id string) string {
		return e.Config(fmt.Sprintf(`
resource "pve_node_file" "timer" {
  node          = %[1]q
  path          = %[2]q
  daemon_reload = true
  restart_units = ["pve-daily-update.timer"]
  reload_units  = ["pvescheduler.service", "cron.service"]
  content       = "[Timer]\nOnCalendar=\nOnCalendar=00/4:00\nRandomizedDelaySec=0\n"
}

import {
  to = pve_node_file.timer
  id = %[3]q
}
`, node, p, id))
	}
	withOpts := node + ":" + p + "?restart_units=pve-daily-update.timer&reload_units=pvescheduler.service,cron.service"
	e.Run(t, resource.TestCase{Steps: append(e.AdoptSteps(config(withOpts), "pve_node_file.timer"),
		acctest.ForgetStep(e.ProviderConfig(), "pve_node_file.timer"))})
}

// Without the option, restart_units is the one change the first plan
// shows (what the option is for).
func TestAccNodeFile_importWithoutOptionsUpdates(t *testing.T) {
	t.Parallel()
	e := acctest.HandBuilt(t)
	node := e.Node(t, 0)
	config := e.Config(fmt.Sprintf(`
resource "pve_node_file" "timer" {
  node          = %[1]q
  path          = "/etc/systemd/system/pve-daily-update.timer.d/override.conf"
  daemon_reload = true
  restart_units = ["pve-daily-update.timer"]
  content       = "[Timer]\nOnCalendar=\nOnCalendar=00/4:00\nRandomizedDelaySec=0\n"
}

import {
  to = pve_node_file.timer
  id = "%[1]s:/etc/systemd/system/pve-daily-update.timer.d/override.conf"
}
`, node))
	e.Run(t, resource.TestCase{Steps: append(e.AdoptStepsUpdating(config, nil, []string{"pve_node_file.timer"}),
		acctest.ForgetStep(e.ProviderConfig(), "pve_node_file.timer"))})
}

// Bad options are refused with what is valid.
func TestAccNodeFile_importOptionsInvalid(t *testing.T) {
	t.Parallel()
	e := acctest.HandBuilt(t)
	node := e.Node(t, 0)
	for _, c := range []struct{ opts, want string }{
		{"?restart=pve-daily-update.timer", `unknown import option "restart": valid options are keep_on_destroy, reload_units, restart_units`},
		{"?restart_units=pve-daily-update", `"pve-daily-update" is not a systemd unit name with its type suffix`},
		{"?restart_units=a.timer,a.timer", `a.timer is given twice`},
		{"?restart_units=a.timer&restart_units=b.timer", `import option "restart_units" is given 2 times`},
	} {
		t.Run(c.opts, func(t *testing.T) {
			e.Run(t, resource.TestCase{Steps: []resource.TestStep{{
				Config: e.Config(fmt.Sprintf(`
resource "pve_node_file" "timer" {
  node    = %[1]q
  path    = "/etc/systemd/system/pve-daily-update.timer.d/override.conf"
  content = ""
}

import {
  to = pve_node_file.timer
  id = "%[1]s:/etc/systemd/system/pve-daily-update.timer.d/override.conf%[2]s"
}
`, node, c.opts)),
				// Terraform wraps the message: any space may be a newline.
				ExpectError: regexp.MustCompile(strings.ReplaceAll(regexp.QuoteMeta(c.want), " ", `\s+`)),
			}}})
		})
	}
}
