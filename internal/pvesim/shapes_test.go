package pvesim

import (
	"strings"
	"testing"
)

// The network API answers with what pve-common's interfaces reader makes
// of the file: option values are the file's text, flags and the stanza
// counter are numbers.
func TestShapesNetworkAsReadFromTheFile(t *testing.T) {
	_, info := startSim(t, Options{NoSSH: true})
	c := newClient(t, info, "")
	const n = "/nodes/z2g4a/network"
	c.ok("POST", n, vals("iface", "vmbr1", "type", "bridge", "autostart", "1", "mtu", "9000",
		"bridge_vlan_aware", "1", "cidr", "169.254.50.10/24",
		"address6", "fd00::10", "netmask6", "64", "comments", "v4 side", "comments6", "v6 side"))
	c.ok("POST", n, vals("iface", "bond0", "type", "bond", "slaves", "bcm5720p0 bcm5720p1",
		"bond_mode", "active-backup", "bond-primary", "bcm5720p0"))
	c.ok("POST", n, vals("iface", "vmbr1.60", "type", "vlan", "address", "169.254.60.10", "netmask", "255.255.255.0"))
	c.ok("POST", n, vals("iface", "i219.70", "type", "vlan"))

	list := c.ok("GET", n, nil).data()
	br := findIface(list, "vmbr1")
	for k, want := range map[string]any{
		"mtu": "9000", "bridge_fd": "0", "bridge_stp": "off", "bridge_vlan_aware": float64(1), "bridge_vids": "2-4094",
		"autostart": float64(1), "cidr": "169.254.50.10/24", "netmask": "24", "cidr6": "fd00::10/64", "netmask6": "64",
		"method": "static", "method6": "static", "comments": "v4 side\nv6 side\n", "comments6": nil, "exists": nil,
	} {
		if got := br[k]; got != want {
			t.Errorf("vmbr1 %s = %#v, want %#v", k, got, want)
		}
	}
	if f, _ := br["families"].([]any); len(f) != 2 || f[0] != "inet" || f[1] != "inet6" {
		t.Errorf("families %v", br["families"])
	}
	if _, ok := br["priority"].(float64); !ok {
		t.Errorf("priority %#v", br["priority"])
	}
	bond := findIface(list, "bond0")
	if bond["slaves"] != "bcm5720p0 bcm5720p1" || bond["bond-primary"] != "bcm5720p0" || bond["bond_miimon"] != "100" {
		t.Errorf("bond0: %v", bond)
	}
	// A vlan on a bridge has no "exists", on a NIC it has the NIC's; a
	// dotted netmask is read back as its prefix length.
	vl := findIface(list, "vmbr1.60")
	if _, has := vl["exists"]; has || vl["vlan-id"] != "60" || vl["vlan-raw-device"] != "vmbr1" || vl["cidr"] != "169.254.60.10/24" || vl["netmask"] != "24" {
		t.Errorf("vmbr1.60: %v", vl)
	}
	if vl := findIface(list, "i219.70"); vl["exists"] != float64(1) {
		t.Errorf("i219.70: %v", vl)
	}
	// The file starts with lo (stanza 2), so the first listed interface is 3.
	lowest := 1e9
	for _, e := range list.([]any) {
		if p, ok := e.(map[string]any)["priority"].(float64); ok && p < lowest {
			lowest = p
		}
	}
	if lowest != 3 {
		t.Errorf("lowest priority %v, want 3", lowest)
	}
	if one := c.ok("GET", n+"/vmbr1", nil).data().(map[string]any); one["mtu"] != "9000" || one["comments"] != "v4 side\nv6 side\n" {
		t.Errorf("single GET: %v", one)
	}
	if lo := c.ok("GET", n+"/lo", nil).data().(map[string]any); lo["type"] != "loopback" || lo["method"] != "loopback" || lo["priority"] != float64(2) || lo["autostart"] != float64(1) {
		t.Errorf("lo: %v", lo)
	}
}

