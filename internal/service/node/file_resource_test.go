package node_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

const fileAddr = "pve_node_file.this"

// fileConfig is a pve_node_file with extra attribute lines.
func fileConfig(node, path, extra string) string {
	return fmt.Sprintf(`
resource "pve_node_file" "this" {
  node = %q
  path = %q
%s
}
`, node, path, extra)
}

// hcl quotes s as an HCL string literal: escapes for quotes,
// backslashes and control characters, and ${ and %{ doubled so that
// nothing is interpolated.
func hcl(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04x`, r)
		case (r == '$' || r == '%') && strings.HasPrefix(s[i+1:], "{"):
			b.WriteRune(r)
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// checkStat asserts a file's mode and owner as stat reports them.
func checkStat(t *testing.T, e *acctest.Env, node, path, want string) resource.TestCheckFunc {
	ex := e.NodeExec(t)
	return func(*terraform.State) error {
		res, err := ex.Run(context.Background(), node, nodeexec.Cmd("stat", "-c", "%a %U:%G", "--", path))
		if err != nil {
			return err
		}
		if got := strings.TrimSpace(string(res.Stdout)); got != want {
			return fmt.Errorf("node %s: %s is %s, want %s", node, path, got, want)
		}
		return nil
	}
}

const (
	uploadConf   = "/etc/systemd/journal-upload.conf"
	uploadConfV1 = "[Upload]\nURL=https://logs.lab.example:19532/insert/journald\nServerCertificateFile=-\nServerKeyFile=-\nTrustedCertificateFile=-\n"
	uploadConfV2 = "[Upload]\nURL=https://logs2.lab.example:19532/insert/journald\nServerCertificateFile=-\nServerKeyFile=-\nTrustedCertificateFile=-\n"
)

// The reference lab's journal-upload.conf: written, imported, changed
// (restarting the running uploader once, not on an empty plan), drift
// in content, mode and existence repaired, removed on destroy.
func TestAccNodeFile_lifecycle(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	requireNodeWrites(t, e)
	node := e.Node(t, 0)
	units := `  restart_units = ["systemd-journal-upload.service"]`
	v1 := e.Config(fileConfig(node, uploadConf, "  content = "+hcl(uploadConfV1)+"\n"+units))
	v2 := e.Config(fileConfig(node, uploadConf, "  content = "+hcl(uploadConfV2)+"\n"+units+"\n  mode = \"0640\"\n  group = \"adm\""))
	restarts := func() int { return count(sshLines(e, node), "systemctl try-restart systemd-journal-upload.service") }
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				PreConfig: outside(t, e, node, "systemctl", "start", "systemd-journal-upload.service"),
				Config:    v1,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(fileAddr, tfjsonpath.New("sha256"), knownvalue.StringExact(sum(uploadConfV1))),
				}},
				Check: resource.ComposeTestCheckFunc(
					checkFile(t, e, node, uploadConf, uploadConfV1),
					checkStat(t, e, node, uploadConf, "644 root:root"),
				),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(fileAddr, tfjsonpath.New("id"), knownvalue.StringExact(node+":"+uploadConf)),
				},
			},
			{ResourceName: fileAddr, ImportState: true, ImportStateId: node + ":" + uploadConf, ImportStateVerify: true,
				ImportStateVerifyIgnore: []string{"restart_units"}},
			{
				PreConfig: func() {
					if e.Sim != nil {
						e.Sim.ResetSSHCommands()
					}
				},
				Config: v2,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(fileAddr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeTestCheckFunc(
					checkFile(t, e, node, uploadConf, uploadConfV2),
					checkStat(t, e, node, uploadConf, "640 root:adm"),
					func(*terraform.State) error {
						if e.Sim != nil && restarts() != 1 {
							return fmt.Errorf("the change restarted the uploader %d times, want once: %q", restarts(), sshLines(e, node))
						}
						return nil
					},
				),
			},
			// No change, no restart.
			{Config: v2, PlanOnly: true, Check: func(*terraform.State) error {
				if e.Sim != nil && restarts() != 1 {
					return fmt.Errorf("an empty plan restarted the uploader")
				}
				return nil
			}},
			// Drift: content edited on the node.
			{
				PreConfig: func() {
					if err := writeOutside(e.NodeExec(t), node, uploadConf, uploadConfV2+"Compression=zstd\n"); err != nil {
						t.Fatal(err)
					}
				},
				Config:   v2,
				PlanOnly: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(fileAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(fileAddr, tfjsonpath.New("content"), knownvalue.StringExact(uploadConfV2)),
				}},
				ExpectNonEmptyPlan: true,
			},
			{Config: v2, Check: resource.ComposeTestCheckFunc(
				checkFile(t, e, node, uploadConf, uploadConfV2),
				checkStat(t, e, node, uploadConf, "640 root:adm"),
			)},
			// Drift: the file is gone.
			{
				PreConfig: outside(t, e, node, "rm", "-f", "--", uploadConf),
				Config:    v2,
				PlanOnly:  true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(fileAddr, plancheck.ResourceActionCreate),
				}},
				ExpectNonEmptyPlan: true,
			},
			{Config: v2, Check: checkFile(t, e, node, uploadConf, uploadConfV2)},
		},
		CheckDestroy: checkNoFile(t, e, node, uploadConf),
	})
}

// Content arrives byte for byte whatever it holds, as does a path with
// spaces, quotes and shell syntax; binary content through
// content_base64. Nothing of the content appears on a command line.
func TestAccNodeFile_hostileValues(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	requireNodeWrites(t, e)
	node := e.Node(t, 1)
	hostile := "it's \"quoted\" $(reboot) `id` ${HOME} %{x} ; rm -rf / && echo | tee\n\\n not a newline\r\nünïcode ✓\n\n  trailing spaces  \ttab\x01no final newline"
	hostilePath := "/etc/pvelab test/it's $(reboot);`id` & \"x\".conf"
	binary := make([]byte, 256)
	for i := range binary {
		binary[i] = byte(i)
	}
	cfg := e.Config(fileConfig(node, hostilePath, "  content = "+hcl(hostile)) +
		`
resource "pve_node_file" "bin" {
  node           = "` + node + `"
  path           = "/usr/local/share/pvelab/blob.bin"
  content_base64 = "` + base64.StdEncoding.EncodeToString(binary) + `"
  mode           = "0600"
}
`)
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				Config: cfg,
				Check: resource.ComposeTestCheckFunc(
					checkFile(t, e, node, hostilePath, hostile),
					checkFile(t, e, node, "/usr/local/share/pvelab/blob.bin", string(binary)),
					checkStat(t, e, node, "/usr/local/share/pvelab/blob.bin", "600 root:root"),
					resource.TestCheckResourceAttr(fileAddr, "sha256", sum(hostile)),
					resource.TestCheckResourceAttr("pve_node_file.bin", "sha256", sum(string(binary))),
				),
			},
			{ResourceName: fileAddr, ImportState: true, ImportStateId: node + ":" + hostilePath, ImportStateVerify: true},
			{ResourceName: "pve_node_file.bin", ImportState: true, ImportStateId: node + ":/usr/local/share/pvelab/blob.bin", ImportStateVerify: true},
		},
	})
	if e.Sim == nil {
		return
	}
	if got, ok := e.Sim.NodeFile(node, hostilePath); ok {
		t.Errorf("%s survived destroy: %q", hostilePath, got)
	}
	viaStdin := false
	for _, c := range e.Sim.SSHCommands() {
		if strings.Contains(c.Line, "rm -rf") || strings.Contains(c.Line, "trailing spaces") {
			t.Errorf("content on a command line: %q", c.Line)
		}
		if c.Argv == nil {
			t.Errorf("the node's shell refused a command: %q", c.Line)
		}
		if len(c.Argv) > 0 && c.Argv[0] == "install" && string(c.Stdin) == hostile {
			viaStdin = true
		}
		// The path arrives as one argument, exactly.
		if len(c.Argv) > 0 && c.Argv[0] == "mv" && c.Argv[len(c.Argv)-1] != hostilePath && strings.Contains(c.Line, "pvelab test") {
			t.Errorf("mv target %q, want %q", c.Argv[len(c.Argv)-1], hostilePath)
		}
	}
	if !viaStdin {
		t.Error("no install received the content on its standard input")
	}
}

// A systemd drop-in needs daemon_reload; the reference lab's timer
// drop-in and the uploader's Restart=always.
func TestAccNodeFile_dropInDaemonReload(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	requireNodeWrites(t, e)
	node := e.Node(t, 2)
	timerDropIn := "/etc/systemd/system/pve-daily-update.timer.d/override.conf"
	timer := func(reload bool, calendar string) string {
		return e.Config(fileConfig(node, timerDropIn, fmt.Sprintf("  content = %s\n  daemon_reload = %t\n  restart_units = [\"pve-daily-update.timer\"]",
			hcl("[Timer]\nOnCalendar=\nOnCalendar="+calendar+"\nRandomizedDelaySec=0\n"), reload)))
	}
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			// Without daemon_reload systemd keeps the old timer.
			{Config: timer(false, "00/4:00"), Check: checkUnit(t, e, node, "pve-daily-update.timer", map[string]string{"NeedDaemonReload": "yes"})},
			{Config: timer(true, "00/6:00"), Check: resource.ComposeTestCheckFunc(
				checkUnit(t, e, node, "pve-daily-update.timer", map[string]string{"NeedDaemonReload": "no", "ActiveState": "active"}),
				checkFile(t, e, node, timerDropIn, "[Timer]\nOnCalendar=\nOnCalendar=00/6:00\nRandomizedDelaySec=0\n"),
			)},
		},
		// Destroy removes the drop-in and reloads systemd.
		CheckDestroy: resource.ComposeTestCheckFunc(
			checkNoFile(t, e, node, timerDropIn),
			checkUnit(t, e, node, "pve-daily-update.timer", map[string]string{"NeedDaemonReload": "no"}),
		),
	})
	if e.Sim != nil {
		lines := sshLines(e, node)
		if i, j := lastIndex(lines, "systemctl daemon-reload"), lastIndex(lines, "systemctl try-restart pve-daily-update.timer"); i < 0 || j < i {
			t.Errorf("destroy: daemon-reload at %d, restart at %d: %q", i, j, lines)
		}
	}
}

func lastIndex(lines []string, line string) int {
	for i := len(lines) - 1; i >= 0; i-- {
		if lines[i] == line {
			return i
		}
	}
	return -1
}

// A failed restart leaves the file written and is repeated by the next
// apply.
func TestAccNodeFile_failedRestartIsRepeated(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	requireSim(t, e, "injects a failing systemctl")
	node := e.Node(t, 0)
	cfg := func(content string) string {
		return e.Config(fileConfig(node, uploadConf, "  content = "+hcl(content)+"\n  restart_units = [\"systemd-journal-upload.service\"]"))
	}
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{Config: cfg(uploadConfV1)},
			{
				PreConfig: func() {
					e.Sim.InjectSSHFault(pvesim.SSHFault{Node: node, Program: "systemctl", Args: "try-restart .*", Count: 1, Answer: &pvesim.SSHAnswer{
						Stderr: "Job for systemd-journal-upload.service failed because the control process exited with error code.\n", ExitCode: 1,
					}})
				},
				Config:      cfg(uploadConfV2),
				ExpectError: errRE(`Unable to Update file ` + node + `:` + uploadConf + `.*the file is written, but running its units failed \(the next apply repeats it\).*control process exited`),
			},
			{
				Config:             cfg(uploadConfV2),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				Check:              checkFile(t, e, node, uploadConf, uploadConfV2),
			},
			{
				PreConfig: func() { e.Sim.ResetSSHCommands() },
				Config:    cfg(uploadConfV2),
				Check: func(*terraform.State) error {
					if n := count(sshLines(e, node), "systemctl try-restart systemd-journal-upload.service"); n != 1 {
						return fmt.Errorf("the repeated apply restarted %d times: %q", n, sshLines(e, node))
					}
					return nil
				},
			},
		},
	})
}

// A symbolic link is not replaced; keep_on_destroy leaves the file.
func TestAccNodeFile_linkRefusedAndKeepOnDestroy(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	requireSim(t, e, "fakes a symbolic link in the simulator")
	node := e.Node(t, 1)
	e.Sim.InjectSSHFault(pvesim.SSHFault{Node: node, Program: "stat", Args: `.* /etc/default/linked`, Answer: &pvesim.SSHAnswer{
		Stdout: "777|root|root|symbolic link\n",
	}})
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				Config:      e.Config(fileConfig(node, "/etc/default/linked", `  content = "x"`)),
				ExpectError: errRE(`/etc/default/linked on node ` + node + ` is a symbolic link, not a regular file; pve_node_file does not replace it`),
			},
			{Config: e.Config(fileConfig(node, "/etc/default/kept", "  content = \"KEEP=1\\n\"\n  keep_on_destroy = true"))},
		},
		CheckDestroy: checkFile(t, e, node, "/etc/default/kept", "KEEP=1\n"),
	})
	if _, ok := e.Sim.NodeFile(node, "/etc/default/linked"); ok {
		t.Error("a file was written over the link")
	}
}

func TestAccNodeFile_planErrors(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	node := e.Node(t, 2)
	step := func(path, extra, want string) resource.TestStep {
		return resource.TestStep{Config: e.Config(fileConfig(node, path, extra)), PlanOnly: true, ExpectError: errRE(want)}
	}
	content := `  content = "x"`
	steps := []resource.TestStep{
		step("/etc/pve/storage.cfg", content, `Path not allowed.*"/etc/pve/storage.cfg": it is the cluster file system \(pmxcfs\)`),
		step("/etc/shadow", content, `Path not allowed.*holds password hashes`),
		step("/etc/sudoers.d/terraform", content, `Path not allowed.*controls sudo`),
		step("/etc/network/interfaces", content, `Path not allowed.*pve_node_network`),
		step("/etc/ceph/ceph.conf", content, `Path not allowed.*managed by pveceph`),
		step("/etc/ssh/ssh_host_ed25519_key", content, `Path not allowed.*SSH host key`),
		step("/usr/local/share/ca-certificates/root-ca-a.crt", content, `Path not allowed.*use pve_node_trusted_ca`),
		step("/etc/systemd/system/pve-nic-ring-cx354ap1.service", content, `Path not allowed.*pve_node_nic_ring`),
		step("/etc/hosts", content, `Path not allowed.*hosts`),
		step("/var/lib/vz/snippets/x", content, `Path not allowed.*outside the trees pve_node_file manages \(/etc/ and /usr/local/\)`),
		step("/etc/default/../shadow", content, `Path not allowed.*must be a clean path.*"/etc/shadow"`),
		step("etc/default/x", content, `Path not allowed.*absolute`),
		step("/etc/default/x", "", `Missing Attribute Configuration.*Exactly one of these attributes must be configured: \[content,content_base64\]`),
		step("/etc/default/x", content+"\n  content_base64 = \"eA==\"", `Invalid Attribute Combination`),
		step("/etc/default/x", `  content_base64 = "not base64!"`, `Invalid content_base64.*not standard base64`),
		step("/etc/default/x", content+"\n  mode = \"0999\"", `Invalid mode.*octal`),
		step("/etc/default/x", content+"\n  owner = \"root;id\"", `Invalid owner.*user name`),
		step("/etc/default/x", content+"\n  restart_units = [\"ssh; reboot\"]", `unit name with its type suffix`),
		step("/etc/default/x", content+"\n  reload_units = [\"nginx\"]", `unit name with its type suffix, such as`),
		{Config: e.ProviderConfigWithoutSSH(t) + fileConfig(node, "/etc/default/x", content), PlanOnly: true,
			ExpectError: errRE(`pve_node_file needs SSH access to the nodes`)},
	}
	if e.Sim != nil {
		// The node refuses an owner it does not have, with install's text.
		steps = append(steps, resource.TestStep{Config: e.Config(fileConfig(node, "/etc/default/x", content+"\n  owner = \"nosuchuser\"")),
			ExpectError: errRE(`Unable to Create file ` + node + `:/etc/default/x.*install: invalid user 'nosuchuser'`)})
	}
	e.Run(t, resource.TestCase{Steps: steps})
}
