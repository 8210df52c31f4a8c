package adopt_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/adopt"
	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
)

// nodeBaseImports are the imports of the log's node base on nodes (the
// HCL and IDs of internal/service/node/node_adopt_test.go), plus rings.
func nodeBaseImports(nodes []string, rings ...string) map[string]string {
	want := map[string]string{}
	for _, n := range nodes {
		want[fmt.Sprintf(`pve_node_trusted_ca.lab["%s/root-ca-a"]`, n)] = n + "/root-ca-a"
		want[fmt.Sprintf(`pve_node_file.journal_upload_conf[%q]`, n)] = n + ":/etc/systemd/journal-upload.conf?restart_units=systemd-journal-upload.service&keep_on_destroy=true"
		want[fmt.Sprintf(`pve_node_file.systemd_journal_upload_override[%q]`, n)] = n + ":/etc/systemd/system/systemd-journal-upload.service.d/override.conf?restart_units=systemd-journal-upload.service"
		want[fmt.Sprintf(`pve_node_file.pve_daily_update_timer_override[%q]`, n)] = n + ":/etc/systemd/system/pve-daily-update.timer.d/override.conf?restart_units=pve-daily-update.timer"
		want[fmt.Sprintf(`pve_node_service.systemd_journal_upload[%q]`, n)] = n + "/systemd-journal-upload.service"
		want[fmt.Sprintf(`pve_node_tuned_profile.lab[%q]`, n)] = n
	}
	for _, r := range rings {
		want[fmt.Sprintf(`pve_node_nic_ring.lab[%q]`, r)] = r
	}
	return want
}

func labNodes(t *testing.T, e *acctest.Env, n int) []string {
	var out []string
	for i := range n {
		out = append(out, e.Node(t, i))
	}
	return out
}

// skipsOf are the adoption's skipped objects with their reasons.
func skipsOf(res *adopt.Result) string {
	var b strings.Builder
	for _, s := range res.Skipped {
		fmt.Fprintf(&b, "%s: %s\n", s.Object, s.Reason)
	}
	return b.String()
}

// The node base of the hand-built reference lab: the root CA (its PEM
// once, in the block), journal-upload's configuration, drop-in and
// service, the timer's drop-in (imported with restart_units), tuned; the
// rings set by hand with ethtool listed as not adopted, with their sizes.
// The first plan imports exactly these and changes nothing.
func TestAccAdoptNode(t *testing.T) {
	t.Parallel()
	e := acctest.HandBuiltLab(t, "reference")
	a := adoptEnv(t, e, "node")
	nodes := labNodes(t, e, 3)
	t.Logf("node.tf:\n%s", a.files["node.tf"])
	checkImportsExactly(t, a.res, nodeBaseImports(nodes))

	ca, ok := e.Sim.NodeFile(nodes[0], "/usr/local/share/ca-certificates/root-ca-a.crt")
	if !ok {
		t.Fatal("the hand-built lab has no root-ca-a.crt")
	}
	firstLine, _, _ := strings.Cut(string(ca), "\n")
	rest := strings.Split(strings.TrimSpace(string(ca)), "\n")[1]
	if n := strings.Count(string(a.files["node.tf"]), rest); n != 1 {
		t.Errorf("the CA's PEM (%s) is written %d times in node.tf, want once (in the block)", firstLine, n)
	}
	skips := skipsOf(a.res)
	want := fmt.Sprintf("NIC cx354ap1 rings rx 2048 tx 2048 (%s): set by hand", strings.Join(nodes, ", "))
	if !strings.Contains(skips, want) || !strings.Contains(skips, "pve_node_nic_ring would install pve-nic-ring-cx354ap1.service") {
		t.Errorf("skipped:\n%s\nwant the rings set by hand: %q", skips, want)
	}
	if !strings.Contains(skips, "unit pve-daily-update.timer ("+strings.Join(nodes, ", ")+"): part of PVE's own installation") {
		t.Errorf("skipped:\n%s\nwant pve-daily-update.timer's state left to PVE", skips)
	}
	a.env.Run(t, resource.TestCase{Steps: a.steps(t)})
}

