package pvesim

import (
	"strings"
	"testing"
	"time"
)

// cephWithMons initialises Ceph on the management network and creates a
// monitor on every node, through the API as root@pam.
func cephWithMons(t *testing.T, s *Sim) *client {
	t.Helper()
	c := rootOn(t, s, "z2g4a")
	c.ok("POST", "/nodes/z2g4a/ceph/init", vals("network", "172.27.2.0/24"))
	for _, n := range []string{"z2g4a", "z2g4b", "z2g4c"} {
		c.waitTask(n, c.ok("POST", "/nodes/"+n+"/ceph/mon/"+n, nil).data().(string))
	}
	return c
}

func diskEntry(t *testing.T, list any, dev string) map[string]any {
	t.Helper()
	for _, e := range list.([]any) {
		if m := e.(map[string]any); m["devpath"] == dev {
			return m
		}
	}
	t.Fatalf("no disk %s in %v", dev, list)
	return nil
}

// OSD details as PVE reports them: metadata names the physical disks under
// device-mapper nodes, lv-info the data LV named after the OSD's fsid, the
// disk list counts block.db LVs on the DB disk without giving it an OSD id,
// and the tree never names /dev/sdX.
func TestCephOSDDetails(t *testing.T) {
	s, _ := startSim(t, Options{ClusterName: "lab", TaskDuration: time.Millisecond, CephTimeScale: -1})
	c := cephWithMons(t, s)
	st := c.waitTask("z2g4a", c.ok("POST", "/nodes/z2g4a/ceph/osd", vals("dev", "/dev/sdb", "db_dev", "/dev/nvme0n1", "db_dev_size", "30",
		"wal_dev", "/dev/sdc", "wal_dev_size", "0.5", "encrypted", "1")).data().(string))
	if st["exitstatus"] != "OK" {
		t.Fatalf("create: %v", st)
	}
	md := c.ok("GET", "/nodes/z2g4a/ceph/osd/0/metadata", nil).data().(map[string]any)
	devs := md["devices"].([]any)
	if len(devs) != 3 {
		t.Fatalf("devices %v", devs)
	}
	want := map[string][2]any{"block": {"sdb", float64(size480G)}, "db": {"nvme0n1", float64(30 << 30)}, "wal": {"sdc", float64(512 << 20)}}
	for _, d := range devs {
		m := d.(map[string]any)
		w := want[m["device"].(string)]
		if m["physical_device"] != w[0] || m["size"] != w[1] || !strings.HasPrefix(m["dev_node"].(string), "/dev/dm-") {
			t.Errorf("device %v, want %v", m, w)
		}
	}
	if osd := md["osd"].(map[string]any); osd["hostname"] != "z2g4a" || osd["pid"] == nil {
		t.Errorf("osd %v", osd)
	}
	if r := c.do("GET", "/nodes/z2g4b/ceph/osd/0/metadata", nil); r.status != 500 || !strings.Contains(r.reason, "does not exists on host 'z2g4b'") {
		t.Errorf("metadata on another node: %d %s", r.status, r.reason)
	}
	lv := c.ok("GET", "/nodes/z2g4a/ceph/osd/0/lv-info", nil).data().(map[string]any)
	var uuid string
	s.forEachCeph(func(cs *cephState) { uuid = cs.OSDs[0].UUID })
	if lv["lv_name"] != "osd-block-"+uuid || !strings.HasPrefix(lv["vg_name"].(string), "ceph-") {
		t.Errorf("lv-info %v (uuid %s)", lv, uuid)
	}
	if r := c.do("GET", "/nodes/z2g4a/ceph/osd/0/lv-info", vals("type", "db")); r.status != 200 {
		t.Errorf("db lv-info: %d %s", r.status, r.reason)
	}

	disks := c.ok("GET", "/nodes/z2g4a/disks/list", nil).data()
	sdb, nvme := diskEntry(t, disks, "/dev/sdb"), diskEntry(t, disks, "/dev/nvme0n1")
	if sdb["osdid"] != float64(0) || sdb["osdencrypted"] != float64(1) || sdb["bluestore"] != float64(1) {
		t.Errorf("data disk %v", sdb)
	}
	if nvme["osdid"] != float64(-1) || nvme["db"] != float64(1) || nvme["used"] != "LVM" {
		t.Errorf("DB disk %v", nvme)
	}
	// journal_disks lists disks that may take a DB: not OSD data disks.
	for _, e := range c.ok("GET", "/nodes/z2g4a/disks/list", vals("type", "journal_disks")).data().([]any) {
		if e.(map[string]any)["devpath"] == "/dev/sdb" {
			t.Error("journal_disks lists the OSD data disk")
		}
	}
	if tree := c.ok("GET", "/nodes/z2g4a/ceph/osd", nil).raw; strings.Contains(string(tree), "/dev/sd") {
		t.Errorf("tree names kernel disks: %s", tree)
	}
	if r := c.do("POST", "/nodes/z2g4a/ceph/osd", vals("dev", "/dev/sdc", "wal_dev_size", "0.4")); r.status != 400 || r.errs()["wal_dev_size"] == nil {
		t.Errorf("wal_dev_size 0.4: %d %s", r.status, r.raw)
	}

	// A reboot that names the disks the other way round: the OSD follows its disk.
	s.SwapDisks("z2g4a", "/dev/sdb", "/dev/sdc")
	disks = c.ok("GET", "/nodes/z2g4a/disks/list", nil).data()
	if sdc := diskEntry(t, disks, "/dev/sdc"); sdc["osdid"] != float64(0) || sdc["model"] != "INTEL_SSDSC2BB480G4" {
		t.Errorf("after the swap /dev/sdc is %v", sdc)
	}
	md = c.ok("GET", "/nodes/z2g4a/ceph/osd/0/metadata", nil).data().(map[string]any)
	for _, d := range md["devices"].([]any) {
		m := d.(map[string]any)
		if want := map[string]string{"block": "sdc", "db": "nvme0n1", "wal": "sdb"}[m["device"].(string)]; m["physical_device"] != want {
			t.Errorf("%s after the swap is on %v, want %s", m["device"], m["physical_device"], want)
		}
	}
}

// safe-to-destroy follows the mgr: a drained OSD is safe while still up; a
// down OSD gives no conclusion while PGs are not all active+clean.
func TestCephSafeToDestroyUpAndDown(t *testing.T) {
	cs := labCeph(3, 2)
	cs.OSDs[0].In = false
	cs.settle()
	if ok, why := cs.safeToDestroy(0); ok || !strings.Contains(why, "pgs currently mapped") {
		t.Fatalf("undrained: %v %q", ok, why)
	}
	cs.advance(600)
	if ok, why := cs.safeToDestroy(0); !ok {
		t.Fatalf("drained but up: %q", why)
	}
	cs.setOSDUp(2, false)
	cs.setOSDUp(0, false)
	if ok, why := cs.safeToDestroy(0); ok || !strings.Contains(why, "no reported stats") {
		t.Fatalf("down while osd.2's PGs are degraded: %v %q", ok, why)
	}
}