func TestShapesNetworkPortsAndIPv6Checks(t *testing.T) {
	_, info := startSim(t, Options{NoSSH: true})
	c := newClient(t, info, "")
	const n = "/nodes/z2g4a/network"
	c.ok("POST", n, vals("iface", "bond0", "type", "bond", "slaves", "bcm5720p0 bcm5720p1"))

	// The port error is filed under the request's parameter, not the
	// other interface's (bond0 calls them slaves).
	r := c.do("POST", n, vals("iface", "vmbr1", "type", "bridge", "bridge_ports", "bcm5720p1"))
	if r.status != 400 || r.errs()["bridge_ports"] != "bcm5720p1 is already used on interface 'bond0'." || len(r.errs()) != 1 {
		t.Errorf("duplicate port: %d %s", r.status, r.raw)
	}

	for _, tc := range []struct {
		p         []string
		key, want string
	}{
		{[]string{"address6", "2001:db8::1", "netmask6", "64"}, "address", "2001:db8::1 with type 'DOCUMENTATION', cannot be used as host IPv6 address."},
		{[]string{"cidr6", "ff02::1/64"}, "address", "ff02::1 with type 'MULTICAST', cannot be used as host IPv6 address."},
		{[]string{"cidr6", "::1/64"}, "address", "::1 with type 'LOOPBACK', cannot be used as host IPv6 address."},
		{[]string{"cidr6", "ffff:ffff::/32"}, "address", "ffff:ffff:: with type 'ANYCAST', cannot be used as host IPv6 address."},
		{[]string{"cidr6", "fd00::1/64", "address6", "fd00::2", "netmask6", "64"}, "address6", "address6 conflicts with cidr6"},
		{[]string{"cidr", "10.0.0.1/24", "address", "10.0.0.2", "netmask", "255.255.255.0"}, "address", "address conflicts with cidr"},
	} {
		p := vals(append([]string{"iface", "vmbr2", "type", "bridge"}, tc.p...)...)
		r := c.do("POST", n, p)
		if r.status != 400 || r.errs()[tc.key] != tc.want || len(r.errs()) != 1 {
			t.Errorf("%v: %d %s, want %s: %s", tc.p, r.status, r.raw, tc.key, tc.want)
		}
	}
	// Global, unique-local and link-local unicast are host addresses.
	for i, a := range []string{"2a01:4f8::10/64", "fd12:3456::1/48", "fe80::1/64"} {
		c.ok("POST", n, vals("iface", "vmbr"+string(rune('3'+i)), "type", "bridge", "cidr6", a))
	}
	// Update checks the address it is given.
	if r := c.do("PUT", n+"/vmbr3", vals("type", "bridge", "address6", "::", "netmask6", "64")); r.status != 400 || r.errs()["address"] != ":: with type 'UNSPECIFIED', cannot be used as host IPv6 address." {
		t.Errorf("update: %d %s", r.status, r.raw)
	}
}

