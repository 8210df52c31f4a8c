package node_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
)

// The reference-lab examples of the node resources apply together on a
// simulated lab node, a second plan is empty, and so is the plan after the
// node rebooted.
func TestAccNodeResourceExamples(t *testing.T) {
	t.Parallel()
	e := acctest.New(t)
	requireSim(t, e, "applies the examples to a node of the simulated lab")
	var hclText strings.Builder
	for _, typ := range []string{"pve_node_nic_ring", "pve_node_trusted_ca", "pve_node_file", "pve_node_service"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "resources", typ, "resource.tf"))
		if err != nil {
			t.Fatal(err)
		}
		hclText.Write(b)
		hclText.WriteString("\n")
	}
	ca := testCert(t, "pvelab root CA A", true)
	cfg := strings.Replace(hclText.String(), `file("${path.module}/root-ca-a.crt")`, hcl(ca), 1)
	if cfg == hclText.String() {
		t.Fatal("the trusted CA example no longer reads root-ca-a.crt")
	}
	// terraform-plugin-testing cannot read for_each state: the examples
	// run for one node, with for_each dropped and each.key replaced.
	const node = "z2g4b"
	forEach := regexp.MustCompile(`(?m)^\s*for_each\s*=.*\n`)
	if len(forEach.FindAllString(cfg, -1)) < 6 {
		t.Fatalf("the examples changed shape; adapt this test:\n%s", cfg)
	}
	cfg = forEach.ReplaceAllString(cfg, "")
	cfg = strings.ReplaceAll(cfg, "[each.key]", "")
	cfg = strings.ReplaceAll(cfg, "each.key", `"`+node+`"`)
	checks := resource.ComposeTestCheckFunc(
		checkRings(t, e, node, "cx354ap1", 2048, 2048),
		checkTrusted(t, e, node, "root-ca-a", ca),
		checkUnit(t, e, node, "systemd-journal-upload.service", map[string]string{"UnitFileState": "enabled", "ActiveState": "active", "NeedDaemonReload": "no"}),
		checkUnit(t, e, node, "pve-daily-update.timer", map[string]string{"NeedDaemonReload": "no"}),
		checkFile(t, e, node, "/etc/systemd/journal-upload.conf",
			"[Upload]\nURL=https://logs.lab.example:19532/insert/journald\nServerCertificateFile=-\nServerKeyFile=-\nTrustedCertificateFile=-\n"),
	)
	e.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{Config: e.Config(cfg), Check: checks},
			// Everything survives a reboot of the node.
			{PreConfig: func() { e.Sim.RebootNode(node) }, Config: e.Config(cfg), PlanOnly: true, Check: checks},
		},
	})
}
