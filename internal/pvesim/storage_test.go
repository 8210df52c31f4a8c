package pvesim

import (
	"strings"
	"testing"
)

// Storage CRUD as Config.pm and SectionConfig answer: create with the
// return object, duplicate ids, required, fixed and unknown keys, delete
// on update, digest, 0/1 booleans, storage.cfg text.
func TestStorageConfigCRUD(t *testing.T) {
	s, info := startSim(t, Options{NoSSH: true, ClusterName: "lab"})
	c := newClient(t, info, "")

	list := c.ok("GET", "/storage", nil).data().([]any)
	if len(list) != 2 || list[0].(map[string]any)["storage"] != "local" || list[1].(map[string]any)["storage"] != "local-lvm" {
		t.Fatalf("installer storages: %v", list)
	}

	r := c.ok("POST", "/storage", vals("storage", "backup", "type", "nfs", "server", "10.0.0.5", "export", "/srv/backup", "content", "backup,iso"))
	if d := r.data().(map[string]any); d["storage"] != "backup" || d["type"] != "nfs" || len(d) != 2 {
		t.Fatalf("create result: %v", d)
	}
	got := c.ok("GET", "/storage/backup", nil).data().(map[string]any)
	if got["path"] != "/mnt/pve/backup" || got["shared"] != float64(1) || got["content"] != "backup,iso" || got["digest"] == "" {
		t.Fatalf("nfs storage: %v", got)
	}

	r = c.do("POST", "/storage", vals("storage", "backup", "type", "dir", "path", "/srv"))
	if r.status != 500 || r.msg() != "create storage failed: storage ID 'backup' already defined\n" {
		t.Fatalf("duplicate: %d %q", r.status, r.msg())
	}
	r = c.do("POST", "/storage", vals("storage", "thin", "type", "lvmthin", "vgname", "pve"))
	if r.status != 500 || r.msg() != "missing value for required option 'thinpool'\n" {
		t.Fatalf("missing thinpool: %d %q", r.status, r.msg())
	}
	r = c.do("POST", "/storage", vals("storage", "thin", "type", "lvmthin", "vgname", "pve", "thinpool", "data", "krbd", "1"))
	if r.status != 500 || r.msg() != "unexpected property 'krbd'\n" {
		t.Fatalf("foreign key: %d %q", r.status, r.msg())
	}
	r = c.do("POST", "/storage", vals("storage", "thin", "type", "lvmthin", "vgname", "pve", "thinpool", "nope"))
	if r.status != 500 || !strings.Contains(r.msg(), "no such logical volume pve/nope") {
		t.Fatalf("missing thin pool: %d %q", r.status, r.msg())
	}
	r = c.do("POST", "/storage", vals("storage", "x", "type", "rbd", "krbd", "yes"))
	if r.status != 400 || r.errs()["krbd"] != "type check ('boolean') failed - got 'yes'" {
		t.Fatalf("boolean: %d %v", r.status, r.errs())
	}

	// A fixed key is not changeable; the update schema does not even have
	// lvmthin's, but zfspool's pool is rbd's optional pool.
	c.ok("POST", "/storage", vals("storage", "ceph-ext", "type", "rbd", "monhost", "10.1.1.20 10.1.1.21", "pool", "vms", "krbd", "1", "content", "images"))
	r = c.do("PUT", "/storage/local-lvm", vals("vgname", "other"))
	if r.status != 400 || r.errs()["vgname"] == nil {
		t.Fatalf("vgname on update: %d %v", r.status, r.errs())
	}
	r = c.do("PUT", "/storage/local", vals("pool", "x"))
	if r.status != 500 || r.msg() != "update storage failed: unexpected property 'pool'\n" {
		t.Fatalf("unexpected on update: %d %q", r.status, r.msg())
	}
	digest := c.ok("GET", "/storage/ceph-ext", nil).data().(map[string]any)["digest"].(string)
	c.ok("PUT", "/storage/ceph-ext", vals("krbd", "0", "delete", "pool", "digest", digest))
	got = c.ok("GET", "/storage/ceph-ext", nil).data().(map[string]any)
	if got["krbd"] != float64(0) || got["pool"] != nil || got["digest"] == digest {
		t.Fatalf("after update: %v", got)
	}
	r = c.do("PUT", "/storage/ceph-ext", vals("krbd", "1", "digest", digest))
	if r.status != 500 || !strings.HasSuffix(r.msg(), "detected modified configuration - file changed by other user? Try again.\n") {
		t.Fatalf("stale digest: %d %q", r.status, r.msg())
	}
	r = c.do("PUT", "/storage/ceph-ext", vals("krbd", "1", "delete", "krbd"))
	if r.status != 500 || !strings.HasSuffix(r.msg(), "cannot set and delete property 'krbd' at the same time!\n") {
		t.Fatalf("set and delete: %d %q", r.status, r.msg())
	}
	r = c.do("PUT", "/storage/local", vals("delete", "path"))
	if r.status != 500 || !strings.HasSuffix(r.msg(), "unable to delete required option 'path'\n") {
		t.Fatalf("delete path: %d %q", r.status, r.msg())
	}
	// Content a type cannot hold is dropped (a warning in PVE); none at
	// all is refused.
	c.ok("PUT", "/storage/ceph-ext", vals("content", "images,iso,rootdir"))
	if got := c.ok("GET", "/storage/ceph-ext", nil).data().(map[string]any)["content"]; got != "images,rootdir" {
		t.Fatalf("content: %v", got)
	}
	r = c.do("PUT", "/storage/ceph-ext", vals("content", "iso"))
	if r.status != 500 || !strings.HasSuffix(r.msg(), "storage does not support content type 'none'\n") {
		t.Fatalf("content none: %d %q", r.status, r.msg())
	}
	c.ok("PUT", "/storage/ceph-ext", vals("disable", "1", "nodes", "z2g4b,z2g4a"))

	want := "rbd: ceph-ext\n\tdisable\n\tcontent images,rootdir\n\tkrbd 0\n\tmonhost 10.1.1.20 10.1.1.21\n\tnodes z2g4a,z2g4b\n"
	if cfg := s.StorageCfg("z2g4a"); !strings.Contains(cfg, want) {
		t.Fatalf("storage.cfg:\n%s\nwant section:\n%s", cfg, want)
	}

	c.ok("DELETE", "/storage/ceph-ext", nil)
	r = c.do("DELETE", "/storage/ceph-ext", nil)
	if r.status != 500 || r.msg() != "delete storage failed: storage 'ceph-ext' does not exist\n" {
		t.Fatalf("delete missing: %d %q", r.status, r.msg())
	}
	r = c.do("GET", "/storage/ceph-ext", nil)
	if r.status != 500 || r.msg() != "storage 'ceph-ext' does not exist\n" {
		t.Fatalf("get missing: %d %q", r.status, r.msg())
	}
}

