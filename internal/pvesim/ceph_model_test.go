package pvesim

import (
	"strings"
	"testing"
)

// labCeph is a cluster of `hosts` hosts with `perHost` 480 GB OSDs each and
// one pool (size 3, min_size 2, 32 PGs, 1 GiB).
func labCeph(hosts, perHost int) *cephState {
	cs := newCephState("f5a0c1d2-0000-4000-8000-000000000001")
	cs.Conf["global"] = map[string]string{"osd_pool_default_size": "3", "osd_pool_default_min_size": "2"}
	cs.Mons["a"] = &cephMon{ID: "a", Host: "h0"}
	cs.Mgrs["a"] = &cephMgr{ID: "a", Host: "h0"}
	id := 0
	for h := 0; h < hosts; h++ {
		for j := 0; j < perHost; j++ {
			cs.OSDs[id] = &cephOSD{ID: id, Host: "h" + string(rune('0'+h)), Size: size480G, Up: true, In: true}
			id++
		}
	}
	cs.addPool(&cephPool{ID: 1, Name: "rbd", Size: 3, MinSize: 2, PGNum: 32, Stored: 1 << 30, Application: "rbd"})
	cs.advance(cephPGReportSeconds + cephPGCreateSeconds) // a lab that has run a while: its PGs peered
	return cs
}

// A new pool's PGs are not active at once: on Ceph 16 (make testlab, `ceph
// pg ls-by-pool m` every 0.2 s after `ceph osd pool create m 32` returned)
// all 32 were "unknown" at +1.4 s; at +2.9 s 9 creating+peering, 17 unknown
// and 6 active+clean; at +8.6 s all active+clean; `ceph health` said
// HEALTH_OK throughout.
func TestCephNewPoolPGsPeerFirst(t *testing.T) {
	cs := labCeph(3, 2)
	cs.addPool(&cephPool{ID: 2, Name: "m", Size: 3, MinSize: 2, PGNum: 32, Stored: 0, Application: "rbd"})
	byPool := func() map[string]int {
		out := map[string]int{}
		p := cs.pool("m")
		for i := range p.PGs {
			out[cs.pgState(p, i).state]++
		}
		return out
	}
	healthy := func(when string) {
		if st, checks := healthOf(cs); st != "HEALTH_OK" {
			t.Errorf("%s: health %s [%s], want HEALTH_OK (Ceph does not warn about PGs being created)", when, st, checks)
		}
	}
	if got := byPool(); got["unknown"] != 32 {
		t.Errorf("right after create: %v, want 32 unknown", got)
	}
	healthy("right after create")
	if cs.allActiveClean() {
		t.Error("all active+clean right after create")
	}
	cs.advance(3)
	got := byPool()
	if got["creating+peering"] == 0 || got["active+clean"] == 0 || got["creating+peering"]+got["active+clean"] != 32 {
		t.Errorf("3 s after create: %v, want some creating+peering and some active+clean", got)
	}
	healthy("3 s after create")
	cs.advance(6)
	if got := byPool(); got["active+clean"] != 32 {
		t.Errorf("9 s after create: %v, want 32 active+clean", got)
	}
	if !cs.allActiveClean() {
		t.Error("not all active+clean 9 s after create")
	}
}

func states(cs *cephState) map[string]int {
	return cs.summarize().byState
}

func healthOf(cs *cephState) (string, string) {
	st, checks := cs.health(func(*cephMon) bool { return true }, true)
	var names []string
	for n := range checks {
		names = append(names, n)
	}
	return st, strings.Join(sortedCopy(names), ",")
}

