package adopt_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/adopt"
	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
)

// adoptRunning runs the adoption of areas on an environment already
// started (adoptLab starts its own), with or without SSH, and returns it
// with the SSH commands the adoption ran.
func adoptRunning(t *testing.T, e *acctest.Env, withSSH bool, areas ...string) (*adopted, int) {
	t.Helper()
	from, sshFrom := len(e.Sim.Requests()), len(e.Sim.SSHCommands())
	cfg := adopt.Config{Endpoint: e.Endpoint(), Password: e.RootPassword(), TLSFingerprint: e.TLSFingerprint()}
	if withSSH {
		cfg.SSH = &adopt.SSHConfig{PrivateKey: e.SSHClientKey(), KnownHostsFile: e.KnownHosts, Nodes: e.SSHEndpoints()}
	}
	res, err := adopt.Run(context.Background(), cfg,
		adopt.Options{Areas: areas, Provider: adopt.ProviderSettings{Endpoint: e.Endpoint(), TLSFingerprint: e.TLSFingerprint()}})
	if err != nil {
		t.Fatalf("adopt: %v", err)
	}
	checkNoWrites(t, e, from, sshFrom, "the adoption")
	cmds := e.Sim.SSHCommands()[sshFrom:]
	ran := len(cmds)
	tally := map[string]int{}
	for _, c := range cmds {
		if f := strings.Fields(c.Line); len(f) > 1 {
			tally[f[0]+" "+f[1]]++
		}
	}
	t.Logf("the adoption ran %d SSH commands: %v", ran, tally)
	files := res.Render()
	var names []string
	for n := range files {
		if strings.HasSuffix(n, ".tf") && n != "main.tf" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var hcl strings.Builder
	for _, n := range names {
		fmt.Fprintf(&hcl, "# --- %s\n%s\n", n, files[n])
	}
	return &adopted{env: e, res: res, files: files, config: e.Config(hcl.String())}, ran
}

// wantImports fails unless the adoption's import IDs are exactly want.
func wantImports(t *testing.T, res *adopt.Result, want []string) {
	t.Helper()
	var got []string
	for _, im := range res.Imports {
		got = append(got, im.To+" = "+im.ID)
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("imports:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// nodeBaseImports are the imports of the log's node base on nodes (the
// HCL and IDs of internal/service/node/node_adopt_test.go), plus rings.
func nodeBaseImports(nodes []string, rings ...string) []string {
	var want []string
	for _, n := range nodes {
		want = append(want,
			fmt.Sprintf(`pve_node_trusted_ca.lab["%s/root-ca-a"] = %s/root-ca-a`, n, n),
			fmt.Sprintf(`pve_node_file.journal_upload_conf[%q] = %s:/etc/systemd/journal-upload.conf?restart_units=systemd-journal-upload.service&keep_on_destroy=true`, n, n),
			fmt.Sprintf(`pve_node_file.systemd_journal_upload_override[%q] = %s:/etc/systemd/system/systemd-journal-upload.service.d/override.conf?restart_units=systemd-journal-upload.service`, n, n),
			fmt.Sprintf(`pve_node_file.pve_daily_update_timer_override[%q] = %s:/etc/systemd/system/pve-daily-update.timer.d/override.conf?restart_units=pve-daily-update.timer`, n, n),
			fmt.Sprintf(`pve_node_service.systemd_journal_upload[%q] = %s/systemd-journal-upload.service`, n, n),
			fmt.Sprintf(`pve_node_tuned_profile.lab[%q] = %s`, n, n))
	}
	for _, r := range rings {
		want = append(want, fmt.Sprintf(`pve_node_nic_ring.lab[%q] = %s`, r, r))
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
	a, ran := adoptRunning(t, e, true, "node")
	nodes := labNodes(t, e, 3)
	t.Logf("node.tf (%d SSH commands):\n%s", ran, a.files["node.tf"])
	wantImports(t, a.res, nodeBaseImports(nodes))

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
	wantImports(t, a.res, nodeBaseImports(nodes))
	if skips := skipsOf(a.res); strings.Contains(skips, "rings") {
		t.Errorf("skipped rings on a lab that set none:\n%s", skips)
	}
	a.env.Run(t, resource.TestCase{Steps: a.steps(t)})
}

// Without SSH the area adopts nothing and says so once, without failing.
func TestAccAdoptNode_withoutSSH(t *testing.T) {
	t.Parallel()
	e := acctest.HandBuiltLab(t, "reference")
	a, ran := adoptRunning(t, e, false, "node")
	if ran != 0 {
		t.Errorf("the adoption ran %d SSH commands without SSH", ran)
	}
	if len(a.res.Imports) != 0 {
		t.Errorf("imports without SSH: %v", a.res.Imports)
	}
	if len(a.res.Skipped) != 1 || a.res.Skipped[0].Object != "node files, trusted CAs, tuned" || !strings.HasPrefix(a.res.Skipped[0].Reason, "need SSH") {
		t.Errorf("skipped = %v, want one entry: node files, trusted CAs, tuned: need SSH", a.res.Skipped)
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
	a, _ := adoptRunning(t, e, true, "node")
	wantImports(t, a.res, nodeBaseImports(nodes, nodes[0]+"/cx354ap1"))
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
	a, _ := adoptRunning(t, e, true, "node")
	var want []string
	for _, im := range nodeBaseImports(nodes) {
		if !strings.HasPrefix(im, fmt.Sprintf("pve_node_tuned_profile.lab[%q]", nodes[2])) {
			want = append(want, im)
		}
	}
	n := nodes[0]
	want = append(want,
		fmt.Sprintf(`pve_node_file.lab_backup_service[%q] = %s:/etc/systemd/system/lab-backup.service`, n, n),
		fmt.Sprintf(`pve_node_file.lab_backup_limits[%q] = %s:/etc/systemd/system/lab-backup.service.d/limits.conf`, n, n),
		fmt.Sprintf(`pve_node_file.getty_autologin[%q] = %s:/etc/systemd/system/getty@.service.d/autologin.conf`, n, n),
		fmt.Sprintf(`pve_node_service.lab_backup[%q] = %s/lab-backup.service`, n, n))
	wantImports(t, a.res, want)
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
	a, _ := adoptRunning(t, e, true, "node")
	wantImports(t, a.res, nodeBaseImports(nodes[:3]))
	if skips := skipsOf(a.res); strings.Count(skips, off) != 1 || !strings.Contains(skips, "files, trusted CAs, units, tuned and NIC rings of node "+off+": the node is offline") {
		t.Errorf("skipped:\n%s\nwant %s listed once as offline", skips, off)
	}
	a.env.Run(t, resource.TestCase{Steps: a.steps(t)})
}