// /cluster/resources has a row per storage and node where the storage is
// enabled; sizes only where the node could activate it.
func TestShapesClusterResourcesStorageRows(t *testing.T) {
	_, info := startSim(t, Options{NoSSH: true, ClusterName: "lab"})
	c := newClient(t, info, "")
	c.ok("POST", "/storage", vals("storage", "only-a", "type", "dir", "path", "/srv/a", "nodes", "z2g4a", "content", "iso,backup"))
	c.ok("POST", "/storage", vals("storage", "off", "type", "dir", "path", "/srv/off", "disable", "1"))

	rows := c.ok("GET", "/cluster/resources", vals("type", "storage")).data().([]any)
	byID := map[string]map[string]any{}
	for _, r := range rows {
		m := r.(map[string]any)
		byID[m["id"].(string)] = m
		if m["type"] != "storage" {
			t.Errorf("row type: %v", m)
		}
	}
	nodes := len(info.Nodes)
	// local and local-lvm on every node, only-a on one, off nowhere.
	if len(rows) != 2*nodes+1 {
		t.Fatalf("%d rows for %d nodes: %v", len(rows), nodes, rows)
	}
	lvm := byID["storage/z2g4b/local-lvm"]
	if lvm == nil || lvm["node"] != "z2g4b" || lvm["storage"] != "local-lvm" || lvm["plugintype"] != "lvmthin" ||
		lvm["status"] != "available" || lvm["shared"] != float64(0) || lvm["content"] != "images,rootdir" {
		t.Fatalf("local-lvm row: %v", lvm)
	}
	if d, ok := lvm["disk"].(float64); !ok || d <= 0 {
		t.Errorf("disk %#v", lvm["disk"])
	}
	if m, ok := lvm["maxdisk"].(float64); !ok || m <= lvm["disk"].(float64) {
		t.Errorf("maxdisk %#v", lvm["maxdisk"])
	}
	if a := byID["storage/z2g4a/only-a"]; a == nil || a["content"] != "backup,iso" {
		t.Errorf("only-a: %v", a)
	}
	if byID["storage/z2g4b/only-a"] != nil || byID["storage/z2g4a/off"] != nil {
		t.Errorf("rows for a node outside nodes or a disabled storage: %v", byID)
	}
	// The untyped listing: guests, nodes, storages, then the default
	// localnetwork zone of each node (a `network` row on PVE 9).
	all := c.ok("GET", "/cluster/resources", nil).data().([]any)
	var kinds []string
	for _, r := range all {
		k := r.(map[string]any)["type"].(string)
		if len(kinds) == 0 || kinds[len(kinds)-1] != k {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) != 3 || kinds[0] != "node" || kinds[1] != "storage" || kinds[2] != "network" || len(all) != 2*nodes+len(rows) {
		t.Errorf("untyped listing kinds %v, %d rows", kinds, len(all))
	}
	if last := all[len(all)-1].(map[string]any); last["network"] != "localnetwork" || last["network-type"] != "zone" || last["status"] != "ok" {
		t.Errorf("network row: %v", last)
	}
	if sdn := c.ok("GET", "/cluster/resources", vals("type", "sdn")).data().([]any); len(sdn) != 0 {
		t.Errorf("PVE 9 type=sdn: %v", sdn)
	}
}

func TestShapesClusterResourcesSDNRowsOn84(t *testing.T) {
	_, info := startSim(t, Options{NoSSH: true, PVERelease: "8.4"})
	c := newClient(t, info, "")
	sdn := c.ok("GET", "/cluster/resources", vals("type", "sdn")).data().([]any)
	if len(sdn) != 1 {
		t.Fatalf("type=sdn: %v", sdn)
	}
	if m := sdn[0].(map[string]any); m["id"] != "sdn/z2g4a/localnetwork" || m["sdn"] != "localnetwork" || m["node"] != "z2g4a" || m["status"] != "ok" {
		t.Errorf("sdn row: %v", m)
	}
}

func TestShapesVolumeInfo(t *testing.T) {
	_, info := startSim(t, Options{NoSSH: true, ClusterName: "lab"})
	c := newClient(t, info, "")
	c.ok("POST", "/storage", vals("storage", "imgdir", "type", "dir", "path", "/srv/img", "content", "images"))
	createRefVM(t, c, "scsi1", "imgdir:4")
	const base = "/nodes/z2g4a/storage/"

	got := c.ok("GET", base+"local-lvm/content/local-lvm:vm-100-disk-0", nil).data().(map[string]any)
	if got["path"] != "/dev/pve/vm-100-disk-0" || got["size"] != float64(32<<30) || got["used"] != float64(0) || got["format"] != "raw" || len(got) != 4 {
		t.Errorf("lvmthin volume: %v", got)
	}
	// A bare volume name takes the storage of the path.
	got = c.ok("GET", base+"imgdir/content/100%2Fvm-100-disk-0.qcow2", nil).data().(map[string]any)
	if got["path"] != "/srv/img/images/100/vm-100-disk-0.qcow2" || got["size"] != float64(4<<30) || got["format"] != "qcow2" {
		t.Errorf("dir volume: %v", got)
	}

	for _, tc := range []struct {
		path   string
		status int
		key    string
		want   string
	}{
		{"local-lvm/content/local-lvm:vm-100-disk-9", 500, "", "can't get size of '/dev/pve/vm-100-disk-9':   Failed to find logical volume \"pve/vm-100-disk-9\"\n"},
		{"imgdir/content/imgdir:100%2Fvm-100-disk-7.qcow2", 500, "", "volume_size_info on 'imgdir:100/vm-100-disk-7.qcow2' failed - no format\n"},
		{"local-lvm/content/local-lvm:disk-0", 500, "", "unable to parse lvm volume name 'disk-0'\n"},
		{"local-lvm/content/imgdir:100%2Fvm-100-disk-0.qcow2", 400, "volume", "storage ID mismatch (imgdir != local-lvm)\n"},
		{"nope/content/vm-100-disk-0", 500, "", "storage 'nope' does not exist\n"},
	} {
		r := c.do("GET", base+tc.path, nil)
		if r.status != tc.status || (tc.key == "" && r.msg() != tc.want) || (tc.key != "" && r.errs()[tc.key] != tc.want) {
			t.Errorf("%s: %d %s, want %q", tc.path, r.status, r.raw, tc.want)
		}
	}
}

// assert_joinable (pve-cluster PVE/Cluster/Setup.pm) collects its errors
// and dies with a summary: a node with guests may not join, unless forced.
func TestShapesJoinRefusedForNodeWithGuests(t *testing.T) {
	s, _ := startSim(t, Options{})
	labAddrs(s)
	a := createLab(t, s)
	s.CreateTestVM("z2g4b", 120, "guest")
	b := rootOn(t, s, "z2g4b")
	upid := b.ok("POST", "/cluster/config/join", joinParams(s, t, 1)).data().(string)
	exit, log := taskFails(t, b, "z2g4b", upid)
	if exit != "Check if node may join a cluster failed!" ||
		!strings.Contains(log, `"detected the following error(s):"},{"n":2,"t":"* this host already contains virtual guests"}`) {
		t.Fatalf("exit %q log %s", exit, log)
	}
	if n := a.ok("GET", "/cluster/config/nodes", nil).data().([]any); len(n) != 1 {
		t.Fatalf("cluster nodelist changed: %v", n)
	}
	// With force the check only warns.
	p := joinParams(s, t, 1)
	p.Set("force", "1")
	upid = b.ok("POST", "/cluster/config/join", p).data().(string)
	st := waitVia(t, a, "z2g4b", upid) // b's credentials change with the join
	if st["exitstatus"] != "WARNINGS: 3" {
		t.Fatalf("forced join: %v", st["exitstatus"])
	}
}

// storage.cfg values go through SectionConfig check_value (booleans and
// integers become numbers); datacenter.cfg through JSONSchema parse_config
// (only booleans are converted: integers stay the file's text).
func TestShapesConfigFileValues(t *testing.T) {
	_, info := startSim(t, Options{NoSSH: true})
	c := newClient(t, info, "")
	c.ok("POST", "/storage", vals("storage", "ext", "type", "rbd", "monhost", "10.0.0.1", "pool", "vms", "krbd", "1", "disable", "1", "content", "images"))
	c.ok("POST", "/storage", vals("storage", "bk", "type", "dir", "path", "/srv/bk", "content", "backup", "max-protected-backups", "5", "shared", "0"))
	for _, path := range []string{"/storage/ext", "/storage/bk"} {
		got := c.ok("GET", path, nil).data().(map[string]any)
		want := map[string]any{"krbd": float64(1), "disable": float64(1), "shared": float64(1), "content": "images"}
		if path == "/storage/bk" {
			want = map[string]any{"max-protected-backups": float64(5), "shared": float64(0), "content": "backup", "path": "/srv/bk"}
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s %s = %#v, want %#v", path, k, got[k], v)
			}
		}
	}
	c.ok("PUT", "/cluster/options", vals("max_workers", "4", "next-id", "lower=200,upper=300", "crs", "ha=static,ha-rebalance-on-start=1"))
	o := c.ok("GET", "/cluster/options", nil).data().(map[string]any)
	ni, _ := o["next-id"].(map[string]any)
	crs, _ := o["crs"].(map[string]any)
	if o["max_workers"] != "4" || ni["lower"] != "200" || ni["upper"] != "300" || crs["ha-rebalance-on-start"] != float64(1) || crs["ha"] != "static" {
		t.Errorf("options: max_workers %#v next-id %#v crs %#v", o["max_workers"], ni, crs)
	}
	if got := c.ok("GET", "/cluster/nextid", nil).data(); got != "200" {
		t.Errorf("nextid from next-id: %#v", got)
	}
}

