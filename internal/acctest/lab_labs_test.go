package acctest

import (
	"os"
	"path/filepath"
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
		if q.Method != "GET" && (q.Method != "POST" || q.Path != "/access/ticket") {
			t.Errorf("the refused plan wrote: %s %s", q.Method, q.Path)
		}
	}
	if o := lab.Sim.DiskOverwrites(); len(o) > 0 {
		t.Errorf("a benchmark wrote over a disk that held something: %+v", o)
	}
}

// A destroy run of the homelab: refused at plan while its data is
// protected (var.deletion_protection: VM 100's disk kept on destroy, the
// pool protected), writing nothing; with the protection lifted (an apply of its
// own) it removes the guests, the pool and the OSDs, each OSD drained
// first (out, Ceph's safe-to-destroy, then destroyed), never losing a
// placement group, and stops at Ceph's last monitor, which PVE's API
// cannot remove.
func TestLabDestroyHonoursProtectionAndDrainsOSDs(t *testing.T) {
	lab := NewLab(t, LabOptions{})
	if r := lab.Apply(); r.ExitCode != 0 {
		t.Fatalf("apply failed:\n%s", r.Errors())
	}
	lab.Sim.ResetRequests()
	r := lab.Run("destroy", "-auto-approve", "-input=false")
	if r.ExitCode != 1 || !strings.Contains(r.Errors(), "delete_on_destroy = false") || !strings.Contains(r.Errors(), "Nothing is changed") {
		t.Fatalf("destroy of the protected lab: exit %d, want 1, refused for VM 100's disk (delete_on_destroy = false):\n%s", r.ExitCode, r.Errors())
	}
	for _, q := range lab.Sim.Requests() {
		if q.Method != "GET" && (q.Method != "POST" || q.Path != "/access/ticket") {
			t.Errorf("the refused destroy wrote: %s %s", q.Method, q.Path)
		}
	}
	unprotect := "-var=deletion_protection=false"
	if r := lab.Apply(unprotect); r.ExitCode != 0 {
		t.Fatalf("apply lifting the protection failed:\n%s", r.Errors())
	}
	lab.Sim.ResetRequests()
	// PVE's API cannot purge Ceph: the destroy stops at the last monitor,
	// naming it and the way out, after everything that depends on Ceph.
	r = lab.Run("destroy", "-auto-approve", "-input=false", unprotect)
	if errs := r.Errors(); r.ExitCode != 1 || strings.Count(errs, "Error: ") != 1 || !strings.Contains(errs, "is the last Ceph monitor") {
		t.Fatalf("destroy: exit %d, want 1 with the last monitor's refusal only:\n%s", r.ExitCode, errs)
	}
	if status, _ := lab.Sim.GuestStatus(100); status != "" {
		t.Errorf("VM 100 is still there (%s)", status)
	}
	if _, ok := lab.Sim.CephPoolIDs()["ceph"]; ok {
		t.Error("pool ceph is still there")
	}
	// Each OSD's DELETE comes after its out and a safe-to-destroy check.
	osdPath := regexp.MustCompile(`^/nodes/[^/]+/ceph/osd/([0-9]+)(/out)?$`)
	out, checked := map[string]bool{}, 0
	destroyed := 0
	for _, q := range lab.Sim.Requests() {
		if strings.HasSuffix(q.Path, "/ceph/cmd-safety") && q.Params["action"] == "destroy" {
			checked++
		}
		m := osdPath.FindStringSubmatch(q.Path)
		switch {
		case m == nil:
		case q.Method == "POST" && m[2] == "/out":
			out[m[1]] = true
		case q.Method == "DELETE" && m[2] == "":
			destroyed++
			if !out[m[1]] || checked == 0 {
				t.Errorf("OSD %s destroyed without being marked out and checked safe first", m[1])
			}
		}
	}
	if destroyed != 6 {
		t.Errorf("%d OSDs destroyed, want the lab's 6", destroyed)
	}
	if u := lab.Sim.CephUnsafeDestroys(); len(u) > 0 {
		t.Errorf("OSDs destroyed while they held placement groups: %v", u)
	}
	if l := lab.Sim.CephDataLoss(); len(l) > 0 {
		t.Errorf("placement groups lost: %v", l)
	}
}

// The homelab's OSD gate over every disk of the reference lab: the boot
// disk holds data, so it is refused without a benchmark; the consumer QLC
// NVMe is measured and refused with its figures; the datacenter SSDs pass.
// The plan stops before any write, and fio never ran on a used disk.
func TestLabOSDGateRefusesAtPlan(t *testing.T) {
	lab := NewLab(t, LabOptions{})
	mainTF := filepath.Join(lab.Dir, "main.tf")
	b, err := os.ReadFile(mainTF)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Replace(string(b), `osd_disks = ["/dev/sdb", "/dev/sdc"]`, `osd_disks = ["/dev/sda", "/dev/sdb", "/dev/sdc", "/dev/nvme0n1"]`, 1)
	if all == string(b) {
		t.Fatal(`main.tf: no osd_disks = ["/dev/sdb", "/dev/sdc"] to widen`)
	}
	if err := os.WriteFile(mainTF, []byte(all), 0o600); err != nil {
		t.Fatal(err)
	}
	r := lab.Plan()
	if r.ExitCode != 1 {
		t.Fatalf("plan exit %d, want 1 (refused):\n%s", r.ExitCode, r.Output)
	}
	errs := r.Errors()
	for _, node := range lab.Nodes {
		if !regexp.MustCompile(regexp.QuoteMeta("/dev/sda on "+node) + ` \([^)]+\) holds data \([^\n]*LVM2_member[^\n]*\): it was not benchmarked`).MatchString(errs) {
			t.Errorf("no refusal of %s's boot disk as holding data in:\n%s", node, errs)
		}
		if !regexp.MustCompile(regexp.QuoteMeta("/dev/nvme0n1 on "+node) + ` \([^)]+\) sustains [0-9]{3} sync-write IOPS`).MatchString(errs) {
			t.Errorf("no refusal of %s's QLC NVMe with its figures in:\n%s", node, errs)
		}
	}
	if strings.Contains(errs, "/dev/sdb on") || strings.Contains(errs, "/dev/sdc on") {
		t.Errorf("a datacenter SSD was refused:\n%s", errs)
	}
	if n := strings.Count(errs, "Error: "); n != 2*len(lab.Nodes) {
		t.Errorf("%d errors, want two per node:\n%s", n, errs)
	}
	for _, q := range lab.Sim.Requests() {
		if q.Method != "GET" && (q.Method != "POST" || q.Path != "/access/ticket") {
			t.Errorf("the refused plan wrote: %s %s", q.Method, q.Path)
		}
	}
	if o := lab.Sim.DiskOverwrites(); len(o) > 0 {
		t.Errorf("a benchmark wrote over a disk that held something: %+v", o)
	}
}
