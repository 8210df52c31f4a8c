package pvesim

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

// vmIDs are the guests on z2g4a, the node these tests create them on.
func vmIDs(c *client) map[float64]bool {
	ids := map[float64]bool{}
	for _, v := range c.ok("GET", "/nodes/z2g4a/qemu", nil).data().([]any) {
		ids[v.(map[string]any)["vmid"].(float64)] = true
	}
	return ids
}

// volIDs are the volids of storage's content on node (of vmid, if not "").
func volIDs(c *client, node, storage, vmid string) []string {
	var q url.Values
	if vmid != "" {
		q = vals("vmid", vmid)
	}
	var out []string
	for _, v := range c.ok("GET", "/nodes/"+node+"/storage/"+storage+"/content", q).data().([]any) {
		out = append(out, v.(map[string]any)["volid"].(string))
	}
	return out
}

func TestFaultsOnTasks(t *testing.T) {
	fs, err := ParseFaultSpec("task qmcreate/100=fail:1x; task qmcreate/100=fail-late:1x; task qmcreate/100=hang:1x; task qmcreate/100=lock:1x")
	if err != nil {
		t.Fatal(err)
	}
	s, info := startSim(t, Options{NoSSH: true, ClusterName: "lab", TaskDuration: time.Millisecond, Faults: fs})
	c := newClient(t, info, "")
	create := func() string {
		return c.ok("POST", "/nodes/z2g4a/qemu", vals("vmid", "100", "cores", "2", "scsi0", "local-lvm:4")).data().(string)
	}

	// fail: the worker dies in createfn, which unlinks the config.
	if st := c.waitTask("z2g4a", create()); st["exitstatus"] != "injected task failure" {
		t.Fatalf("fail: %v", st)
	}
	if vmIDs(c)[100] {
		t.Fatal("a failed create left VM 100")
	}
	// fail-late: the config was written, then the worker died after
	// write_config (add_vm_to_pool, create_ifaces_ipams_ips): createfn's
	// caller unlinks the config, and the disks it allocated stay.
	if st := c.waitTask("z2g4a", create()); st["exitstatus"] != "unexpected status" {
		t.Fatalf("fail-late: %v", st)
	}
	if vmIDs(c)[100] {
		t.Fatal("a create that failed late left VM 100")
	}
	if vols := volIDs(c, "z2g4a", "local-lvm", "100"); len(vols) != 1 || vols[0] != "local-lvm:vm-100-disk-0" {
		t.Fatalf("volumes of VM 100 after a late failure: %v", vols)
	}
	// PVE frees them with DELETE .../content/{volume} (an imgdel task).
	c.waitTask("z2g4a", c.ok("DELETE", "/nodes/z2g4a/storage/local-lvm/content/vm-100-disk-0", nil).data().(string))
	if vols := volIDs(c, "z2g4a", "local-lvm", "100"); len(vols) != 0 {
		t.Fatalf("volumes of VM 100 after imgdel: %v", vols)
	}

	// hang: still running after a later task ended; a stop ends it and the
	// worker cleans up.
	hung := create()
	c.ok("POST", "/pools", vals("poolid", "p1"))
	c.waitTask("z2g4a", c.ok("POST", "/nodes/z2g4a/qemu", vals("vmid", "101")).data().(string))
	if st := c.ok("GET", "/nodes/z2g4a/tasks/"+url.PathEscape(hung)+"/status", nil).data().(map[string]any); st["status"] != "running" {
		t.Fatalf("hang: %v", st)
	}
	if conf := c.ok("GET", "/nodes/z2g4a/qemu/100/config", nil).data().(map[string]any); conf["lock"] != "create" {
		t.Fatalf("a running create's config: %v", conf)
	}
	c.ok("DELETE", "/nodes/z2g4a/tasks/"+url.PathEscape(hung), nil)
	if st := c.waitTask("z2g4a", hung); st["exitstatus"] != "received interrupt" {
		t.Fatalf("stopped: %v", st)
	}
	if vmIDs(c)[100] {
		t.Fatal("a stopped create left VM 100")
	}
	// lock: qemu-server's create worker locks the config (lock_config_full).
	if st := c.waitTask("z2g4a", create()); st["exitstatus"] != "can't lock file '/var/lock/qemu-server/lock-100.conf' - got timeout" {
		t.Fatalf("lock: %v", st)
	}
	if vmIDs(c)[100] {
		t.Fatal("a create that met a lock timeout left VM 100")
	}
	if st := c.waitTask("z2g4a", create()); st["exitstatus"] != "OK" { // every count spent
		t.Fatalf("create: %v", st)
	}

	var marks []string
	for _, r := range s.Requests() {
		if r.Method == "POST" && r.Path == "/nodes/z2g4a/qemu" && r.Params["vmid"] == "100" && r.Status == 200 {
			marks = append(marks, r.Fault)
		}
	}
	want := []string{"task-fail", "task-fail-late", "task-hang", "task-lock", ""}
	if len(marks) != len(want) {
		t.Fatalf("creates marked %q, want %q", marks, want)
	}
	for i := range want {
		if marks[i] != want[i] {
			t.Errorf("create %d marked %q, want %q", i, marks[i], want[i])
		}
	}
}

