package pvesim

import (
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

const vm100 = "/nodes/z2g4a/qemu/100"

// createRefVM creates the reference lab's VM 100 (on local-lvm) and waits.
func createRefVM(t *testing.T, c *client, extra ...string) {
	t.Helper()
	p := vals("vmid", "100", "name", "vm100", "agent", "1", "bios", "ovmf", "cores", "4", "cpu", "host",
		"memory", "8192", "numa", "0", "ostype", "l26", "sockets", "1", "scsihw", "virtio-scsi-single",
		"scsi0", "local-lvm:32,cache=writeback,discard=on,iothread=on,ssd=1", "net0", "virtio,bridge=vmbr0")
	for i := 0; i+1 < len(extra); i += 2 {
		p.Set(extra[i], extra[i+1])
	}
	r := c.ok("POST", "/nodes/z2g4a/qemu", p)
	st := c.waitTask("z2g4a", r.data().(string))
	if st["exitstatus"] != "OK" {
		t.Fatalf("qmcreate: %v", st["exitstatus"])
	}
}

func vmConfigOf(c *client, current bool) map[string]any {
	p := url.Values{}
	if current {
		p.Set("current", "1")
	}
	return c.ok("GET", vm100+"/config", p).data().(map[string]any)
}

// upidNode is the node a UPID names (UPID:<node>:...).
func upidNode(upid string) string {
	parts := strings.SplitN(upid, ":", 3)
	if len(parts) < 3 {
		return ""
	}
	return parts[1]
}

func qmTaskOK(t *testing.T, c *client, r resp) {
	t.Helper()
	upid := r.data().(string)
	if st := c.waitTask(upidNode(upid), upid); st["exitstatus"] != "OK" {
		t.Fatalf("task: %v", st["exitstatus"])
	}
}

func qmTaskFails(t *testing.T, c *client, r resp, want string) {
	t.Helper()
	upid := r.data().(string)
	st := c.waitTask(upidNode(upid), upid)
	if es, _ := st["exitstatus"].(string); !strings.Contains(es, want) {
		t.Fatalf("task exit %q, want %q", es, want)
	}
}

func TestQemuCreateAllocatesVolumesAndWritesDrives(t *testing.T) {
	s, info := startSim(t, Options{NoSSH: true, ClusterName: "lab"})
	c := newClient(t, info, "")
	createRefVM(t, c)
	conf := vmConfigOf(c, false)
	if got, want := conf["scsi0"], "local-lvm:vm-100-disk-0,cache=writeback,discard=on,iothread=1,size=32G,ssd=1"; got != want {
		t.Errorf("scsi0 = %v, want %v", got, want)
	}
	if net, _ := conf["net0"].(string); !strings.HasPrefix(net, "virtio=BC:24:11:") || !strings.HasSuffix(net, ",bridge=vmbr0") {
		t.Errorf("net0 = %q: want virtio=<MAC with PVE's prefix>,bridge=vmbr0", net)
	}
	if conf["boot"] != "order=scsi0;net0" || conf["cores"] != float64(4) || conf["memory"] != "8192" {
		t.Errorf("boot %v cores %v (%T) memory %v", conf["boot"], conf["cores"], conf["cores"], conf["memory"])
	}
	for _, k := range []string{"digest", "smbios1", "vmgenid", "meta"} {
		if conf[k] == nil {
			t.Errorf("config lacks %s: %v", k, conf)
		}
	}
	s.mu.Lock()
	vols := s.storageVolumesLocked("z2g4a", "local-lvm", 100)
	s.mu.Unlock()
	if len(vols) != 1 || vols[0].Size != 32<<30 || vols[0].Name != "vm-100-disk-0" {
		t.Fatalf("volumes on local-lvm: %+v", vols)
	}

	r := c.do("POST", "/nodes/z2g4b/qemu", vals("vmid", "100"))
	if r.status != 500 || r.msg() != "unable to create VM 100 - VM 100 already exists on node 'z2g4a'\n" {
		t.Errorf("duplicate create: %d %q", r.status, r.msg())
	}
	r = c.do("POST", "/nodes/z2g4a/qemu", vals("vmid", "101", "scsi0", "local-lvm:8,cache=bogus"))
	if r.status != 400 || !strings.Contains(fmt.Sprint(r.errs()["scsi0"]), "scsi0.cache: value 'bogus' does not have a value in the enumeration 'none, writethrough, writeback, unsafe, directsync'") {
		t.Errorf("bad cache: %d %s", r.status, r.raw)
	}
	r = c.do("POST", "/nodes/z2g4a/qemu", vals("vmid", "101", "scsi0", "local:8"))
	if r.status != 400 || r.errs()["storage"] != "storage 'local' does not support vm images" {
		t.Errorf("dir storage without images: %d %s", r.status, r.raw)
	}
	r = c.do("POST", "/nodes/z2g4a/qemu", vals("vmid", "101", "virtio0", "local-lvm:8,ssd=1"))
	if r.status != 400 || !strings.Contains(fmt.Sprint(r.errs()["virtio0"]), "invalid key in comma-separated list property: ssd") {
		t.Errorf("virtio has no ssd: %d %s", r.status, r.raw)
	}

	// The listing, /cluster/resources and nextid see it from every node.
	c2 := newClient(t, info, info.Nodes[2].Endpoint)
	rows := c2.ok("GET", "/cluster/resources", vals("type", "vm")).data().([]any)
	if len(rows) != 1 {
		t.Fatalf("resources: %v", rows)
	}
	row := rows[0].(map[string]any)
	if row["id"] != "qemu/100" || row["node"] != "z2g4a" || row["maxmem"] != float64(8192<<20) || row["maxdisk"] != float64(32<<30) || row["template"] != float64(0) || row["status"] != "stopped" {
		t.Errorf("resource row: %v", row)
	}
	if got := c2.ok("GET", "/cluster/nextid", nil).data(); got != "101" {
		t.Errorf("nextid = %v", got)
	}
	r = c2.do("GET", "/cluster/nextid", vals("vmid", "100"))
	if r.status != 400 || r.errs()["vmid"] != "VM 100 already exists" {
		t.Errorf("nextid 100: %d %s", r.status, r.raw)
	}
	if l := c.ok("GET", "/nodes/z2g4a/qemu", nil).data().([]any); len(l) != 1 || l[0].(map[string]any)["vmid"] != float64(100) {
		t.Errorf("list: %v", l)
	}
}

func TestQemuConfigDigestDeleteAndLock(t *testing.T) {
	s, info := startSim(t, Options{NoSSH: true, ClusterName: "lab"})
	c := newClient(t, info, "")
	createRefVM(t, c)
	digest := vmConfigOf(c, false)["digest"].(string)
	c.ok("PUT", vm100+"/config", vals("description", "reference VM\n\n", "digest", digest))
	if d := vmConfigOf(c, false)["description"]; d != "reference VM" {
		t.Errorf("description %q: PVE strips trailing whitespace", d)
	}
	r := c.do("PUT", vm100+"/config", vals("cores", "2", "digest", digest))
	if r.status != 500 || r.msg() != "checksum mismatch (file change by other user?)\n" {
		t.Errorf("stale digest: %d %q", r.status, r.msg())
	}
	c.ok("PUT", vm100+"/config", vals("delete", "description,numa"))
	conf := vmConfigOf(c, false)
	if _, ok := conf["description"]; ok {
		t.Errorf("description not deleted: %v", conf)
	}
	if conf["cores"] != float64(4) {
		t.Errorf("cores changed by a refused write: %v", conf["cores"])
	}
	// background_delay: null when the worker finished in time, its error
	// when it failed.
	if r := c.ok("POST", vm100+"/config", vals("cores", "3", "background_delay", "5")); r.data() != nil {
		t.Errorf("background_delay: %v", r.data())
	}
	s.InjectFault(Fault{Method: "POST", Path: "/qemu/100/config$", Kind: FaultTaskFailure, Message: "disk on fire", Count: 1})
	r = c.do("POST", vm100+"/config", vals("cores", "5", "background_delay", "5"))
	if r.status != 500 || r.msg() != "failed to update VM 100: disk on fire\n" {
		t.Errorf("background_delay failure: %d %q", r.status, r.msg())
	}
	r = c.do("PUT", vm100+"/config", nil)
	if r.status != 500 || r.msg() != "no options specified\n" {
		t.Errorf("empty update: %d %q", r.status, r.msg())
	}
	r = c.do("PUT", vm100+"/config", vals("boot", "order=scsi0;scsi5"))
	if r.status != 500 || !strings.Contains(r.msg(), "invalid bootorder: device 'scsi5' does not exist'") {
		t.Errorf("boot order: %d %q", r.status, r.msg())
	}

	if conf, node := s.VMConfig(100); node != "z2g4a" || conf["cores"] != "3" || s.VMStatus(100) != "stopped" {
		t.Errorf("hooks: %s %v %s", node, conf, s.VMStatus(100))
	}
	s.SetVMLock(100, "migrate")
	for _, tc := range []struct{ m, p string }{{"PUT", "/config"}, {"DELETE", ""}} {
		r = c.do(tc.m, vm100+tc.p, vals("cores", "2"))
		if tc.m == "DELETE" {
			r = c.do(tc.m, vm100, nil)
			qmTaskFails(t, c, r, "VM is locked (migrate)")
			continue
		}
		if r.status != 500 || r.msg() != "VM is locked (migrate)\n" {
			t.Errorf("%s %s on a locked VM: %d %q", tc.m, tc.p, r.status, r.msg())
		}
	}
	r = c.do("GET", "/nodes/z2g4b/qemu/100/config", nil)
	if r.status != 500 || r.msg() != "Configuration file 'nodes/z2g4b/qemu-server/100.conf' does not exist\n" {
		t.Errorf("wrong node: %d %q", r.status, r.msg())
	}
}

// Parallel writers of one VM queue on its config lock; those that wait
// longer than PVE's timeout fail with PVE's text, and retrying succeeds.
func TestQemuConfigLockTimeout(t *testing.T) {
	s, info := startSim(t, Options{NoSSH: true, TaskDuration: 250 * time.Millisecond, QemuLockTimeout: 350 * time.Millisecond})
	c := newClient(t, info, "")
	createRefVM(t, c)
	const n = 6
	var wg sync.WaitGroup
	exits := make([]string, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := c.ok("POST", vm100+"/config", vals(fmt.Sprintf("scsi%d", i+1), "local-lvm:1"))
			exits[i], _ = c.waitTask("z2g4a", r.data().(string))["exitstatus"].(string)
		}(i)
	}
	wg.Wait()
	failed := 0
	for i, e := range exits {
		switch e {
		case "OK":
		case "can't lock file '/var/lock/qemu-server/lock-100.conf' - got timeout":
			failed++
			// Retrying after the queue drained succeeds.
			qmTaskOK(t, c, c.ok("POST", vm100+"/config", vals(fmt.Sprintf("scsi%d", i+1), "local-lvm:1")))
		default:
			t.Errorf("writer %d: %q", i, e)
		}
	}
	if failed == 0 {
		t.Errorf("no writer timed out on the config lock: %v", exits)
	}
	conf := vmConfigOf(c, false)
	for i := 1; i <= n; i++ {
		if conf[fmt.Sprintf("scsi%d", i)] == nil {
			t.Errorf("scsi%d missing after retries: %v", i, conf)
		}
	}
	// A sync writer waits for the lock a worker holds, within the timeout.
	r := c.ok("POST", vm100+"/config", vals("cores", "2"))
	c.ok("PUT", vm100+"/config", vals("sockets", "2"))
	qmTaskOK(t, c, r)
	if conf := vmConfigOf(c, false); conf["cores"] != float64(2) || conf["sockets"] != float64(2) {
		t.Errorf("cores %v sockets %v", conf["cores"], conf["sockets"])
	}
	_ = s
}