// update_network derives families and methods from the request alone: an
// update that does not repeat address6 drops the inet6 stanza (and so the
// v6 address on re-read), one without address leaves the v4 address in a
// manual stanza.
func TestShapesNetworkUpdateFamiliesFromRequest(t *testing.T) {
	_, info := startSim(t, Options{NoSSH: true})
	c := newClient(t, info, "")
	const n = "/nodes/z2g4a/network"
	c.ok("POST", n, vals("iface", "vmbr1", "type", "bridge", "cidr", "10.1.0.1/24", "cidr6", "fd00::1/64"))
	c.ok("PUT", n+"/vmbr1", vals("type", "bridge", "cidr", "10.1.0.1/24", "cidr6", "fd00::1/64", "mtu", "1400"))
	br := c.ok("GET", n+"/vmbr1", nil).data().(map[string]any)
	if br["cidr6"] != "fd00::1/64" || br["method"] != "static" || br["method6"] != "static" {
		t.Fatalf("full update: %v", br)
	}
	c.ok("PUT", n+"/vmbr1", vals("type", "bridge", "mtu", "1500"))
	br = c.ok("GET", n+"/vmbr1", nil).data().(map[string]any)
	if f, _ := br["families"].([]any); len(f) != 1 || f[0] != "inet" {
		t.Errorf("families %v", br["families"])
	}
	if br["address6"] != nil || br["cidr6"] != nil || br["method6"] != "manual" {
		t.Errorf("v6 after a partial update: %v", br)
	}
	if br["cidr"] != "10.1.0.1/24" || br["method"] != "manual" {
		t.Errorf("v4 after a partial update: %v", br)
	}
	changes, _ := c.ok("GET", n, nil).env["changes"].(string)
	if !strings.Contains(changes, "+iface vmbr1 inet manual\n+\taddress 10.1.0.1/24\n") {
		t.Errorf("file: %q", changes)
	}
}

