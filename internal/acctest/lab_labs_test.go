package acctest

import (
	"regexp"
	"strings"
	"testing"
)

// The labs of examples/labs through the same module as examples/homelab
// (examples/modules/pve-ceph-cluster), each from its lab file's starting
// state (fresh-install).

// The diskless lab: four nodes, Ceph on the three with a disk, and a VM
// on the diskless one whose disk is on the pool. One apply, an empty
// second plan; the OSD gate measured the free disks and nothing else.
func TestLabDisklessConverges(t *testing.T) {
	lab := NewLab(t, LabOptions{Lab: "diskless", ConfigDir: "examples/labs/diskless"})
	if r := lab.Apply(); r.ExitCode != 0 {
		t.Fatalf("apply failed:\n%s", r.Errors())
	}
	if r := lab.Plan(); r.ExitCode != 0 {
		t.Fatalf("second plan not empty (exit %d):\n%s\n%s", r.ExitCode, r.PlannedChanges(), r.Errors())
	}
	if status, node := lab.Sim.GuestStatus(200); node != "jpl-proxmox6" || status != "running" {
		t.Errorf("VM 200 is %q on %q, want running on the diskless jpl-proxmox6", status, node)
	}
	if o := lab.Sim.DiskOverwrites(); len(o) > 0 {
		t.Errorf("a benchmark wrote over a disk that held something: %+v", o)
	}
}

// The consumer-drives lab: the plan stops before anything is written,
// naming each of the six candidate drives with what it measured and what
// an OSD needs; fio never ran on a disk that held anything.
func TestLabConsumerRefusedAtPlan(t *testing.T) {
	lab := NewLab(t, LabOptions{Lab: "consumer", ConfigDir: "examples/labs/consumer"})
	r := lab.Plan()
	if r.ExitCode != 1 {
		t.Fatalf("plan exit %d, want 1 (refused):\n%s", r.ExitCode, r.Output)
	}
	errs := r.Errors()
	for _, node := range []string{"cons1", "cons2", "cons3"} {
		for _, dev := range []string{"/dev/sdb", "/dev/sdc"} {
			re := regexp.MustCompile(regexp.QuoteMeta(dev+" on "+node) + ` \([^)]+\) sustains [0-9]+ sync-write IOPS \(4K, queue depth 1, p99 [0-9.]+ ms\); an OSD needs 2000`)
			if !re.MatchString(errs) {
				t.Errorf("no refusal of %s on %s with its figures in:\n%s", dev, node, errs)
			}
		}
	}
	if n := strings.Count(errs, "Error: "); n != 6 {
		t.Errorf("%d errors, want the six drives':\n%s", n, errs)
	}
	for _, q := range lab.Sim.Requests() {
		if q.Method != "GET" && !(q.Method == "POST" && q.Path == "/access/ticket") {
			t.Errorf("the refused plan wrote: %s %s", q.Method, q.Path)
		}
	}
	if o := lab.Sim.DiskOverwrites(); len(o) > 0 {
		t.Errorf("a benchmark wrote over a disk that held something: %+v", o)
	}
}