func TestFaultTaskLockOnOSDCreate(t *testing.T) {
	s, _ := startSim(t, Options{ClusterName: "lab", TaskDuration: time.Millisecond, CephTimeScale: -1})
	c := cephWithMons(t, s)
	if err := s.SetFaultSpec("task cephcreateosd=lock:1x"); err != nil {
		t.Fatal(err)
	}
	// pve-manager API2/Ceph/OSD.pm: the worker runs in
	// PVE::Diskmanage::locked_disk_action, so the call answers a UPID.
	st := c.waitTask("z2g4a", c.ok("POST", "/nodes/z2g4a/ceph/osd", vals("dev", "/dev/sdb")).data().(string))
	if st["exitstatus"] != "can't lock file '/run/lock/pve-diskmanage.lck' - got timeout" {
		t.Fatalf("lock: %v", st)
	}
	if osds := s.Faults(); len(osds) != 0 {
		t.Fatalf("count 1 not spent: %+v", osds)
	}
	if st := c.waitTask("z2g4a", c.ok("POST", "/nodes/z2g4a/ceph/osd", vals("dev", "/dev/sdb")).data().(string)); st["exitstatus"] != "OK" {
		t.Fatalf("the retry: %v (the failed create must not have used the disk)", st)
	}
}

// kill: the worker dies mid-work and nothing cleans up, so the config
// qemu-server reserved the id with stays locked 'create' (a destroy needs
// skiplock), as after a node crash during the disk allocation.
func TestFaultTaskKillLeavesWhatItReserved(t *testing.T) {
	fs, err := ParseFaultSpec("task qmcreate/100=kill:1x")
	if err != nil {
		t.Fatal(err)
	}
	_, info := startSim(t, Options{NoSSH: true, ClusterName: "lab", TaskDuration: time.Millisecond, Faults: fs})
	c := newClient(t, info, "")
	upid := c.ok("POST", "/nodes/z2g4a/qemu", vals("vmid", "100", "cores", "2", "scsi0", "local-lvm:4")).data().(string)
	if st := c.waitTask("z2g4a", upid); st["exitstatus"] != "unexpected status" {
		t.Fatalf("kill: %v", st)
	}
	if conf := c.ok("GET", "/nodes/z2g4a/qemu/100/config", nil).data().(map[string]any); conf["lock"] != "create" || conf["cores"] != nil {
		t.Fatalf("a killed create's config: %v", conf)
	}
	if st := c.waitTask("z2g4a", c.ok("DELETE", "/nodes/z2g4a/qemu/100", nil).data().(string)); st["exitstatus"] != "VM is locked (create)" {
		t.Fatalf("destroy of the locked VM: %v", st)
	}
	root := rootTicketClient(t, info)
	if st := root.waitTask("z2g4a", root.ok("DELETE", "/nodes/z2g4a/qemu/100", vals("skiplock", "1")).data().(string)); st["exitstatus"] != "OK" {
		t.Fatalf("destroy with skiplock: %v", st)
	}
	if vmIDs(c)[100] {
		t.Fatal("VM 100 survived its destroy")
	}
}

// A worker set to die after its work whose work failed by itself ends
// with the work's error: it died of that, not after it. A pool create with
// add_storages whose storage id is taken: the pool is made, the storage
// fails (API2/Ceph/Pool.pm), and the task says so.
func TestFaultTaskLateFailureKeepsTheWorksError(t *testing.T) {
	s, _ := startSim(t, Options{ClusterName: "lab", TaskDuration: time.Millisecond, CephTimeScale: -1})
	c := cephWithMons(t, s)
	c.ok("POST", "/storage", vals("storage", "p1", "type", "dir", "path", "/mnt/p1", "content", "images"))
	if err := s.SetFaultSpec("task cephcreatepool=fail-late:1x"); err != nil {
		t.Fatal(err)
	}
	st := c.waitTask("z2g4a", c.ok("POST", "/nodes/z2g4a/ceph/pool", vals("name", "p1", "add_storages", "1")).data().(string))
	if ex, _ := st["exitstatus"].(string); !strings.HasPrefix(ex, "adding PVE storage for ceph pool 'p1' failed: ") {
		t.Fatalf("a pool create set to fail late whose storage failed: %v", st)
	}
}