func TestShapesVolumePathsOfOtherPlugins(t *testing.T) {
	s, _ := startSim(t, Options{NoSSH: true})
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, tc := range []struct {
		e    *storageEntry
		want string
	}{
		{&storageEntry{ID: "tank", Type: "zfspool", Opts: map[string]string{"pool": "tank/vm"}}, "/dev/zvol/tank/vm/vm-100-disk-0"},
		{&storageEntry{ID: "nas", Type: "nfs", Opts: map[string]string{"path": "/mnt/pve/nas"}}, "/mnt/pve/nas/images/vm-100-disk-0"},
		{&storageEntry{ID: "ext", Type: "rbd", Opts: map[string]string{"monhost": "10.0.0.1 10.0.0.2", "pool": "vms"}},
			"rbd:vms/vm-100-disk-0:conf=/etc/pve/priv/ceph/ext.conf:mon_host=10.0.0.1;10.0.0.2:auth_supported=cephx:id=admin:keyring=/etc/pve/priv/ceph/ext.keyring"},
		{&storageEntry{ID: "ceph", Type: "rbd", Opts: map[string]string{"pool": "ceph"}}, "rbd:ceph/vm-100-disk-0:conf=/etc/pve/ceph.conf"},
	} {
		if got := s.volumePath("z2g4a", tc.e, "vm-100-disk-0"); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.e.ID, got, tc.want)
		}
	}
}