func TestQemuPendingChangesOfRunningVM(t *testing.T) {
	s, info := startSim(t, Options{NoSSH: true})
	c := newClient(t, info, "")
	createRefVM(t, c)
	qmTaskOK(t, c, c.ok("POST", vm100+"/status/start", nil))
	st := c.ok("GET", vm100+"/status/current", nil).data().(map[string]any)
	if st["status"] != "running" || st["qmpstatus"] != "running" || st["pid"] == nil || st["agent"] != float64(1) {
		t.Fatalf("status: %v", st)
	}
	r := c.do("POST", vm100+"/status/start", nil)
	qmTaskFails(t, c, r, "VM 100 already running")

	c.ok("PUT", vm100+"/config", vals("scsi0", "local-lvm:vm-100-disk-0,cache=none,discard=on,iothread=1,size=32G,ssd=1",
		"cores", "6", "name", "renamed", "scsi1", "local-lvm:2,iops_rd=100", "net0", "virtio,bridge=vmbr0,tag=20"))
	cur := vmConfigOf(c, true)
	want := vmConfigOf(c, false)
	if cur["name"] != "renamed" || cur["cores"] != float64(4) || !strings.Contains(cur["scsi0"].(string), "cache=writeback") {
		t.Errorf("current config: %v", cur)
	}
	if cur["scsi1"] == nil || !strings.Contains(cur["net0"].(string), "tag=20") {
		t.Errorf("hotplug of a new disk and a NIC change did not apply live: %v", cur)
	}
	if want["cores"] != float64(6) || !strings.Contains(want["scsi0"].(string), "cache=none") {
		t.Errorf("config with pending: %v", want)
	}
	pending := map[string]map[string]any{}
	for _, row := range c.ok("GET", vm100+"/pending", nil).data().([]any) {
		m := row.(map[string]any)
		pending[m["key"].(string)] = m
	}
	if pending["cores"]["pending"] != float64(6) || pending["cores"]["value"] != float64(4) || pending["name"]["pending"] != nil {
		t.Errorf("pending rows: %v %v", pending["cores"], pending["name"])
	}
	c.ok("PUT", vm100+"/config", vals("delete", "scsi1"))
	cur = vmConfigOf(c, true)
	if cur["scsi1"] != nil || cur["unused0"] != "local-lvm:vm-100-disk-1" {
		t.Errorf("hot-unplugged disk should be unused0: %v", cur)
	}
	c.ok("PUT", vm100+"/config", vals("revert", "cores"))
	if p := vmConfigOf(c, false); p["cores"] != float64(4) {
		t.Errorf("revert: %v", p["cores"])
	}
	// A reboot (fresh start) applies the rest.
	qmTaskOK(t, c, c.ok("POST", vm100+"/status/stop", nil))
	qmTaskOK(t, c, c.ok("POST", vm100+"/status/start", nil))
	cur = vmConfigOf(c, true)
	if !strings.Contains(cur["scsi0"].(string), "cache=none") {
		t.Errorf("pending cache not applied by the restart: %v", cur["scsi0"])
	}
	s.mu.Lock()
	vm := s.st.Nodes["z2g4a"].VMs[100]
	left := len(vm.Pending) + len(vm.PendingDelete)
	s.mu.Unlock()
	if left != 0 {
		t.Errorf("pending left after restart: %v %v", vm.Pending, vm.PendingDelete)
	}
	// unlink with force frees the volume.
	c.ok("PUT", vm100+"/unlink", vals("idlist", "unused0", "force", "1"))
	s.mu.Lock()
	_, err := s.volumeLocked("z2g4a", "local-lvm:vm-100-disk-1")
	s.mu.Unlock()
	if err == nil {
		t.Errorf("unlink force=1 kept the volume")
	}
}