// Plugin types exist only where the plugin is installed: elsewhere the
// type enum refuses them, and their sections are invisible.
func TestStoragePluginTypes(t *testing.T) {
	s, info := startSim(t, Options{NoSSH: true, ClusterName: "lab"})
	c := newClient(t, info, "")
	r := c.do("POST", "/storage", vals("storage", "linstor", "type", "drbd", "resourcegroup", "pve-rg"))
	if r.status != 400 || !strings.HasPrefix(r.errs()["type"].(string), "value 'drbd' does not have a value in the enumeration 'btrfs, cephfs, cifs, dir, esxi, iscsi") {
		t.Fatalf("drbd without plugin: %d %v", r.status, r.errs())
	}
	if r.errs()["resourcegroup"] == nil {
		t.Fatalf("plugin property accepted without the plugin: %v", r.errs())
	}
	for _, n := range info.Nodes {
		if err := s.InstallStoragePlugin(n.Name, "drbd"); err != nil {
			t.Fatal(err)
		}
	}
	r = c.do("POST", "/storage", vals("storage", "linstor", "type", "drbd", "controller", "10.0.0.5"))
	if r.status != 500 || r.msg() != "missing value for required option 'resourcegroup'\n" {
		t.Fatalf("drbd without resourcegroup: %d %q", r.status, r.msg())
	}
	c.ok("POST", "/storage", vals("storage", "linstor", "type", "drbd", "controller", "10.0.0.5", "resourcegroup", "pve-rg", "content", "images,rootdir"))
	got := c.ok("GET", "/storage/linstor", nil).data().(map[string]any)
	if got["resourcegroup"] != "pve-rg" || got["controller"] != "10.0.0.5" || got["shared"] != float64(1) {
		t.Fatalf("drbd storage: %v", got)
	}
	r = c.do("POST", "/storage", vals("storage", "vita", "type", "vitastor", "vitastor_pool", "pool1"))
	if r.status != 400 || r.errs()["vitastor_pool"] == nil {
		t.Fatalf("vitastor key without plugin: %d %v", r.status, r.errs())
	}
	if err := s.InstallStoragePlugin("z2g4a", "vitastor"); err != nil {
		t.Fatal(err)
	}
	c.ok("POST", "/storage", vals("storage", "vita", "type", "vitastor", "vitastor_pool", "pool1", "vitastor_etcd_address", "10.0.0.1:2379", "vitastor_nbd", "0"))
	if got := c.ok("GET", "/storage/vita", nil).data().(map[string]any); got["vitastor_pool"] != "pool1" || got["vitastor_nbd"] != float64(0) {
		t.Fatalf("vitastor storage: %v", got)
	}
	// z2g4b lacks the vitastor plugin: its parse skips the section.
	cb := newClient(t, info, info.Nodes[1].Endpoint)
	for _, e := range cb.ok("GET", "/storage", nil).data().([]any) {
		if e.(map[string]any)["storage"] == "vita" {
			t.Fatal("z2g4b lists a storage of a plugin it does not have")
		}
	}
	// Status lists plugin storages active.
	st := c.ok("GET", "/nodes/z2g4a/storage/vita/status", nil).data().(map[string]any)
	if st["active"] != float64(1) || st["type"] != "vitastor" {
		t.Fatalf("vitastor status: %v", st)
	}
}

