package acctest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

// What a no-change plan costs (issue #14): reads are shared per node and
// kind within the provider's run, so the homelab's plan reads each kind
// once (per node where the kind is per node), and a VM with its disks
// costs one request (its config, shared by the VM and disk resources):
// N VMs × 2 disks cost N + k requests, k independent of N.

// planRequests runs a plan that must be empty and returns the requests it
// made.
func planRequests(t *testing.T, lab *Lab, args ...string) []pvesim.Request {
	t.Helper()
	lab.Sim.ResetRequests()
	if r := lab.Plan(args...); r.ExitCode != 0 {
		t.Fatalf("plan not empty (exit %d):\n%s\n%s", r.ExitCode, r.PlannedChanges(), r.Errors())
	}
	return lab.Sim.Requests()
}

var numSegRE = regexp.MustCompile(`^[0-9]+$`)

// requestKind is a request's method and path with node names as {node}
// and numbers as {id}: "GET /nodes/{node}/qemu/{id}/pending".
func requestKind(r pvesim.Request, nodes []string) string {
	segs := strings.Split(strings.Trim(r.Path, "/"), "/")
	for i, s := range segs {
		for _, n := range nodes {
			if s == n {
				segs[i] = "{node}"
			}
		}
		if numSegRE.MatchString(s) {
			segs[i] = "{id}"
		}
	}
	return r.Method + " /" + strings.Join(segs, "/")
}

func requestLines(reqs []pvesim.Request) string {
	var b strings.Builder
	for _, r := range reqs {
		fmt.Fprintf(&b, "  %s %s %v\n", r.Method, r.Path, r.Params)
	}
	return b.String()
}

// The homelab's no-change plan: one login, then only GETs, each kind of
// read once, or once per node for what PVE lists per node (network, APT
// repositories, disks); the six OSDs' metadata is one cluster-wide read
// and the cluster's status, node list and corosync node list are read
// once for the cluster and both member resources.
func TestLabNoChangePlanReadsEachKindOnce(t *testing.T) {
	lab := NewLab(t, LabOptions{})
	if r := lab.Apply(); r.ExitCode != 0 {
		t.Fatalf("apply failed:\n%s", r.Errors())
	}
	reqs := planRequests(t, lab)
	perKind := map[string]int{}
	for _, r := range reqs {
		switch {
		case r.Method == "POST" && r.Path == "/access/ticket":
		case r.Method != "GET":
			t.Errorf("a plan wrote: %s %s", r.Method, r.Path)
		}
		perKind[requestKind(r, lab.Nodes)]++
	}
	var dup []string
	for k, n := range perKind {
		limit := 1
		if strings.Contains(k, "{node}") {
			limit = len(lab.Nodes)
		}
		if n > limit {
			dup = append(dup, fmt.Sprintf("%s ×%d (at most %d)", k, n, limit))
		}
	}
	sort.Strings(dup)
	if len(dup) > 0 {
		t.Errorf("reads repeated within one plan:\n  %s\nall %d requests:\n%s", strings.Join(dup, "\n  "), len(reqs), requestLines(reqs))
	}
	if n := perKind["GET /nodes/{node}/ceph/osd/{id}/metadata"]; n > 0 {
		t.Errorf("%d per-OSD metadata reads; the cluster's metadata has every OSD's", n)
	}
	t.Logf("homelab no-change plan: %d requests, %d kinds", len(reqs), len(perKind))
}

// benchVMs is make bench's guests (internal/bench/testdata/vms):
// var.bench_vms stopped VMs with two disks each beside the homelab, ids
// from 1000, one per node in turn (on all three nodes for every N ≥ 3).
func benchVMs(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "bench", "testdata", "vms", "vms.tf"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A no-change plan over N VMs × 2 disks costs N + k requests with k the
// same for two N: one request per VM (its config and pending changes,
// which the VM and both disk resources share), no per-disk or per-VM
// listing of the cluster; the per-node VM lists are in k.
func TestLabNoChangePlanFlatInVMs(t *testing.T) {
	lab := NewLab(t, LabOptions{Files: map[string]string{"bench_vms.tf": benchVMs(t)}})
	k := map[int]int{}
	for _, n := range []int{3, 9} {
		arg := fmt.Sprintf("-var=bench_vms=%d", n)
		lab.Sim.ResetRequests()
		if r := lab.Apply("-parallelism=20", arg); r.ExitCode != 0 {
			t.Fatalf("apply with %d VMs failed:\n%s", n, r.Errors())
		}
		if n == 9 {
			checkVMCreateRequests(t, lab.Sim.Requests(), 1003, 1008)
		}
		reqs := planRequests(t, lab, arg)
		perVM := map[string]int{}
		for _, r := range reqs {
			// The extra VMs' ids are 1000 and up (VM 100 is the homelab's).
			if _, rest, ok := strings.Cut(r.Path, "/qemu/"); ok {
				if id, _, _ := strings.Cut(rest, "/"); len(id) == 4 {
					perVM[id]++
				}
			}
		}
		if len(perVM) != n {
			t.Errorf("%d VMs: requests name %d of them: %v", n, len(perVM), perVM)
		}
		for id, c := range perVM {
			if c != 1 {
				t.Errorf("%d VMs: VM %s and its disks cost %d requests, want 1", n, id, c)
			}
		}
		k[n] = len(reqs) - n
		t.Logf("%d VMs × 2 disks: plan %d requests = N + %d", n, len(reqs), k[n])
		if t.Failed() {
			t.Fatalf("requests:\n%s", requestLines(reqs))
		}
	}
	if k[3] != k[9] {
		t.Errorf("the plan is not flat in N: N + %d requests at N = 3, N + %d at N = 9", k[3], k[9])
	}
}

// checkVMCreateRequests checks what an apply that created VMs from..to
// with two disks each asked of them: past the VM's create (POST .../qemu
// and its task), each disk's attach is one config write answered when
// its worker ended (background_delay, no task status read) and one
// read-back, and the VM's read-back is its config with pending changes:
// 5 requests naming the VM, none before a write (the disks start from
// the VM's read-back, under its lock), no search for its node.
func checkVMCreateRequests(t *testing.T, reqs []pvesim.Request, from, to int) {
	t.Helper()
	perVM := map[int][]string{}
	configTaskReads := 0
	for _, r := range reqs {
		if strings.Contains(r.Path, "/tasks/") && strings.Contains(r.Path, ":qmconfig:") {
			configTaskReads++
		}
		_, rest, ok := strings.Cut(r.Path, "/qemu/")
		if !ok {
			continue
		}
		idText, sub, _ := strings.Cut(rest, "/")
		id, err := strconv.Atoi(idText)
		if err != nil || id < from || id > to {
			continue
		}
		kind := r.Method + " " + sub
		if r.Method == "POST" && sub == "config" && r.Params["background_delay"] == "" {
			kind += " without background_delay"
		}
		perVM[id] = append(perVM[id], kind)
	}
	want := []string{"GET pending", "GET pending", "GET pending", "POST config", "POST config"}
	for id := from; id <= to; id++ {
		got := perVM[id]
		sort.Strings(got)
		if !slices.Equal(got, want) {
			t.Errorf("VM %d and its two disks: requests naming it %v, want %v", id, got, want)
		}
	}
	if configTaskReads != 0 {
		t.Errorf("%d task reads of qmconfig tasks: the disks' config writes should be answered when their workers end", configTaskReads)
	}
	if t.Failed() {
		t.Logf("requests:\n%s", requestLines(reqs))
	}
}
