package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The fixtures are trimmed files of real make lab runs (scripts/lab.sh's temp dir):
//   - testdata/reference: make lab (examples/homelab on the reference lab from
//     fresh-install), OK;
//   - testdata/refused-at-plan: make lab LAB=consumer with a LAB_DIR whose precondition
//     refuses each candidate OSD disk at plan, with the measured figures in its message.
// Trimmed: the streams keep a few planned_change/apply_complete lines, the state keeps
// the values the summary reads, pvesim's line keeps node names and addresses, the
// request log its network writes.

func summary(t *testing.T, o options) string {
	t.Helper()
	r, err := load(o)
	if err != nil {
		t.Fatal(err)
	}
	return r.String()
}

func reference(t *testing.T, dir string) options {
	t.Helper()
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return options{
		Dir: dir, Repo: repo, Result: "OK", CLI: "/nonexistent/terraform", CLIVersion: "Terraform v1.11.4",
		Release: "9.1", LabFile: filepath.Join(repo, "examples/labs/reference/lab.json"),
		LabDir: filepath.Join(repo, "examples/homelab"), Work: filepath.Join(dir, "work"),
	}
}

func wantLines(t *testing.T, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("summary lacks %q", w)
		}
	}
	if t.Failed() {
		t.Logf("summary:\n%s", out)
	}
}

func TestSummaryReference(t *testing.T) {
	out := summary(t, reference(t, "testdata/reference"))
	if n := strings.Count(out, "\n"); n > 60 {
		t.Errorf("summary has %d lines, want at most 60:\n%s", n, out)
	}
	wantLines(t, out,
		"lab.sh: OK: examples/homelab on the reference lab (fresh-install, PVE 9.1) with Terraform v1.11.4",
		// The phases with their requests (request-log line counts at their ends) and
		// what the CLI's change summaries said.
		"  get modules                  1.2s         0\n",
		"  plan                         2.5s        19  63 to add, 0 to change, 0 to destroy\n",
		"  apply                        7.7s       245  63 added, 0 changed, 0 destroyed\n",
		"  second plan                  3.5s        27  no changes; drift detected on 2: module.lab.pve_cluster.this (update)",
		"API requests: apply 264 (its plan 19), second plan 27\n",
		// By type, the module's resources (child_modules) counted with the root's.
		"Resources in the state: 63, by type:\n",
		"pve_apt_repository 12, ", "pve_ceph_osd 6, ", "pve_node_file 9, ", "pve_vm 1, pve_vm_disk 1\n",
		"Data sources: 10, by type:\n  pve_ceph_status 1, pve_node_disk_benchmark 6, pve_node_disks 3\n",
		// From the request log: one reload per node, the address now on bridge0.
		"  management cutover: z2g4a 1 reload (172.27.2.10: vmbr0 -> bridge0)\n",
		"  management cutover: z2g4b 1 reload (172.27.2.11: vmbr0 -> bridge0)\n",
		"  management cutover: z2g4c 1 reload (172.27.2.12: vmbr0 -> bridge0)\n",
		"Warnings: 4\n",
		"  Management network change applied on z2g4a (module.lab.pve_node_network_config.this[\"z2g4a\"]): management cutover on z2g4a confirmed",
		"Ceph: HEALTH_OK, 6 OSDs, pool ceph\n",
		"VM 100 vm100 on z2g4a: running, HA started (pve_vm.vm100)\n",
		"Outputs (in the log): ceph, cluster, corosync_addresses, management_addresses, storage_addresses, vm100\n",
		"Log: testdata/reference/lab.log",
		"make lab LAB_KEEP=1",
		"make lab LAB=consumer ",
	)
	// The warning every dev_overrides command gives says nothing about the lab.
	if strings.Contains(out, devOverrides) {
		t.Errorf("summary shows the dev_overrides warning:\n%s", out)
	}
	// Plan and apply give the same warnings: each once.
	if n := strings.Count(out, "Management network change applied on z2g4a"); n != 1 {
		t.Errorf("the z2g4a cutover warning shows %d times, want 1", n)
	}
}