// 8.4 still has glusterfs; 9.1 refuses the type.
func TestStorageGlusterfsRelease(t *testing.T) {
	_, info := startSim(t, Options{NoSSH: true, PVERelease: "8.4"})
	c := newClient(t, info, "")
	c.ok("POST", "/storage", vals("storage", "gv", "type", "glusterfs", "server", "10.0.0.7", "volume", "gv0"))
	if got := c.ok("GET", "/storage/gv", nil).data().(map[string]any); got["path"] != "/mnt/pve/gv" || got["volume"] != "gv0" {
		t.Fatalf("glusterfs: %v", got)
	}
	_, info9 := startSim(t, Options{NoSSH: true})
	c9 := newClient(t, info9, "")
	r := c9.do("POST", "/storage", vals("storage", "gv", "type", "glusterfs", "volume", "gv0"))
	if r.status != 400 || r.errs()["type"] == nil || r.errs()["volume"] == nil {
		t.Fatalf("glusterfs on 9.1: %d %v", r.status, r.errs())
	}
}

// Node status: filters, sizes from the disk and Ceph models, content.
func TestNodeStorageStatusAndContent(t *testing.T) {
	s, info := startSim(t, Options{NoSSH: true})
	c := newClient(t, info, "")
	node := info.Nodes[0].Name
	list := c.ok("GET", "/nodes/"+node+"/storage", nil).data().([]any)
	if len(list) != 2 {
		t.Fatalf("storages: %v", list)
	}
	lvm := list[1].(map[string]any)
	if lvm["storage"] != "local-lvm" || lvm["active"] != float64(1) || lvm["total"] != float64(pveDataSize) || lvm["shared"] != float64(0) || lvm["used_fraction"] == nil {
		t.Fatalf("local-lvm: %v", lvm)
	}
	s.mu.Lock()
	if _, err := s.allocVolumeLocked(node, "local-lvm", 100, 32<<30, ""); err != nil {
		t.Fatal(err)
	}
	s.mu.Unlock()
	st := c.ok("GET", "/nodes/"+node+"/storage/local-lvm/status", nil).data().(map[string]any)
	if st["used"] != float64(33<<30) {
		t.Fatalf("used after a 32G volume: %v", st)
	}
	vols := c.ok("GET", "/nodes/"+node+"/storage/local-lvm/content", nil).data().([]any)
	if len(vols) != 1 || vols[0].(map[string]any)["volid"] != "local-lvm:vm-100-disk-0" || vols[0].(map[string]any)["size"] != float64(32<<30) {
		t.Fatalf("content: %v", vols)
	}
	if got := c.ok("GET", "/nodes/"+node+"/storage", vals("content", "iso")).data().([]any); len(got) != 1 || got[0].(map[string]any)["storage"] != "local" {
		t.Fatalf("content filter: %v", got)
	}
	c.ok("PUT", "/storage/local-lvm", vals("disable", "1"))
	if got := c.ok("GET", "/nodes/"+node+"/storage", vals("enabled", "1")).data().([]any); len(got) != 1 {
		t.Fatalf("enabled filter: %v", got)
	}
	st = c.ok("GET", "/nodes/"+node+"/storage/local-lvm/status", nil).data().(map[string]any)
	if st["enabled"] != float64(0) || st["active"] != float64(0) || st["total"] != float64(0) {
		t.Fatalf("disabled status: %v", st)
	}
	r := c.do("GET", "/nodes/"+node+"/storage", vals("storage", "nope"))
	if r.status != 400 || r.errs()["storage"] != "No such storage." {
		t.Fatalf("unknown storage filter: %d %v", r.status, r.errs())
	}
}

