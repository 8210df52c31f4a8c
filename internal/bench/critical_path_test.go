package bench

import (
	"math"
	"testing"
	"time"

	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

func TestCriticalPathHonoursDependenciesParallelismAndSerialGroups(t *testing.T) {
	insts := []Instance{
		{Addr: "pve_a.x"},
		{Addr: "pve_b.x", DependsOn: []string{"pve_a.x"}},
		{Addr: "pve_c.x"},
		{Addr: `pve_mon.m["1"]`},
		{Addr: `pve_mon.m["2"]`},
		{Addr: "pve_none.x", DependsOn: []string{"pve_b.x"}},
	}
	a := Attribution{
		Work:  map[string]float64{"pve_a.x": 10, "pve_b.x": 5, "pve_c.x": 3, `pve_mon.m["1"]`: 4, `pve_mon.m["2"]`: 4},
		Group: map[string]string{`pve_mon.m["1"]`: "mon", `pve_mon.m["2"]`: "mon"},
	}
	for _, tc := range []struct {
		par  int
		want float64
	}{{10, 15}, {1, 26}, {2, 15}} {
		if got := CriticalPath(insts, a, tc.par); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("parallelism %d: critical path %v, want %v", tc.par, got, tc.want)
		}
	}
	a.Group = nil
	if got := CriticalPath(insts, a, 10); got != 15 {
		t.Errorf("without groups: %v, want 15", got)
	}
	a.Work[`pve_mon.m["1"]`], a.Group = 20, map[string]string{`pve_mon.m["1"]`: "mon", `pve_mon.m["2"]`: "mon"}
	if got := CriticalPath(insts, a, 10); got != 24 {
		t.Errorf("serialised monitors of 20+4: %v, want 24", got)
	}
}

func TestAttributePrefersHintedTypeNodeAndID(t *testing.T) {
	t0 := time.Unix(1000, 0)
	sec := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	insts := []Instance{
		{Addr: `pve_vm.v["101"]`, Type: "pve_vm", Node: "a", IDs: []string{"101"}},
		{Addr: `pve_vm.v["102"]`, Type: "pve_vm", Node: "a", IDs: []string{"102"}},
		{Addr: `pve_node_network.n["a"]`, Type: "pve_node_network", Node: "a"},
	}
	times := map[string]Interval{
		`pve_vm.v["101"]`:         {sec(0), sec(10)},
		`pve_vm.v["102"]`:         {sec(0), sec(10)},
		`pve_node_network.n["a"]`: {sec(0), sec(10)},
	}
	spans := []pvesim.WorkSpan{
		{Node: "a", Kind: "qmcreate", ID: "102", Start: sec(1), End: sec(3), PVESeconds: 10},
		{Node: "a", Kind: "qmstart", ID: "102", Start: sec(3), End: sec(4), PVESeconds: 5},
		{Node: "a", Kind: "srvreload", ID: "networking", Start: sec(1), End: sec(2), PVESeconds: 5},
		{Node: "a", Kind: "qmstart", ID: "103", Start: sec(20), End: sec(21), PVESeconds: 5},
	}
	a := Attribute(spans, insts, times, 0.2)
	// 102: [1,3] and [3,4] at scale 0.2 are 3 real seconds, 15 PVE seconds.
	if w := a.Work[`pve_vm.v["102"]`]; math.Abs(w-15) > 1e-9 {
		t.Errorf("VM 102 work %v, want 15", w)
	}
	if a.Work[`pve_vm.v["101"]`] != 0 || math.Abs(a.Work[`pve_node_network.n["a"]`]-5) > 1e-9 {
		t.Errorf("work %v", a.Work)
	}
	if a.Group[`pve_vm.v["102"]`] != "vm@102" || len(a.Unattributed) != 1 {
		t.Errorf("groups %v, unattributed %v", a.Group, a.Unattributed)
	}
}

func TestUnionSecondsMergesOverlaps(t *testing.T) {
	t0 := time.Unix(0, 0)
	s := func(x int) time.Time { return t0.Add(time.Duration(x) * time.Second) }
	if got := unionSeconds([][2]time.Time{{s(5), s(8)}, {s(0), s(2)}, {s(1), s(3)}, {s(6), s(7)}}); got != 6 {
		t.Errorf("union = %v, want 6", got)
	}
}

func TestKindNamesVariableParts(t *testing.T) {
	nodes := []string{"z2g4a", "z2g4b"}
	reqs := []pvesim.Request{
		{Method: "GET", Path: "/nodes/z2g4a/qemu/100/config"},
		{Method: "GET", Path: "/nodes/z2g4b/qemu/101/config"},
		{Method: "GET", Path: "/nodes/z2g4a/tasks/UPID:z2g4a:0001:02:03:qmcreate:100:root@pam:/status"},
	}
	got := CountRequests(reqs, nodes)
	if len(got) != 2 || got[0] != (KindCount{"GET /nodes/{node}/qemu/{id}/config", 2}) || got[1].Kind != "GET /nodes/{node}/tasks/{upid}/status" {
		t.Errorf("kinds = %v", got)
	}
}