func TestCephModel(t *testing.T) {
	tests := []struct {
		name       string
		hosts, per int
		act        func(cs *cephState)
		wantStates map[string]int
		wantHealth string
		wantChecks string
		check      func(t *testing.T, cs *cephState)
	}{
		{name: "healthy", hosts: 3, per: 2, act: func(*cephState) {},
			wantStates: map[string]int{"active+clean": 32}, wantHealth: "HEALTH_OK"},
		{name: "out drains to the host's other OSD", hosts: 3, per: 2,
			act:        func(cs *cephState) { cs.OSDs[0].In = false; cs.settle(); cs.advance(60) },
			wantStates: map[string]int{"active+clean": 32}, wantHealth: "HEALTH_OK",
			check: func(t *testing.T, cs *cephState) {
				if pgs := cs.storedPGs(0); len(pgs) != 0 {
					t.Errorf("drained osd.0 still holds %v", pgs)
				}
				cs.setOSDUp(0, false)
				if ok, why := cs.safeToDestroy(0); !ok {
					t.Errorf("drained, stopped osd.0 not safe to destroy: %s", why)
				}
			}},
		{name: "out with too few hosts stays remapped", hosts: 3, per: 1,
			act:        func(cs *cephState) { cs.OSDs[0].In = false; cs.settle(); cs.advance(3600) },
			wantStates: map[string]int{"active+clean+remapped": 32}, wantHealth: "HEALTH_OK",
			check: func(t *testing.T, cs *cephState) {
				if ok, _ := cs.safeToDestroy(0); ok {
					t.Error("osd.0 holds the only third copy but is safe to destroy")
				}
				if ok, _ := cs.okToStop(0); !ok {
					t.Error("stopping one of three copies must be ok")
				}
			}},
		{name: "one OSD down is undersized and degraded", hosts: 3, per: 1,
			act:        func(cs *cephState) { cs.Flags["noout"] = true; cs.setOSDUp(1, false); cs.advance(3600) },
			wantStates: map[string]int{"active+undersized+degraded": 32}, wantHealth: "HEALTH_WARN",
			wantChecks: "OSDMAP_FLAGS,OSD_DOWN,OSD_HOST_DOWN,PG_DEGRADED",
			check: func(t *testing.T, cs *cephState) {
				if ok, msg := cs.okToStop(2); ok || !strings.Contains(msg, "32 PGs") {
					t.Errorf("ok-to-stop osd.2 with osd.1 down: %v %q", ok, msg)
				}
			}},
		{name: "nobackfill holds the backfill", hosts: 3, per: 2,
			act: func(cs *cephState) {
				cs.Flags["nobackfill"] = true
				cs.OSDs[0].In = false
				cs.settle()
				cs.advance(600)
			},
			wantHealth: "HEALTH_WARN", wantChecks: "OSDMAP_FLAGS",
			check: func(t *testing.T, cs *cephState) {
				n := 0
				for st, c := range states(cs) {
					if strings.Contains(st, "backfill_wait") {
						n += c
					}
				}
				if n == 0 {
					t.Errorf("no PG waits for backfill: %v", states(cs))
				}
				delete(cs.Flags, "nobackfill")
				cs.advance(60)
				if got := states(cs); got["active+clean"] != 32 {
					t.Errorf("after unset: %v", got)
				}
			}},
		{name: "down OSD is marked out after the interval and recovered", hosts: 3, per: 2,
			act:        func(cs *cephState) { cs.setOSDUp(0, false); cs.advance(cephDownOutInterval + 120) },
			wantStates: map[string]int{"active+clean": 32}, wantHealth: "HEALTH_WARN", wantChecks: "OSD_DOWN",
			check: func(t *testing.T, cs *cephState) {
				if cs.OSDs[0].In {
					t.Error("osd.0 still in")
				}
			}},
		{name: "two hosts down violates min_size; destroying them loses data", hosts: 3, per: 1,
			act: func(cs *cephState) {
				cs.Flags["noout"] = true
				cs.setOSDUp(0, false)
				cs.setOSDUp(1, false)
			},
			wantStates: map[string]int{"undersized+degraded+peered": 32}, wantHealth: "HEALTH_WARN",
			wantChecks: "OSDMAP_FLAGS,OSD_DOWN,OSD_HOST_DOWN,PG_AVAILABILITY,PG_DEGRADED",
			check: func(t *testing.T, cs *cephState) {
				if len(cs.MinSizeViolations) != 32 {
					t.Errorf("violations %d", len(cs.MinSizeViolations))
				}
				cs.setOSDUp(2, false)
				cs.OSDs[0].In, cs.OSDs[1].In, cs.OSDs[2].In = false, false, false
				cs.destroyOSD(0)
				cs.destroyOSD(1)
				if len(cs.DataLoss) != 0 {
					t.Errorf("data lost while osd.2 holds a copy: %v", cs.DataLoss[0])
				}
				cs.destroyOSD(2)
				if len(cs.DataLoss) != 32 || len(cs.UnsafeDestroys) != 3 {
					t.Errorf("loss %d unsafe %d", len(cs.DataLoss), len(cs.UnsafeDestroys))
				}
				if got := states(cs); got["incomplete"] != 32 {
					t.Errorf("states %v", got)
				}
			}},
		{name: "destroy without draining is recorded", hosts: 3, per: 2,
			act: func(cs *cephState) {
				cs.OSDs[0].In = false
				cs.settle()
				cs.setOSDUp(0, false)
				cs.destroyOSD(0)
				cs.advance(600)
			},
			wantStates: map[string]int{"active+clean": 32}, wantHealth: "HEALTH_OK",
			check: func(t *testing.T, cs *cephState) {
				if len(cs.UnsafeDestroys) != 1 || len(cs.MinSizeViolations) != 0 || len(cs.DataLoss) != 0 {
					t.Errorf("unsafe %v violations %v loss %v", cs.UnsafeDestroys, cs.MinSizeViolations, cs.DataLoss)
				}
			}},
		{name: "size 1 pool has no redundancy", hosts: 3, per: 1,
			act: func(cs *cephState) {
				// ceph osd pool set rbd size 1 --yes-i-really-mean-it (CLI only; PVE cannot)
				p := cs.pool("rbd")
				p.Size, p.MinSize = 1, 1
				cs.settle()
			},
			wantStates: map[string]int{"active+clean": 32}, wantHealth: "HEALTH_WARN", wantChecks: "POOL_NO_REDUNDANCY"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := labCeph(tc.hosts, tc.per)
			tc.act(cs)
			if tc.wantStates != nil {
				got := states(cs)
				if len(got) != len(tc.wantStates) {
					t.Errorf("states %v, want %v", got, tc.wantStates)
				}
				for k, v := range tc.wantStates {
					if got[k] != v {
						t.Errorf("states %v, want %v", got, tc.wantStates)
					}
				}
			}
			st, checks := healthOf(cs)
			if st != tc.wantHealth || checks != tc.wantChecks {
				t.Errorf("health %s [%s], want %s [%s]", st, checks, tc.wantHealth, tc.wantChecks)
			}
			if tc.check != nil {
				tc.check(t, cs)
			}
		})
	}
}