// Thin pools and zpools on free disks; OSD and boot disks refused.
func TestNodeThinPoolAndZFS(t *testing.T) {
	s, info := startSim(t, Options{NoSSH: true, TaskDuration: -1, ClusterName: "lab"})
	c := newClient(t, info, "")
	node := info.Nodes[0].Name
	base := "/nodes/" + node + "/disks/"
	r := c.do("POST", base+"lvmthin", vals("name", "fast", "device", "/dev/sda"))
	if r.status != 500 || r.msg() != "device '/dev/sda' is already in use\n" {
		t.Fatalf("boot disk: %d %q", r.status, r.msg())
	}
	st := c.waitTask(node, c.ok("POST", base+"lvmthin", vals("name", "fast", "device", "/dev/sdb", "add_storage", "1")).data().(string))
	if st["exitstatus"] != "OK" {
		t.Fatalf("lvmthin create: %v", st)
	}
	pools := c.ok("GET", base+"lvmthin", nil).data().([]any)
	if len(pools) != 2 || pools[0].(map[string]any)["lv"] != "fast" || pools[0].(map[string]any)["lv_size"].(float64) < 400e9 {
		t.Fatalf("thin pools: %v", pools)
	}
	got := c.ok("GET", "/storage/fast", nil).data().(map[string]any)
	if got["type"] != "lvmthin" || got["vgname"] != "fast" || got["thinpool"] != "fast" || got["nodes"] != node {
		t.Fatalf("added storage: %v", got)
	}
	for _, d := range c.ok("GET", base+"list", nil).data().([]any) {
		if d := d.(map[string]any); d["devpath"] == "/dev/sdb" && d["used"] != "LVM" {
			t.Fatalf("sdb after lvmthin: %v", d)
		}
	}
	// Disks/LVM.pm's index: the installer's pve and the new VG, each
	// with its physical volume.
	vgs := c.ok("GET", base+"lvm", nil).data().(map[string]any)["children"].([]any)
	if len(vgs) != 2 {
		t.Fatalf("volume groups: %v", vgs)
	}
	for i, want := range [][2]string{{"fast", "/dev/sdb"}, {"pve", "/dev/sda3"}} {
		vg := vgs[i].(map[string]any)
		pvs := vg["children"].([]any)
		if vg["name"] != want[0] || len(pvs) != 1 || pvs[0].(map[string]any)["name"] != want[1] ||
			vg["free"].(float64) >= vg["size"].(float64) || vg["lvcount"].(float64) < 1 {
			t.Fatalf("volume group %d: %v", i, vg)
		}
	}
	r = c.do("POST", base+"zfs", vals("name", "tank", "devices", "/dev/sdb,/dev/sdc", "raidlevel", "mirror"))
	if r.status != 500 || r.msg() != "device '/dev/sdb' is already in use\n" {
		t.Fatalf("zfs on a used disk: %d %q", r.status, r.msg())
	}
	r = c.do("POST", base+"zfs", vals("name", "tank", "devices", "/dev/sdc", "raidlevel", "mirror"))
	if r.status != 500 || r.msg() != "mirror needs at least 2 disks\n" {
		t.Fatalf("mirror of one: %d %q", r.status, r.msg())
	}
	st = c.waitTask(node, c.ok("POST", base+"zfs", vals("name", "tank", "devices", "/dev/sdc,/dev/nvme0n1", "raidlevel", "mirror", "compression", "lz4", "add_storage", "1")).data().(string))
	if st["exitstatus"] != "OK" {
		t.Fatalf("zfs create: %v", st)
	}
	zp := c.ok("GET", base+"zfs", nil).data().([]any)
	if len(zp) != 1 || zp[0].(map[string]any)["name"] != "tank" || zp[0].(map[string]any)["health"] != "ONLINE" {
		t.Fatalf("zpools: %v", zp)
	}
	if st := c.ok("GET", "/nodes/"+node+"/storage/tank/status", nil).data().(map[string]any); st["active"] != float64(1) || st["total"].(float64) < 400e9 {
		t.Fatalf("zfspool status: %v", st)
	}
	r = c.do("PUT", "/storage/tank", vals("pool", "other"))
	if r.status != 500 || r.msg() != "update storage failed: can't change value of fixed parameter 'pool'\n" {
		t.Fatalf("fixed pool: %d %q", r.status, r.msg())
	}
	r = c.do("PUT", "/storage/tank", vals("delete", "pool"))
	if r.status != 500 || !strings.HasSuffix(r.msg(), "unable to delete required option 'pool'\n") {
		t.Fatalf("delete fixed pool: %d %q", r.status, r.msg())
	}
	// Another node has neither: the storage is restricted to this node.
	if st := c.ok("GET", "/nodes/"+info.Nodes[1].Name+"/storage/tank/status", nil).data().(map[string]any); st["enabled"] != float64(0) {
		t.Fatalf("tank on another node: %v", st)
	}
	// Removing the pool without cleanup leaves the disks partitioned.
	st = c.waitTask(node, c.ok("DELETE", base+"zfs/tank", vals("cleanup-config", "1")).data().(string))
	if st["exitstatus"] != "OK" {
		t.Fatalf("zfs delete: %v", st)
	}
	if r := c.do("GET", "/storage/tank", nil); r.status != 500 {
		t.Fatalf("tank storage survived cleanup-config: %s", r.raw)
	}
	r = c.do("POST", base+"zfs", vals("name", "tank2", "devices", "/dev/sdc", "raidlevel", "single"))
	if r.status != 500 || r.msg() != "device '/dev/sdc' is already in use\n" {
		t.Fatalf("zfs on a partitioned disk: %d %q", r.status, r.msg())
	}
	st = c.waitTask(node, c.ok("DELETE", base+"lvmthin/fast", vals("volume-group", "fast", "cleanup-disks", "1", "cleanup-config", "1")).data().(string))
	if st["exitstatus"] != "OK" {
		t.Fatalf("lvmthin delete: %v", st)
	}
	s.mu.Lock()
	d := findDisk(s.nodeDisks(s.st.Nodes[node]), "/dev/sdb")
	free := s.diskUsed(s.st.Nodes[node], d) == ""
	s.mu.Unlock()
	if !free {
		t.Fatal("sdb not free after lvmthin delete with cleanup-disks")
	}
}

