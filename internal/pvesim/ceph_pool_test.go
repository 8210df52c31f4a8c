package pvesim

import (
	"strings"
	"testing"
)

// PVE's set_pool compares every key with what the pool had before the
// first change, and Ceph recalculates min_size whenever size changes: so
// sending an unchanged min_size with a new size leaves Ceph's default.
func TestPVESetPoolSizeResetsMinSize(t *testing.T) {
	cs := labCeph(3, 2)
	p := cs.pool("rbd")
	p.MinSize = 3
	var log []string
	if err := cs.pveSetPool(p, map[string]string{"size": "5", "min_size": "3"}, &log); err != nil {
		t.Fatal(err)
	}
	if p.Size != 5 || p.MinSize != 2 {
		t.Fatalf("size %d min_size %d, want 5 and Ceph's default 2 (log %q)", p.Size, p.MinSize, log)
	}
	if !strings.Contains(strings.Join(log, "\n"), "skipping 'min_size', did not change") {
		t.Fatalf("log %q", log)
	}
	// Sent again on its own, min_size is applied.
	if err := cs.pveSetPool(p, map[string]string{"min_size": "3"}, &log); err != nil || p.MinSize != 3 {
		t.Fatalf("min_size %d %v", p.MinSize, err)
	}
}

func TestPVESetPoolRefusals(t *testing.T) {
	for _, tc := range []struct {
		name   string
		setup  func(p *cephPool)
		params map[string]string
		want   string
	}{
		{"size 1", nil, map[string]string{"size": "1"}, "Could not set: size"},
		{"min_size above size", nil, map[string]string{"min_size": "4"}, "Could not set: min_size"},
		{"pg_num below pg_num_min", func(p *cephPool) { p.PGNumMin = 32 }, map[string]string{"pg_num": "16"}, "Could not set: pg_num"},
		{"pg_num_min above pg_num", nil, map[string]string{"pg_num_min": "64"}, "Could not set: pg_num_min"},
		{"second application", nil, map[string]string{"application": "cephfs"}, "Could not set: application"},
		{"unknown crush rule", nil, map[string]string{"crush_rule": "ssd"}, "Could not set: crush_rule"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := labCeph(3, 2)
			p := cs.pool("rbd")
			if tc.setup != nil {
				tc.setup(p)
			}
			var log []string
			err := cs.pveSetPool(p, tc.params, &log)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("err %v, want %q (log %q)", err, tc.want, log)
			}
			if !strings.Contains(strings.Join(log, "\n"), "mon_command failed - ") {
				t.Fatalf("log without Ceph's reason: %q", log)
			}
		})
	}
}

// The autoscaler picks a power of two from the data and the OSDs, never
// below 32 or pg_num_min, acts only in mode "on" and only after its
// interval, and only when off by a factor of 3.
func TestCephAutoscaler(t *testing.T) {
	for _, tc := range []struct {
		want              int
		nearestPowerOfTwo float64
	}{{0, 0.2}, {1, 1.5}, {2, 2.9}, {4, 3.1}, {64, 80}, {128, 100}} {
		if got := nearestPowerOfTwo(tc.nearestPowerOfTwo); got != tc.want {
			t.Errorf("nearestPowerOfTwo(%v) = %d, want %d", tc.nearestPowerOfTwo, got, tc.want)
		}
	}
	cs := labCeph(3, 2)
	p := cs.pool("rbd")
	p.setPGNum(128)
	cs.settle()
	if final, adjust := cs.autoscaleTarget(p); final != 32 || !adjust {
		t.Fatalf("1 GiB on 6 OSDs: final %d adjust %v, want 32 true", final, adjust)
	}
	p.Autoscale = "warn"
	cs.advance(120)
	if p.PGNum != 128 {
		t.Fatalf("warn mode changed pg_num to %d", p.PGNum)
	}
	p.Autoscale = "on"
	cs.advance(1)
	if p.PGNum != 128 {
		t.Fatalf("autoscaler ran before its interval: %d", p.PGNum)
	}
	cs.advance(120)
	if p.target() != 32 {
		t.Fatalf("mode on: pg_num %d moving to %d, want on its way to 32", p.PGNum, p.target())
	}
	cs.advance(96*cephMergeSeconds + 1)
	if p.PGNum != 32 {
		t.Fatalf("mode on: pg_num %d, want 32 once merged", p.PGNum)
	}
	p.PGNumMin = 64
	cs.advance(120)
	if p.PGNum != 32 {
		t.Fatalf("64 is within a factor of 3 of 32, yet pg_num became %d", p.PGNum)
	}
	p.TargetRatio = 1
	cs.advance(120)
	cs.advance(1) // the split follows the target the autoscaler set
	if final, _ := cs.autoscaleTarget(p); p.PGNum != 256 || final != 256 {
		t.Fatalf("target_size_ratio 1 on 6 OSDs, size 3: pg_num %d final %d, want 256", p.PGNum, final)
	}
	if v := cs.MinSizeViolations; len(v) != 0 {
		t.Fatalf("splits and merges dropped copies: %v", v)
	}
}