func TestQemuResizeMoveDestroy(t *testing.T) {
	s, info := startSim(t, Options{NoSSH: true})
	c := newClient(t, info, "")
	s.mu.Lock()
	s.storageCfgLocked("z2g4a").add(&storageEntry{ID: "vmdata", Type: "dir", Opts: map[string]string{"path": "/srv/vmdata", "content": "images"}})
	s.mu.Unlock()
	createRefVM(t, c)
	qmTaskOK(t, c, c.ok("PUT", vm100+"/resize", vals("disk", "scsi0", "size", "+16G")))
	if got := vmConfigOf(c, false)["scsi0"]; !strings.Contains(got.(string), "size=48G") {
		t.Errorf("after resize: %v", got)
	}
	qmTaskFails(t, c, c.ok("PUT", vm100+"/resize", vals("disk", "scsi0", "size", "40G")), "shrinking disks is not supported")
	r := c.do("POST", vm100+"/move_disk", vals("disk", "scsi0", "storage", "local-lvm"))
	if r.status != 500 || r.msg() != "you can't move to the same storage with same format\n" {
		t.Errorf("same storage: %d %q", r.status, r.msg())
	}
	r = c.do("POST", vm100+"/move_disk", vals("disk", "scsi0", "storage", "vmdata", "digest", "0123"))
	if r.status != 500 || r.msg() != "detected modified configuration - file changed by other user? Try again.\n" {
		t.Errorf("stale digest: %d %q", r.status, r.msg())
	}
	qmTaskOK(t, c, c.ok("POST", vm100+"/move_disk", vals("disk", "scsi0", "storage", "vmdata")))
	conf := vmConfigOf(c, false)
	if conf["scsi0"] != "vmdata:100/vm-100-disk-0.qcow2,cache=writeback,discard=on,iothread=1,size=48G,ssd=1" || conf["unused0"] != "local-lvm:vm-100-disk-0" {
		t.Errorf("after move: scsi0 %v unused0 %v", conf["scsi0"], conf["unused0"])
	}
	qmTaskOK(t, c, c.ok("POST", vm100+"/move_disk", vals("disk", "scsi0", "storage", "local-lvm", "delete", "1")))
	conf = vmConfigOf(c, false)
	if conf["scsi0"] != "local-lvm:vm-100-disk-1,cache=writeback,discard=on,iothread=1,size=48G,ssd=1" {
		t.Errorf("move back: %v", conf["scsi0"])
	}
	s.mu.Lock()
	n := len(s.storageVolumesLocked("z2g4a", "vmdata", 100))
	s.mu.Unlock()
	if n != 0 {
		t.Errorf("delete=1 left the source volume")
	}

	c.ok("PUT", vm100+"/config", vals("protection", "1"))
	r = c.do("DELETE", vm100, nil)
	if r.status != 500 || r.msg() != "can't remove VM 100 - protection mode enabled\n" {
		t.Errorf("protected destroy: %d %q", r.status, r.msg())
	}
	r = c.do("PUT", vm100+"/config", vals("delete", "unused0"))
	if r.status != 500 || r.msg() != "can't remove unused disk 'local-lvm:vm-100-disk-0' - protection mode enabled\n" {
		t.Errorf("protected unused delete: %d %q", r.status, r.msg())
	}
	c.ok("PUT", vm100+"/config", vals("protection", "0"))
	qmTaskOK(t, c, c.ok("POST", vm100+"/status/start", nil))
	r = c.do("DELETE", vm100, nil)
	if r.status != 500 || r.msg() != "VM 100 is running - destroy failed\n" {
		t.Errorf("running destroy: %d %q", r.status, r.msg())
	}
	qmTaskOK(t, c, c.ok("POST", vm100+"/status/shutdown", nil))
	qmTaskOK(t, c, c.ok("DELETE", vm100, vals("purge", "1", "destroy-unreferenced-disks", "1")))
	s.mu.Lock()
	left := len(s.storageVolumesLocked("z2g4a", "local-lvm", 100))
	s.mu.Unlock()
	if left != 0 {
		t.Errorf("destroy left %d volumes (scsi0 and unused0 are owned)", left)
	}
	if r := c.do("GET", vm100+"/config", nil); r.status != 500 {
		t.Errorf("config after destroy: %d", r.status)
	}
}

