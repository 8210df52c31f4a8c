package node_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

const (
	svcAddr      = "pve_node_service.upload"
	uploadUnit   = "systemd-journal-upload.service"
	uploadDropIn = "/etc/systemd/system/systemd-journal-upload.service.d/override.conf"
)

// uploadLab is the reference lab's journal upload: its configuration, a
// drop-in with Restart=always, and the service enabled and running,
// restarted when either file changes.
func uploadLab(node, conf, service string) string {
	return fmt.Sprintf(`
resource "pve_node_file" "upload_conf" {
  node    = %[1]q
  path    = "/etc/systemd/journal-upload.conf"
  content = %[2]s
}

resource "pve_node_file" "upload_dropin" {
  node          = %[1]q
  path          = %[3]q
  content       = "[Service]\nRestart=always\n"
  daemon_reload = true
}

resource "pve_node_service" "upload" {
  node = %[1]q
  unit = %[4]q
%[5]s
  triggers = {
    conf   = pve_node_file.upload_conf.sha256
    dropin = pve_node_file.upload_dropin.sha256
  }
}
`, node, hcl(conf), uploadDropIn, uploadUnit, service)
}

func TestAccNodeService_journalUpload(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	requireNodeWrites(t, e)
	node := e.Node(t, 0)
	on := "  enabled = true\n  running = true"
	restarts := func() int {
		if e.Sim == nil {
			return -1
		}
		return count(sshLines(e, node), "systemctl restart "+uploadUnit)
	}
	expectRestarts := func(n int) resource.TestCheckFunc {
		return func(*terraform.State) error {
			if got := restarts(); got >= 0 && got != n {
				return fmt.Errorf("%d restarts of %s, want %d: %q", got, uploadUnit, n, sshLines(e, node))
			}
			return nil
		}
	}
	resetLog := func() {
		if e.Sim != nil {
			e.Sim.ResetSSHCommands()
		}
	}
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				Config: e.Config(uploadLab(node, uploadConfV1, on)),
				Check: resource.ComposeTestCheckFunc(
					checkUnit(t, e, node, uploadUnit, map[string]string{"UnitFileState": "enabled", "ActiveState": "active", "NeedDaemonReload": "no"}),
					resource.TestCheckResourceAttr(svcAddr, "id", node+"/"+uploadUnit),
				),
			},
			{ResourceName: svcAddr, ImportState: true, ImportStateId: node + "/" + uploadUnit, ImportStateVerify: true,
				ImportStateVerifyIgnore: []string{"triggers"}},
			// The configuration changes: one restart, through the trigger.
			{
				PreConfig: resetLog,
				Config:    e.Config(uploadLab(node, uploadConfV2, on)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(svcAddr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeTestCheckFunc(
					checkFile(t, e, node, uploadConf, uploadConfV2),
					checkUnit(t, e, node, uploadUnit, map[string]string{"ActiveState": "active"}),
					expectRestarts(1),
				),
			},
			// Drift: stopped and disabled by an admin.
			{
				PreConfig: func() {
					outside(t, e, node, "systemctl", "disable", "--now", uploadUnit)()
					resetLog()
				},
				Config:   e.Config(uploadLab(node, uploadConfV2, on)),
				PlanOnly: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(svcAddr, plancheck.ResourceActionUpdate),
				}},
				ExpectNonEmptyPlan: true,
			},
			// Repaired with enable and start, without a restart.
			{
				Config: e.Config(uploadLab(node, uploadConfV2, on)),
				Check: resource.ComposeTestCheckFunc(
					checkUnit(t, e, node, uploadUnit, map[string]string{"UnitFileState": "enabled", "ActiveState": "active"}),
					expectRestarts(0),
				),
			},
			// Stopped and disabled on purpose.
			{
				Config: e.Config(uploadLab(node, uploadConfV2, "  enabled = false\n  running = null")),
				Check:  checkUnit(t, e, node, uploadUnit, map[string]string{"UnitFileState": "disabled", "ActiveState": "active"}),
			},
		},
	})
	// Destroy leaves the unit as it was.
	if e.Sim != nil {
		if en, act, _ := e.Sim.UnitState(node, uploadUnit); en != "disabled" || act != "active" {
			t.Errorf("after destroy the uploader is %s/%s", en, act)
		}
	}
}

func svcConfig(node, unit, extra string) string {
	return fmt.Sprintf(`
resource "pve_node_service" "this" {
  node = %q
  unit = %q
%s
}
`, node, unit, extra)
}

func TestAccNodeService_errors(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	node := e.Node(t, 2)
	plan := func(unit, extra, want string) resource.TestStep {
		return resource.TestStep{Config: e.Config(svcConfig(node, unit, extra)), PlanOnly: true, ExpectError: errRE(want)}
	}
	apply := func(unit, extra, want string) resource.TestStep {
		return resource.TestStep{Config: e.Config(svcConfig(node, unit, extra)), ExpectError: errRE(want)}
	}
	steps := []resource.TestStep{
		plan("systemd-journal-upload", "  running = true", `Invalid unit.*unit name with its type suffix, such as systemd-journal-upload.service`),
		plan("ssh.service; reboot", "  running = true", `Invalid unit`),
		plan("ssh.service", "", `Missing Attribute Configuration.*\[enabled,running\]`),
		plan("ssh.service", "  running = false\n  triggers = { a = \"1\" }", `triggers on a stopped unit`),
		{Config: e.ProviderConfigWithoutSSH(t) + svcConfig(node, "ssh.service", "  running = true"), PlanOnly: true,
			ExpectError: errRE(`pve_node_service needs SSH access to the nodes`)},
		apply("no-such-thing.service", "  running = true", `Unable to Create service `+node+`/no-such-thing.service.*has no unit no-such-thing.service.*LoadState=not-found`),
		apply("systemd-journald.service", "  enabled = true", `systemd-journald.service is static.*no \[Install\] section`),
	}
	if e.Sim != nil {
		steps = append(steps,
			resource.TestStep{
				PreConfig:   func() { e.Sim.SetUnitState(node, "postfix.service", "masked", "inactive") },
				Config:      e.Config(svcConfig(node, "postfix.service", "  running = true")),
				ExpectError: errRE(`postfix.service is masked on node ` + node + `; it can be neither started nor enabled`),
			},
			resource.TestStep{
				PreConfig: func() {
					e.Sim.InjectSSHFault(pvesim.SSHFault{Node: node, Program: "systemctl", Args: "start ksmtuned.service", Answer: &pvesim.SSHAnswer{
						Stderr:   "Job for ksmtuned.service failed because the control process exited with error code.\nSee \"systemctl status ksmtuned.service\" and \"journalctl -xeu ksmtuned.service\" for details.\n",
						ExitCode: 1,
					}})
					e.Sim.SetUnitState(node, "ksmtuned.service", "enabled", "failed")
				},
				Config:      e.Config(svcConfig(node, "ksmtuned.service", "  running = true")),
				ExpectError: errRE(`Unable to Create service ` + node + `/ksmtuned.service.*systemctl start ksmtuned.service: exit status 1.*control process exited`),
			},
		)
	}
	e.Run(t, resource.TestCase{Steps: steps})
}