// Recovery takes simulated time in proportion to the data and the rate.
func TestCephRecoveryRate(t *testing.T) {
	cs := labCeph(3, 2)
	cs.OSDs[0].In = false
	cs.settle()
	cs.advance(0.5)
	if got := states(cs); got["active+clean"] == 32 {
		t.Fatalf("1 GiB recovered in half a second: %v", got)
	}
	cs.advance(30)
	if got := states(cs); got["active+clean"] != 32 {
		t.Fatalf("not recovered after 30 s: %v", got)
	}
	four := labCeph(3, 2)
	four.ConfigDB["osd"] = map[string]string{"osd_max_backfills": "4"}
	four.OSDs[0].In = false
	four.settle()
	four.advance(1)
	one := labCeph(3, 2)
	one.OSDs[0].In = false
	one.settle()
	one.advance(1)
	if four.RecoveredBytes <= one.RecoveredBytes {
		t.Errorf("osd_max_backfills 4 moved %v bytes, default %v", four.RecoveredBytes, one.RecoveredBytes)
	}
}

// CRUSH spreads every pool's PGs over every in OSD, whichever ids the OSDs
// of a host got: size 1 pools put each PG on one OSD, so an OSD left out
// of the hashing would hold nothing (and tests about its data would be
// vacuous).
func TestCephCrushSpreadsPGsOverEveryOSD(t *testing.T) {
	for poolID := 1; poolID <= 4; poolID++ {
		for _, size := range []int{1, 3} {
			cs := labCeph(3, 2)
			p := cs.Pools[0]
			p.ID, p.Size, p.MinSize = poolID, size, 1
			count := map[int]int{}
			for i := range p.PGs {
				for _, id := range cs.crush(p, i) {
					count[id]++
				}
			}
			// 64 or 32 PGs over 6 OSDs: expect each near its share.
			share := len(p.PGs) * size / len(cs.OSDs)
			for id := range cs.OSDs {
				if count[id] < share/3 {
					t.Errorf("pool %d size %d: osd.%d holds %d PGs, share %d (all: %v)", poolID, size, id, count[id], share, count)
				}
			}
		}
	}
}