// destroypool: a storage on the pool that lists images stops it unless
// forced; remove_storages removes the storage with the pool.
func TestCephDestroyPoolInUse(t *testing.T) {
	s, info := startSim(t, Options{ClusterName: "lab", TaskDuration: -1, CephTimeScale: -1})
	c := newClient(t, info, "")
	c.ok("POST", "/nodes/z2g4a/ceph/init", vals("network", "172.27.2.0/24"))
	c.waitTask("z2g4a", c.ok("POST", "/nodes/z2g4a/ceph/mon/z2g4a", nil).data().(string))
	st := c.waitTask("z2g4a", c.ok("POST", "/nodes/z2g4a/ceph/pool", vals("name", "vm-disks", "add_storages", "1")).data().(string))
	if st["exitstatus"] != "OK" {
		t.Fatalf("create: %v", st)
	}
	if got := s.CephRBDStorages(); got["vm-disks"] != "vm-disks" {
		t.Fatalf("storages %v", got)
	}
	status := c.ok("GET", "/nodes/z2g4a/ceph/pool/vm-disks/status", nil).data().(map[string]any)
	if _, ok := status["application"]; ok || status["size"] != float64(3) || status["min_size"] != float64(2) || status["pg_autoscale_mode"] != "warn" {
		t.Fatalf("status %v", status)
	}
	if !s.AddCephRBDImage("vm-disks", "vm-100-disk-0") {
		t.Fatal("pool not found")
	}
	st = c.waitTask("z2g4a", c.ok("DELETE", "/nodes/z2g4a/ceph/pool/vm-disks", vals("remove_storages", "1")).data().(string))
	if st["exitstatus"] != "ceph pool 'vm-disks' still in use by storage 'vm-disks'" {
		t.Fatalf("destroy in use: %v", st)
	}
	if _, ok := s.CephPoolIDs()["vm-disks"]; !ok {
		t.Fatal("pool destroyed while in use")
	}
	st = c.waitTask("z2g4a", c.ok("DELETE", "/nodes/z2g4a/ceph/pool/vm-disks", vals("remove_storages", "1", "force", "1")).data().(string))
	if st["exitstatus"] != "OK" {
		t.Fatalf("forced destroy: %v", st)
	}
	if _, ok := s.CephPoolIDs()["vm-disks"]; ok || len(s.CephRBDStorages()) != 0 {
		t.Fatalf("after forced destroy: pools %v storages %v", s.CephPoolIDs(), s.CephRBDStorages())
	}
	st = c.waitTask("z2g4a", c.ok("DELETE", "/nodes/z2g4a/ceph/pool/vm-disks", nil).data().(string))
	if st["exitstatus"] != "mon_command failed - unrecognized pool 'vm-disks'" {
		t.Fatalf("destroy missing pool: %v", st)
	}
}

// pg_num moves as Ceph 16 moved it (make testlab): `pool set pg_num` sets
// the target at once, a split is done within seconds, a merge goes one PG
// every cephMergeSeconds; `osd pool get pg_num` and PVE's list say where
// pg_num is, autoscale-status's pg_num_target where it goes.
func TestCephPGNumFollowsTarget(t *testing.T) {
	cs := labCeph(3, 2)
	p := cs.pool("rbd")
	p.setPGNum(32)
	cs.settle()
	if err := cs.osdPoolSet(p, "pg_num", "128"); err != nil {
		t.Fatal(err)
	}
	if p.PGNum != 32 || p.target() != 128 || p.poolGetAll()["pg_num"] != "32" || cs.autoscaleStatus(p)["pg_num_target"] != 128 {
		t.Fatalf("right after the set: pg_num %d target %d", p.PGNum, p.target())
	}
	cs.advance(1)
	if p.PGNum != 128 {
		t.Fatalf("split not done after a second: %d", p.PGNum)
	}
	if err := cs.osdPoolSet(p, "pg_num", "64"); err != nil {
		t.Fatal(err)
	}
	cs.advance(10 * cephMergeSeconds)
	if p.PGNum != 118 {
		t.Fatalf("after 10 merge steps pg_num %d, want 118", p.PGNum)
	}
	cs.advance(100 * cephMergeSeconds)
	if p.PGNum != 64 || p.MergeCredit != 0 {
		t.Fatalf("merge did not stop at the target: %d (credit %v)", p.PGNum, p.MergeCredit)
	}
	if v := cs.MinSizeViolations; len(v) != 0 {
		t.Fatalf("merges dropped copies: %v", v)
	}
}