func TestSummaryRefusedAtPlan(t *testing.T) {
	o := reference(t, "testdata/refused-at-plan")
	o.Result = "FAILED"
	o.LabFile = filepath.Join(o.Repo, "examples/labs/consumer/lab.json")
	o.LabName, o.LabDir = "consumer", filepath.Join(o.Repo, "examples/labs/consumer")
	out := summary(t, o)
	if n := strings.Count(out, "\n"); n > 60 {
		t.Errorf("summary has %d lines, want at most 60:\n%s", n, out)
	}
	wantLines(t, out,
		"lab.sh: FAILED at plan (exit status 1): examples/labs/consumer on the consumer lab (fresh-install, PVE 9.1)",
		"  plan                         2.4s        17  FAILED (exit status 1); 29 to add, 0 to change, 0 to destroy\n",
		// The module's OSD gate refuses every drive with its figures, one line per disk,
		// right after the phases.
		"Error: Resource precondition failed (../../modules/pve-ceph-cluster/ceph.tf line 115), 6 times:\n",
		"  - /dev/sdb on cons1 (WDC_WDS480G2G0A-00JH30) sustains 79 sync-write IOPS (4K, queue depth 1, p99 42.2 ms); an OSD needs 2000.",
		"  - /dev/sdc on cons3 (ST600MP0006) sustains 192 sync-write IOPS",
		"  - /dev/sdc on cons2 (WDC_WDS480G2G0A-00JH30) sustains 64 sync-write IOPS",
		"Resources in the plan (no state): 3, by type:\n",
		"  network: cons1 no reload (192.168.10.11 stays on vmbr0)\n",
		"Ceph, VMs: n/a (no state)\n", "State: none\n",
		"make lab LAB=consumer LAB_KEEP=1",
	)
	if n := strings.Count(out, "  - /dev/"); n != 6 {
		t.Errorf("the refusal lists %d disks, want 6:\n%s", n, out)
	}
	if i, j := strings.Index(out, "Error: "), strings.Index(out, "Resources"); i < 0 || i > j {
		t.Errorf("the refusal is not right after the phases:\n%s", out)
	}
	// An error the -json stream explains needs no log tail.
	if strings.Contains(out, "The end of the log") {
		t.Errorf("summary prints a log tail for an explained error:\n%s", out)
	}
}

// A LAB_DIR given is part of the command that runs the lab again.
func TestSummaryLabDirAgain(t *testing.T) {
	o := reference(t, "testdata/refused-at-plan")
	o.LabName, o.LabDirArg = "consumer", "my-config"
	wantLines(t, summary(t, o), "make lab LAB=consumer LAB_DIR=my-config LAB_KEEP=1")
}