func TestQemuMigrate(t *testing.T) {
	s, info := startSim(t, Options{NoSSH: true, ClusterName: "lab"})
	c := newClient(t, info, "")
	s.mu.Lock()
	s.storageCfgLocked("z2g4a").add(&storageEntry{ID: "shared", Type: "nfs", Opts: map[string]string{"path": "/mnt/pve/shared", "content": "images", "server": "10.0.0.1", "export": "/x"}})
	s.mu.Unlock()
	createRefVM(t, c, "scsi1", "shared:1")
	qmTaskOK(t, c, c.ok("POST", vm100+"/status/start", nil))
	r := c.do("POST", vm100+"/migrate", vals("target", "z2g4b"))
	if r.status != 500 || r.msg() != "can't migrate running VM without --online\n" {
		t.Errorf("offline migrate of a running VM: %d %q", r.status, r.msg())
	}
	qmTaskFails(t, c, c.ok("POST", vm100+"/migrate", vals("target", "z2g4b", "online", "1")), "can't migrate VM - check log")
	r = c.ok("POST", vm100+"/migrate", vals("target", "z2g4b", "online", "1", "with-local-disks", "1"))
	qmTaskOK(t, c, r)
	s.mu.Lock()
	node, vm := s.guestNodeLocked("z2g4a", 100)
	status := vm.Status
	_, lerr := s.volumeLocked("z2g4b", "local-lvm:vm-100-disk-0")
	_, serr := s.volumeLocked("z2g4b", "shared:100/vm-100-disk-0.qcow2")
	s.mu.Unlock()
	if node != "z2g4b" || status != "running" || lerr != nil || serr != nil {
		t.Errorf("after migration: node %s status %s local %v shared %v", node, status, lerr, serr)
	}
	if r := c.do("POST", "/nodes/z2g4b/qemu/100/migrate", vals("target", "z2g4b")); r.status != 400 || r.errs()["target"] != "target is local node." {
		t.Errorf("migrate to self: %d %s", r.status, r.raw)
	}
}