// The diskless lab (four nodes, one without disks) has the same node
// base on every node and no rings set by hand (its storage NIC is no
// ConnectX-3).
func TestAccAdoptNode_diskless(t *testing.T) {
	t.Parallel()
	a := adoptLab(t, "diskless", "node")
	nodes := labNodes(t, a.env, 4)
	checkImportsExactly(t, a.res, nodeBaseImports(nodes))
	if skips := skipsOf(a.res); strings.Contains(skips, "rings") {
		t.Errorf("skipped rings on a lab that set none:\n%s", skips)
	}
	a.env.Run(t, resource.TestCase{Steps: a.steps(t)})
}

// Without SSH the area adopts nothing and says so once, without failing.
func TestAccAdoptNode_withoutSSH(t *testing.T) {
	t.Parallel()
	e := acctest.HandBuiltLab(t, "reference")
	res := runAdoption(t, e, false, "node") // checks that it ran no SSH command
	if len(res.Imports) != 0 {
		t.Errorf("imports without SSH: %v", res.Imports)
	}
	if len(res.Skipped) != 1 || res.Skipped[0].Object != "node files, trusted CAs, tuned" || !strings.HasPrefix(res.Skipped[0].Reason, "need SSH") {
		t.Errorf("skipped = %v, want one entry: node files, trusted CAs, tuned: need SSH", res.Skipped)
	}
}

// Rings kept by the unit pve_node_nic_ring installs are adopted (on the
// node where the resource made them persistent), the others still
// listed.
func TestAccAdoptNode_ringPersisted(t *testing.T) {
	t.Parallel()
	e := acctest.HandBuiltLab(t, "reference")
	nodes := labNodes(t, e, 3)
	ring := fmt.Sprintf(`
resource "pve_node_nic_ring" "storage" {
  node  = %q
  iface = "cx354ap1"
  rx    = 2048
  tx    = 2048
}
`, nodes[0])
	// The user persisted the first node's rings with the resource, then
	// the state was lost (the unit stays).
	e.Run(t, resource.TestCase{Steps: []resource.TestStep{
		{Config: e.Config(ring)},
		acctest.ForgetStep(e.ProviderConfig(), "pve_node_nic_ring.storage"),
	}})
	a := adoptEnv(t, e, "node")
	checkImportsExactly(t, a.res, nodeBaseImports(nodes, nodes[0]+"/cx354ap1"))
	skips := skipsOf(a.res)
	if want := fmt.Sprintf("NIC cx354ap1 rings rx 2048 tx 2048 (%s): set by hand", strings.Join(nodes[1:], ", ")); !strings.Contains(skips, want) {
		t.Errorf("skipped:\n%s\nwant %q", skips, want)
	}
	if strings.Contains(skips, "pve-nic-ring-cx354ap1.service (") || strings.Contains(skips, "/etc/systemd/system/pve-nic-ring-") {
		t.Errorf("the ring unit is listed as not adopted:\n%s", skips)
	}
	a.env.Run(t, resource.TestCase{Steps: a.steps(t)})
}

