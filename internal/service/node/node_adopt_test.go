package node_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

// The node base of the lab built by hand (the internal root CA trusted,
// systemd-journal-upload configured with a Restart=always drop-in, enabled
// and running, pve-daily-update.timer's drop-in, tuned latency-performance) adopted on every node with import
// blocks: imports only, no write, no writing command, empty plan after
// (issue #12).
func TestAccNodeBase_adoptHandBuilt(t *testing.T) {
	t.Parallel()
	if acctest.Live() {
		t.Skip("needs pvesim's hand-built lab")
	}
	e := acctest.HandBuilt(t)
	// The CA the user copied to the nodes: the same file on each.
	ca, ok := e.Sim.NodeFile(e.Node(t, 0), "/usr/local/share/ca-certificates/root-ca-a.crt")
	if !ok {
		t.Fatal("the hand-built lab has no root-ca-a.crt")
	}
	hcl := fmt.Sprintf(`
locals {
  root_ca_a = %q
}
`, string(ca))
	var addrs []string
	for i := range 3 {
		node := e.Node(t, i)
		hcl += fmt.Sprintf(`
resource "pve_node_trusted_ca" "root_ca_a_%[1]s" {
  node = %[1]q
  name = "root-ca-a"
  pem  = local.root_ca_a
}

resource "pve_node_file" "journal_upload_conf_%[1]s" {
  node    = %[1]q
  path    = "/etc/systemd/journal-upload.conf"
  content = <<-EOT
    [Upload]
    URL = https://logs.lab.example:19532/insert/journald
    ServerCertificateFile = -
    ServerKeyFile = -
    TrustedCertificateFile = -
  EOT
}

resource "pve_node_file" "journal_upload_dropin_%[1]s" {
  node          = %[1]q
  path          = "/etc/systemd/system/systemd-journal-upload.service.d/override.conf"
  daemon_reload = true
  content       = <<-EOT
    [Service]
    Restart=always
  EOT
}

resource "pve_node_file" "daily_update_timer_%[1]s" {
  node          = %[1]q
  path          = "/etc/systemd/system/pve-daily-update.timer.d/override.conf"
  daemon_reload = true
  restart_units = ["pve-daily-update.timer"]
  content       = <<-EOT
    [Timer]
    OnCalendar=
    OnCalendar=00/4:00
    RandomizedDelaySec=0
  EOT
}

import {
  to = pve_node_file.daily_update_timer_%[1]s
  id = "%[1]s:/etc/systemd/system/pve-daily-update.timer.d/override.conf?restart_units=pve-daily-update.timer"
}

resource "pve_node_service" "journal_upload_%[1]s" {
  node    = %[1]q
  unit    = "systemd-journal-upload.service"
  enabled = true
  running = true
}

resource "pve_node_tuned_profile" "lab_%[1]s" {
  node    = %[1]q
  profile = "latency-performance"
}

import {
  to = pve_node_trusted_ca.root_ca_a_%[1]s
  id = "%[1]s/root-ca-a"
}

import {
  to = pve_node_file.journal_upload_conf_%[1]s
  id = "%[1]s:/etc/systemd/journal-upload.conf"
}

import {
  to = pve_node_file.journal_upload_dropin_%[1]s
  id = "%[1]s:/etc/systemd/system/systemd-journal-upload.service.d/override.conf"
}

import {
  to = pve_node_service.journal_upload_%[1]s
  id = "%[1]s/systemd-journal-upload.service"
}

import {
  to = pve_node_tuned_profile.lab_%[1]s
  id = %[1]q
}
`, node)
		// restart_units is what the provider does after it writes, not
		// something on the node: the import ID's restart_units option
		// records it, so the timer's drop-in plans no change either. (The
		// drop-ins' daemon_reload import infers from the path.)
		for _, r := range []string{"pve_node_trusted_ca.root_ca_a_", "pve_node_file.journal_upload_conf_", "pve_node_file.journal_upload_dropin_",
			"pve_node_file.daily_update_timer_", "pve_node_service.journal_upload_", "pve_node_tuned_profile.lab_"} {
			addrs = append(addrs, r+node)
		}
	}
	e.Run(t, resource.TestCase{Steps: e.AdoptSteps(e.Config(hcl), addrs...)})
}