// With HA managing the VM, start, stop and migrate become HA requests that
// the HA model carries out, destroy needs purge (which removes the HA
// resource), and /cluster/resources shows hastate.
func TestQemuHAManagedVM(t *testing.T) {
	s, info := startSim(t, Options{NoSSH: true, ClusterName: "lab"})
	c := newClient(t, info, "")
	createRefVM(t, c)
	c.ok("POST", "/cluster/ha/resources", vals("sid", "vm:100", "state", "stopped"))
	r := c.ok("POST", vm100+"/status/start", nil)
	if upid := r.data().(string); !strings.Contains(upid, ":hastart:100:") {
		t.Errorf("start of an HA-managed VM: %s", upid)
	}
	qmTaskOK(t, c, r)
	if st := s.VMStatus(100); st != "running" {
		t.Errorf("after hastart the HA manager must have started VM 100: %s", st)
	}
	rows := c.ok("GET", "/cluster/resources", vals("type", "vm")).data().([]any)
	if row := rows[0].(map[string]any); row["hastate"] != "started" {
		t.Errorf("hastate: %v", row)
	}
	if st := c.ok("GET", vm100+"/status/current", nil).data().(map[string]any); fmt.Sprint(st["ha"]) != "map[managed:1 state:started]" {
		t.Errorf("status ha: %v", st["ha"])
	}
	r = c.ok("POST", vm100+"/status/stop", nil)
	if upid := r.data().(string); !strings.Contains(upid, ":hastop:100:") {
		t.Errorf("stop of an HA-managed VM: %s", upid)
	}
	qmTaskOK(t, c, r)
	if st := s.VMStatus(100); st != "stopped" {
		t.Errorf("after hastop: %s", st)
	}
	qmTaskOK(t, c, c.ok("POST", vm100+"/migrate", vals("target", "z2g4b")))
	// hamigrate queues the migration; the LRM carries it out.
	s.WaitHAMigrations()
	if cfg := c.do("GET", "/nodes/z2g4b/qemu/100/config", nil); cfg.status != 200 {
		t.Errorf("after the HA migration VM 100 is not on z2g4b: %d %s", cfg.status, cfg.raw)
	}
	r = c.do("DELETE", "/nodes/z2g4b/qemu/100", nil)
	if r.status != 500 || r.msg() != "unable to remove VM 100 - used in HA resources and purge parameter not set.\n" {
		t.Errorf("destroy without purge: %d %q", r.status, r.msg())
	}
	qmTaskOK(t, c, c.ok("DELETE", "/nodes/z2g4b/qemu/100", vals("purge", "1")))
	if r := c.do("GET", "/cluster/ha/resources/vm:100", nil); r.status == 200 {
		t.Errorf("purge left the HA resource: %s", r.raw)
	}
}
