package ceph

import (
	"strings"
	"testing"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

func labTree() *pve.CephOSDTree {
	t := &pve.CephOSDTree{}
	for i, h := range []string{"a", "a", "b", "b", "c", "c"} {
		t.OSDs = append(t.OSDs, pve.CephOSD{ID: int64(i), Host: h, In: true, Status: "up"})
	}
	return t
}

func TestOSDSetReasons(t *testing.T) {
	pools := []pve.CephPool{{Name: "ceph", Size: 3, MinSize: 2, CrushRule: "replicated_rule"}}
	// Both OSDs of host a: the pool needs a third host.
	r := osdSetReasons(labTree(), pools, []int64{0, 1})
	if len(r) != 1 || !strings.Contains(r[0], `Pool "ceph" keeps size = 3`) || !strings.Contains(r[0], "a would lose its last OSDs") {
		t.Fatalf("both OSDs of a: %v", r)
	}
	// One OSD of each host: every host keeps one.
	if r := osdSetReasons(labTree(), pools, []int64{0, 2, 4}); len(r) != 0 {
		t.Fatalf("one OSD per host: %v", r)
	}
	// Two hosts emptied: below min_size too.
	r = osdSetReasons(labTree(), pools, []int64{0, 1, 2, 3})
	if len(r) != 1 || !strings.Contains(r[0], "min_size = 2") {
		t.Fatalf("two hosts emptied: %v", r)
	}
	// A pool that never fitted (size 4 on 3 hosts) is refused as its
	// drain would refuse, even when no host is emptied.
	r = osdSetReasons(labTree(), []pve.CephPool{{Name: "big", Size: 4, MinSize: 2}}, []int64{0})
	if len(r) != 1 || !strings.Contains(r[0], "undersized already") || strings.Contains(r[0], "last OSDs") {
		t.Fatalf("undersized pool: %v", r)
	}
	// A rule that is not PVE's replicated_rule is not judged.
	other := []pve.CephPool{{Name: "ec", Size: 3, CrushRule: "ec-rule"}}
	if r := osdSetReasons(labTree(), other, []int64{0, 1}); len(r) != 0 {
		t.Fatalf("other pools: %v", r)
	}
}

// A refusing pool read from PVE gets the hint how to get through when a
// pve_ceph_pool planned later changes it; recorded pools, and pools that
// do not refuse, do not.
func TestLaterPoolHint(t *testing.T) {
	pools := []pve.CephPool{{Name: "byhand", Size: 3, MinSize: 2}, {Name: "small", Size: 2, MinSize: 1}, {Name: "kept", Size: 3, MinSize: 2}}
	h := laterPoolHint(labTree(), pools, map[string]bool{"byhand": true, "small": true}, []int64{0, 1})
	if !strings.Contains(h, `Pool "byhand" counts as PVE lists it now`) || strings.Contains(h, "small") || strings.Contains(h, "kept") ||
		!strings.Contains(h, "terraform apply -target") || !strings.Contains(h, "depends_on") {
		t.Fatalf("hint: %q", h)
	}
	if h := laterPoolHint(labTree(), pools, map[string]bool{"small": true}, []int64{0, 1}); h != "" {
		t.Fatalf("no refusing pool read from PVE: %q", h)
	}
}

// A drain waits for PGs that are only on their way to active (what real
// Ceph 16 shows for seconds after a pool is made or split) and refuses for
// the rest at once.
func TestOnlyTransientPGs(t *testing.T) {
	for _, c := range []struct {
		states map[string]int64
		want   bool
	}{
		{map[string]int64{"active+clean": 60, "activating": 4, "activating+degraded": 2}, true},
		{map[string]int64{"creating+activating": 8, "peering": 9, "unknown": 3}, true},
		{map[string]int64{"active+clean": 64}, true},
		{map[string]int64{"active+clean": 60, "undersized+degraded+peered": 4}, false},
		{map[string]int64{"down": 1, "peering": 3}, false},
		{map[string]int64{"stale+peering": 2}, false},
		{map[string]int64{"incomplete": 1}, false},
	} {
		if got := onlyTransient(&pve.CephStatus{PGsByState: c.states}); got != c.want {
			t.Errorf("onlyTransient(%v) = %v, want %v", c.states, got, c.want)
		}
	}
}