// The RBD storage pool creation adds lives in storage.cfg, reports the
// Ceph pool's space, holds volumes as the pool's images (which stop the
// pool's destroy), and goes with the pool on remove_storages.
func TestStorageRBDOnCephPool(t *testing.T) {
	s, _, c := cephLab(t)
	st := c.waitTask("z2g4a", c.ok("POST", "/nodes/z2g4a/ceph/pool", vals("name", "ceph", "add_storages", "1")).data().(string))
	if st["exitstatus"] != "OK" {
		t.Fatalf("pool: %v", st)
	}
	got := c.ok("GET", "/storage/ceph", nil).data().(map[string]any)
	if got["type"] != "rbd" || got["pool"] != "ceph" || got["krbd"] != float64(0) || got["content"] != "images,rootdir" || got["shared"] != float64(1) {
		t.Fatalf("storage: %v", got)
	}
	if want := "rbd: ceph\n\tcontent images,rootdir\n\tkrbd 0\n\tpool ceph\n"; !strings.Contains(s.StorageCfg("z2g4a"), want) {
		t.Fatalf("storage.cfg:\n%s", s.StorageCfg("z2g4a"))
	}
	status := c.ok("GET", "/nodes/z2g4b/storage/ceph/status", nil).data().(map[string]any)
	if status["active"] != float64(1) || status["total"].(float64) <= 0 || status["avail"].(float64) <= 0 {
		t.Fatalf("rbd status: %v", status)
	}
	// A second add_storages for the same name fails as PVE's create does.
	st = c.waitTask("z2g4a", c.ok("POST", "/nodes/z2g4a/ceph/pool", vals("name", "ceph", "add_storages", "1")).data().(string))
	if st["exitstatus"] != "adding PVE storage for ceph pool 'ceph' failed: create storage failed: storage ID 'ceph' already defined" {
		t.Fatalf("second add_storages: %v", st)
	}
	s.mu.Lock()
	v, err := s.allocVolumeLocked("z2g4a", "ceph", 100, 32<<30, "")
	s.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if vols := c.ok("GET", "/nodes/z2g4c/storage/ceph/content", nil).data().([]any); len(vols) != 1 || vols[0].(map[string]any)["volid"] != v.volid() {
		t.Fatalf("shared content from another node: %v", vols)
	}
	st = c.waitTask("z2g4a", c.ok("DELETE", "/nodes/z2g4a/ceph/pool/ceph", vals("remove_storages", "1")).data().(string))
	if st["exitstatus"] != "ceph pool 'ceph' still in use by storage 'ceph'" {
		t.Fatalf("destroy with a volume: %v", st)
	}
	s.mu.Lock()
	err = s.freeVolumeLocked("z2g4a", v.volid())
	s.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	st = c.waitTask("z2g4a", c.ok("DELETE", "/nodes/z2g4a/ceph/pool/ceph", vals("remove_storages", "1")).data().(string))
	if st["exitstatus"] != "OK" {
		t.Fatalf("destroy after the volume went: %v", st)
	}
	if r := c.do("GET", "/storage/ceph", nil); r.status != 500 || len(s.CephRBDStorages()) != 0 {
		t.Fatalf("storage after the pool: %s %v", r.raw, s.CephRBDStorages())
	}
}

// Without quorum pmxcfs is read-only: cfs_lock cannot take the storage.cfg
// lock and says so with its own prefix, which storage.cfg errors of the
// locked code itself (the duplicate ID above) do not carry.
func TestStorageWithoutQuorum(t *testing.T) {
	s, info := startSim(t, Options{ClusterName: "acctest"})
	c := newClient(t, info, "")
	s.PowerOff("z2g4b")
	s.PowerOff("z2g4c")
	want := "cfs-lock 'file-storage_cfg' error: no quorum!\n"
	if r := c.do("POST", "/storage", vals("storage", "backup", "type", "dir", "path", "/srv")); r.status != 500 || r.msg() != "create storage failed: "+want {
		t.Fatalf("create: %d %q", r.status, r.msg())
	}
	if r := c.do("PUT", "/storage/local", vals("content", "iso")); r.status != 500 || r.msg() != "update storage failed: "+want {
		t.Fatalf("update: %d %q", r.status, r.msg())
	}
	if r := c.do("DELETE", "/storage/local", nil); r.status != 500 || r.msg() != "delete storage failed: "+want {
		t.Fatalf("delete: %d %q", r.status, r.msg())
	}
}
