package pve

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

func diskAt(disks []Disk, dev string) Disk {
	for _, d := range disks {
		if d.DevPath == dev {
			return d
		}
	}
	return Disk{}
}

func waitOK(t *testing.T, c *Client, upid string, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitTask(context.Background(), upid); err != nil {
		t.Fatalf("task %s: %v", upid, err)
	}
}

func apiMessage(err error) string {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Message
	}
	if err == nil {
		return ""
	}
	return err.Error()
}

// A Ceph cluster built through the client on the simulator; the clock is
// frozen so recovery happens only when the test advances it.
func TestCephLifecycle(t *testing.T) {
	sim, err := pvesim.Start(pvesim.Options{ClusterName: "lab", TaskDuration: time.Millisecond, CephTimeScale: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	ctx := context.Background()
	info := sim.Info()
	root := rootClient(t, simNode(t, info, "z2g4a"))
	tok, err := NewClient(Config{Endpoint: info.Endpoint, APIToken: info.APIToken, TLSFingerprint: info.TLSFingerprint, Retry: fastRetry, TaskPollInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}

	if _, err := root.CephClusterStatus(ctx); !strings.Contains(apiMessage(err), "pveceph configuration not initialized") {
		t.Fatalf("status before init: %v", err)
	}
	if err := root.InitCeph(ctx, "z2g4a", CephInitRequest{Network: "172.27.2.0/24"}); err != nil {
		t.Fatal(err)
	}
	raw, err := root.CephConfigRaw(ctx, "z2g4a")
	if err != nil || !strings.Contains(raw, "public_network = 172.27.2.0/24") || !strings.Contains(raw, "osd_pool_default_size = 3") {
		t.Fatalf("ceph.conf %q %v", raw, err)
	}
	nodes := []string{"z2g4a", "z2g4b", "z2g4c"}
	for _, n := range nodes {
		upid, err := root.CreateCephMon(ctx, n, "")
		waitOK(t, root, upid, err)
	}
	if _, err := root.CreateCephMon(ctx, "z2g4a", ""); !strings.Contains(apiMessage(err), "already in use") {
		t.Fatalf("second mon on z2g4a: %v", err)
	}
	mons, err := root.CephMons(ctx, "z2g4a")
	if err != nil || len(mons) != 3 || !mons[0].Quorum {
		t.Fatalf("mons %+v %v", mons, err)
	}
	mgrs, err := root.CephMgrs(ctx, "z2g4a")
	if err != nil || len(mgrs) != 1 || mgrs[0].State != "active" {
		t.Fatalf("mgrs %+v %v", mgrs, err)
	}
	vals, err := root.CephConfigValues(ctx, "z2g4a", "global:public_network", "global:fsid")
	if err != nil || vals["global"]["public_network"] != "172.27.2.0/24" || vals["global"]["fsid"] == "" {
		t.Fatalf("values %v %v", vals, err)
	}

	disks, err := root.Disks(ctx, "z2g4b", false)
	if err != nil || len(disks) != 4 || diskAt(disks, "/dev/sda").Used != "BIOS boot" || diskAt(disks, "/dev/sdb").Model != "INTEL_SSDSC2BB480G4" ||
		diskAt(disks, "/dev/sdb").Used != "" || diskAt(disks, "/dev/sdb").Wearout != 96 || diskAt(disks, "/dev/nvme0n1").Type != "nvme" {
		t.Fatalf("disks %+v %v", disks, err)
	}
	if _, err := tok.CreateCephOSD(ctx, "z2g4a", CephOSDCreateRequest{Dev: "/dev/sdb"}); !strings.Contains(apiMessage(err), "user != root@pam") {
		t.Fatalf("token OSD create: %v", err)
	}
	if _, err := root.CreateCephOSD(ctx, "z2g4a", CephOSDCreateRequest{Dev: "/dev/sda"}); !strings.Contains(apiMessage(err), "device '/dev/sda' is already in use") {
		t.Fatalf("boot disk OSD: %v", err)
	}
	for _, n := range nodes {
		for _, dev := range []string{"/dev/sdb", "/dev/sdc"} {
			upid, err := root.CreateCephOSD(ctx, n, CephOSDCreateRequest{Dev: dev})
			waitOK(t, root, upid, err)
		}
	}
	tree, err := root.CephOSDTree(ctx, "z2g4a")
	if err != nil || len(tree.OSDs) != 6 || len(tree.Hosts) != 3 || tree.OSD(0).Host != "z2g4a" || !tree.OSD(0).Up() || !tree.OSD(0).In {
		t.Fatalf("tree %+v %v", tree, err)
	}
	// The cluster-wide metadata gives every OSD what its node's
	// osddetails gives, but PID and memory.
	all, err := tok.CephClusterMetadata(ctx)
	if err != nil || len(all) != 6 {
		t.Fatalf("cluster metadata %v %v", all, err)
	}
	for id, m := range all {
		one, err := root.CephOSDMetadata(ctx, m.Hostname, id)
		if err != nil {
			t.Fatal(err)
		}
		one.PID, one.MemUsage = 0, 0
		if !reflect.DeepEqual(m, one) {
			t.Errorf("osd.%d: cluster metadata %+v, osddetails %+v", id, m, one)
		}
	}
	if disks, _ := root.Disks(ctx, "z2g4a", false); diskAt(disks, "/dev/sdb").OSDID != 0 || diskAt(disks, "/dev/sdb").Used != "LVM" {
		t.Fatalf("sdb after OSD: %+v", diskAt(disks, "/dev/sdb"))
	}

	size, minSize, pgs := int64(3), int64(2), int64(32)
	upid, err := root.CreateCephPool(ctx, "z2g4a", "vm-disks", CephPoolRequest{Size: &size, MinSize: &minSize, PGNum: &pgs, Application: "rbd", AddStorages: true})
	waitOK(t, root, upid, err)
	pool, err := root.CephPool(ctx, "z2g4a", "vm-disks")
	if err != nil || pool.Size != 3 || pool.MinSize != 2 || pool.PGNum != 32 || pool.CrushRule != "replicated_rule" || pool.Application != "rbd" {
		t.Fatalf("pool %+v %v", pool, err)
	}
	if _, err := root.CephPool(ctx, "z2g4a", "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing pool: %v", err)
	}
	if st := sim.CephRBDStorages(); st["vm-disks"] != "vm-disks" {
		t.Fatalf("storages %v", st)
	}
	// a new pool's PGs peer for seconds before they are active (pvesim's clock is frozen here)
	if st, err := root.CephClusterStatus(ctx); err != nil || st.Health != "HEALTH_OK" || st.AllActiveClean() {
		t.Fatalf("status right after the pool's create %+v %v", st, err)
	}
	sim.CephAdvance(10 * time.Second)
	st, err := root.CephClusterStatus(ctx)
	if err != nil || st.Health != "HEALTH_OK" || !st.AllActiveClean() || st.NumPGs != 32 || st.NumUpOSDs != 6 || len(st.QuorumNames) != 3 {
		t.Fatalf("status %+v %v", st, err)
	}

	// PVE refuses to destroy an OSD that is in or up, with its texts.
	if _, err := root.DestroyCephOSD(ctx, "z2g4a", 0, false); !strings.Contains(apiMessage(err), "osd is in use (in == 1)") {
		t.Fatalf("destroy in OSD: %v", err)
	}
	if _, err := root.DestroyCephOSD(ctx, "z2g4b", 0, false); !strings.Contains(apiMessage(err), "does not belong to node z2g4b") {
		t.Fatalf("destroy on wrong node: %v", err)
	}
	if err := root.MarkCephOSDOut(ctx, "z2g4a", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := root.DestroyCephOSD(ctx, "z2g4a", 0, false); !strings.Contains(apiMessage(err), "osd is still running (up == 1)") {
		t.Fatalf("destroy up OSD: %v", err)
	}
	st, _ = root.CephClusterStatus(ctx)
	if st.AllActiveClean() || st.MisplacedObjects == 0 {
		t.Fatalf("out OSD with a frozen clock: %+v", st.PGsByState)
	}
	// Safe-to-destroy says no while the data has not moved.
	if s, err := root.CephCmdSafety(ctx, "z2g4a", "osd", "0", "destroy"); err != nil || s.Safe {
		t.Fatalf("safe-to-destroy before recovery: %+v %v", s, err)
	}
	sim.CephAdvance(time.Minute)
	st, _ = root.CephClusterStatus(ctx)
	if !st.AllActiveClean() || st.Health != "HEALTH_OK" {
		t.Fatalf("after recovery: %+v %v", st.PGsByState, st.Checks)
	}
	upid, err = root.StopCephService(ctx, "z2g4a", "osd.0")
	waitOK(t, root, upid, err)
	if s, err := root.CephCmdSafety(ctx, "z2g4a", "osd", "0", "destroy"); err != nil || !s.Safe {
		t.Fatalf("safe-to-destroy after recovery: %+v %v", s, err)
	}
	upid, err = root.DestroyCephOSD(ctx, "z2g4a", 0, true)
	waitOK(t, root, upid, err)
	if v := sim.CephUnsafeDestroys(); len(v) != 0 {
		t.Fatalf("drained destroy recorded as unsafe: %v", v)
	}

	// Without draining: out, stop and destroy at once is recorded.
	if err := root.MarkCephOSDOut(ctx, "z2g4b", 2); err != nil {
		t.Fatal(err)
	}
	upid, err = root.StopCephService(ctx, "z2g4b", "osd.2")
	waitOK(t, root, upid, err)
	st, _ = root.CephClusterStatus(ctx)
	if _, ok := st.Checks["PG_DEGRADED"]; !ok || st.Health != "HEALTH_WARN" {
		t.Fatalf("stopped undrained OSD: %s %v", st.Health, st.Checks)
	}
	upid, err = root.DestroyCephOSD(ctx, "z2g4b", 2, false)
	waitOK(t, root, upid, err)
	if v := sim.CephUnsafeDestroys(); len(v) != 1 {
		t.Fatalf("unsafe destroys %v", v)
	}
	if v := sim.CephMinSizeViolations(); len(v) != 0 {
		t.Fatalf("min_size violations %v", v)
	}

	// Flags: noout shows as OSDMAP_FLAGS.
	upid, err = root.SetCephFlags(ctx, map[string]bool{"noout": true})
	waitOK(t, root, upid, err)
	if on, err := root.CephFlag(ctx, "noout"); err != nil || !on {
		t.Fatalf("noout %v %v", on, err)
	}
	st, _ = root.CephClusterStatus(ctx)
	if c := st.Checks["OSDMAP_FLAGS"]; c.Message != "noout flag(s) set" {
		t.Fatalf("flags check %+v", st.Checks)
	}
	if err := root.SetCephFlag(ctx, "noout", false); err != nil {
		t.Fatal(err)
	}
	if flags, err := root.CephFlags(ctx); err != nil || flags["noout"] || len(flags) != 11 {
		t.Fatalf("flags %v %v", flags, err)
	}

	// Pool update and delete.
	ratio := 0.5
	upid, err = root.UpdateCephPool(ctx, "z2g4a", "vm-disks", CephPoolRequest{PGAutoscaleMode: "on", TargetSizeRatio: &ratio})
	waitOK(t, root, upid, err)
	if pools, err := root.CephPools(ctx, "z2g4a"); err != nil || len(pools) != 1 || pools[0].PGAutoscaleMode != "on" || pools[0].TargetSizeRatio != 0.5 {
		t.Fatalf("pools %+v %v", pools, err)
	}
	upid, err = root.DestroyCephPool(ctx, "z2g4a", "vm-disks", true, false)
	waitOK(t, root, upid, err)
	if st := sim.CephRBDStorages(); len(st) != 0 {
		t.Fatalf("storages after delete %v", st)
	}

	// Monitors: the last one cannot go.
	for _, n := range []string{"z2g4b", "z2g4c"} {
		upid, err := root.DestroyCephMon(ctx, n, n)
		waitOK(t, root, upid, err)
	}
	// PVE checks before it starts the task.
	if _, err = root.DestroyCephMon(ctx, "z2g4a", "z2g4a"); !strings.Contains(apiMessage(err), "can't remove last monitor") {
		t.Fatalf("last mon: %v", err)
	}

	// Wipe: root only, refuses a disk with an OSD.
	if _, err := tok.WipeDisk(ctx, "z2g4a", "/dev/sdc"); !strings.Contains(apiMessage(err), "user != root@pam") {
		t.Fatalf("token wipe: %v", err)
	}
	if _, err := root.WipeDisk(ctx, "z2g4a", "/dev/sdc"); err == nil {
		t.Fatal("wiped a disk with an OSD")
	}
	upid, err = root.WipeDisk(ctx, "z2g4a", "/dev/nvme0n1")
	waitOK(t, root, upid, err)
}