// What a user did beyond the build log, as root on the nodes: a unit of
// their own (its file and a drop-in with a stray README, enabled and
// started) and getty's autologin drop-in (of a template) on the first node, a CA copied without update-ca-certificates
// on the second, tuned stopped on the third. The unit is adopted with its
// files and state; the README, the CA not in the trust store and the
// tuned without a profile are listed with why.
func TestAccAdoptNode_userChanges(t *testing.T) {
	t.Parallel()
	e := acctest.HandBuiltLab(t, "reference")
	nodes := labNodes(t, e, 3)
	ex := e.NodeExec(t)
	ctx := context.Background()
	ca, _ := e.Sim.NodeFile(nodes[0], "/usr/local/share/ca-certificates/root-ca-a.crt")
	for _, c := range []struct {
		node string
		cmd  *nodeexec.Command
	}{
		{nodes[0], nodeexec.Cmd("install", "-m", "0644", "/dev/stdin", "/etc/systemd/system/lab-backup.service").
			Input([]byte("[Unit]\nDescription=Lab backup\n\n[Service]\nExecStart=/usr/local/bin/lab-backup\n\n[Install]\nWantedBy=multi-user.target\n"))},
		{nodes[0], nodeexec.Cmd("mkdir", "-p", "/etc/systemd/system/lab-backup.service.d")},
		{nodes[0], nodeexec.Cmd("install", "-m", "0644", "/dev/stdin", "/etc/systemd/system/lab-backup.service.d/limits.conf").
			Input([]byte("[Service]\nNice=10\n"))},
		{nodes[0], nodeexec.Cmd("install", "-m", "0644", "/dev/stdin", "/etc/systemd/system/lab-backup.service.d/README").
			Input([]byte("limits.conf: keep backups out of the way\n"))},
		{nodes[0], nodeexec.Cmd("mkdir", "-p", "/etc/systemd/system/getty@.service.d")},
		{nodes[0], nodeexec.Cmd("install", "-m", "0644", "/dev/stdin", "/etc/systemd/system/getty@.service.d/autologin.conf").
			Input([]byte("[Service]\nExecStart=\nExecStart=-/sbin/agetty --autologin root --noclear %I $TERM\n"))},
		{nodes[0], nodeexec.Cmd("systemctl", "daemon-reload")},
		{nodes[0], nodeexec.Cmd("systemctl", "enable", "--now", "lab-backup.service")},
		{nodes[1], nodeexec.Cmd("install", "-m", "0644", "/dev/stdin", "/usr/local/share/ca-certificates/root-ca-b.crt").Input(ca)},
		{nodes[2], nodeexec.Cmd("systemctl", "stop", "tuned.service")},
	} {
		if _, err := ex.Run(ctx, c.node, c.cmd); err != nil {
			t.Fatalf("%s: %v", c.node, err)
		}
	}
	a := adoptEnv(t, e, "node")
	want := nodeBaseImports(nodes)
	delete(want, fmt.Sprintf("pve_node_tuned_profile.lab[%q]", nodes[2]))
	n := nodes[0]
	want[fmt.Sprintf(`pve_node_file.lab_backup_service[%q]`, n)] = n + ":/etc/systemd/system/lab-backup.service"
	want[fmt.Sprintf(`pve_node_file.lab_backup_limits[%q]`, n)] = n + ":/etc/systemd/system/lab-backup.service.d/limits.conf?restart_units=lab-backup.service"
	want[fmt.Sprintf(`pve_node_file.getty_autologin[%q]`, n)] = n + ":/etc/systemd/system/getty@.service.d/autologin.conf"
	want[fmt.Sprintf(`pve_node_service.lab_backup[%q]`, n)] = n + "/lab-backup.service"
	checkImportsExactly(t, a.res, want)
	skips := skipsOf(a.res)
	for _, w := range []string{
		fmt.Sprintf("/etc/systemd/system/lab-backup.service.d/README (%s): systemd reads only the *.conf files", n),
		fmt.Sprintf("/usr/local/share/ca-certificates/root-ca-b.crt (%s): not in the trust store", nodes[1]),
		fmt.Sprintf("tuned (%s): the daemon runs no profile", nodes[2]),
		fmt.Sprintf("unit getty@.service (%s): a template", n),
	} {
		if !strings.Contains(skips, w) {
			t.Errorf("skipped:\n%s\nwant %q", skips, w)
		}
	}
	a.env.Run(t, resource.TestCase{Steps: a.steps(t)})
}

// A member of the diskless lab shut down: what only it holds is listed
// once as not adopted, the other nodes' node base is adopted.
func TestAccAdoptNode_nodeOffline(t *testing.T) {
	t.Parallel()
	e := acctest.HandBuiltLab(t, "diskless")
	nodes := labNodes(t, e, 4)
	off := nodes[3]
	e.Sim.PowerOff(off)
	a := adoptEnv(t, e, "node")
	checkImportsExactly(t, a.res, nodeBaseImports(nodes[:3]))
	if skips := skipsOf(a.res); strings.Count(skips, off) != 1 || !strings.Contains(skips, "files, trusted CAs, units, tuned and NIC rings of node "+off+": the node is offline") {
		t.Errorf("skipped:\n%s\nwant %s listed once as offline", skips, off)
	}
	a.env.Run(t, resource.TestCase{Steps: a.steps(t)})
}