// copyFixture copies a fixture dir without the named files.
func copyFixture(t *testing.T, from string, without ...string) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
next:
	for _, e := range entries {
		for _, w := range without {
			if e.Name() == w {
				continue next
			}
		}
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Without the outputs (a configuration that names them otherwise, or has none), Ceph's
// health comes from the pve_ceph_status data source in the state.
func TestSummaryWithoutOutputs(t *testing.T) {
	dir := copyFixture(t, "testdata/reference", fileOutputs)
	out := summary(t, reference(t, dir))
	wantLines(t, out, "Ceph: HEALTH_OK, 6 OSDs\n", "VM 100 vm100 on z2g4a: running, HA started")
	if strings.Contains(out, "Outputs (") {
		t.Errorf("summary names outputs it has not read:\n%s", out)
	}
}

// Without state and request log (the run stopped early) every part says n/a.
func TestSummaryNothingRecorded(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, filePhases), []byte("build\t10\t12.5\t1\t0\t0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, fileLog), []byte("\n===== build =====\ncmd/pvesim/main.go:1:1: expected 'package'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := reference(t, dir)
	o.Result = "FAILED"
	out := summary(t, o)
	wantLines(t, out,
		"lab.sh: FAILED at build (exit status 1)",
		"  build                        2.5s            FAILED (exit status 1)\n",
		"Resources: n/a", "Network: n/a", "Ceph, VMs: n/a (no state)", "State: none",
		// Nothing explains a failed build but its output.
		"The end of the log:\n", "expected 'package'",
	)
}

// A second plan that is not empty fails the lab and names what it would change.
func TestSummarySecondPlanNotEmpty(t *testing.T) {
	dir := copyFixture(t, "testdata/reference")
	b, err := os.ReadFile(filepath.Join(dir, filePhases))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	last := strings.Split(lines[len(lines)-1], "\t")
	last[3] = "2"
	lines[len(lines)-1] = strings.Join(last, "\t")
	change := `{"@level":"info","@message":"pve_vm.vm100: Plan to update","type":"planned_change","change":{"resource":{"addr":"pve_vm.vm100","resource_type":"pve_vm"},"action":"update"}}` + "\n"
	for name, data := range map[string]string{
		filePhases:     strings.Join(lines, "\n") + "\n",
		fileSecondPlan: change,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	o := reference(t, dir)
	o.Result = "FAILED"
	out := summary(t, o)
	wantLines(t, out,
		"the plan after apply is not empty: the provider does not converge",
		"  second plan                  3.5s        27  NOT EMPTY (exit status 2)\n",
		"The second plan would change 1 resources (the plan: in the log):\n  pve_vm.vm100 (update)\n",
	)
}

func TestReadNetwork(t *testing.T) {
	dir := t.TempDir()
	log := strings.Join([]string{
		// Creating the bridge with the address, then a failed and a good reload.
		`{"method":"POST","path":"/nodes/a/network","params":{"iface":"bridge0","cidr":"10.0.0.1/24","type":"bridge"},"status":200}`,
		`{"method":"PUT","path":"/nodes/a/network","params":{},"status":500}`,
		`{"method":"PUT","path":"/nodes/a/network","params":{},"status":200}`,
		// Moved again by an update of an existing interface; a refused one does not count.
		`{"method":"PUT","path":"/nodes/a/network/vlan60","params":{"cidr":"10.0.0.1/24"},"status":200}`,
		`{"method":"PUT","path":"/nodes/a/network/vlan61","params":{"cidr":"10.0.0.1/24"},"status":400}`,
		// Another address on b, and another node's path that only looks alike.
		`{"method":"PUT","path":"/nodes/b/network/eth1","params":{"cidr":"10.1.0.2/24"},"status":200}`,
		`{"method":"PUT","path":"/nodes/b/networkx","params":{},"status":200}`,
		`{"method":"PUT","path":"/nodes/b/network","params":{},"status":200}`,
		`{"method":"PUT","path":"/nodes/b/network","params":{},"status":200}`,
	}, "\n")
	path := filepath.Join(dir, fileRequests)
	if err := os.WriteFile(path, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	got, ok, err := readNetwork(path, []simNode{{"a", "10.0.0.1"}, {"b", "10.0.0.2"}})
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if a := got["a"]; a.Reloads != 1 || a.Holder != "vlan60" {
		t.Errorf("a: %+v, want 1 reload, holder vlan60", *a)
	}
	if b := got["b"]; b.Reloads != 2 || b.Holder != "" {
		t.Errorf("b: %+v, want 2 reloads, no holder", *b)
	}
}

func TestRender(t *testing.T) {
	in := `{"@message":"Terraform 1.11.4","type":"version"}
{"@message":"Error: Resource precondition failed","type":"diagnostic","diagnostic":{"severity":"error","summary":"Resource precondition failed","detail":"cons1:/dev/sdb cannot be an OSD: 79 sync-write IOPS.\n\nSecond paragraph.","range":{"filename":"gate.tf","start":{"line":6}}}}
panic: something broke
`
	var b strings.Builder
	if err := renderStream(strings.NewReader(in), &b); err != nil {
		t.Fatal(err)
	}
	want := "Terraform 1.11.4\n\nError: Resource precondition failed\n  at gate.tf line 6\n\n" +
		"  cons1:/dev/sdb cannot be an OSD: 79 sync-write IOPS.\n\n  Second paragraph.\n\npanic: something broke\n"
	if b.String() != want {
		t.Errorf("render:\n%q\nwant\n%q", b.String(), want)
	}
}

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		s    float64
		want string
	}{{0.04, "0.0s"}, {12.34, "12.3s"}, {59.94, "59.9s"}, {101.2, "1m41s"}, {3599.6, "60m00s"}} {
		if got := duration(c.s); got != c.want {
			t.Errorf("duration(%v) = %q, want %q", c.s, got, c.want)
		}
	}
	for _, c := range []struct {
		n    int
		want string
	}{{0, "0"}, {999, "999"}, {1000, "1,000"}, {1234567, "1,234,567"}} {
		if got := thousands(c.n); got != c.want {
			t.Errorf("thousands(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}
