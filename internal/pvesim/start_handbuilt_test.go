package pvesim

import (
	"fmt"
	"strings"
	"testing"
)

// referenceLabForTest is the shipped reference lab (examples/labs) to be
// hand-built.
func referenceLabForTest() *Lab {
	lab, err := ShippedLab("reference")
	if err != nil {
		panic(err)
	}
	lab.Start = StartHandBuilt
	return lab
}

// startHandBuiltForTest starts lab as Start does: the cluster state, then
// applyHandBuilt.
func startHandBuiltForTest(t *testing.T, lab *Lab) (*Sim, Info) {
	t.Helper()
	return startSim(t, Options{Lab: lab})
}

// startHandBuiltFrom starts the nodes of lab without the lab (opts, as a
// test default), makes them look fresh from the installer (vmbr0 with the
// management address on the management NIC) through the network API and
// builds the hand-built state on them: applyHandBuilt from fresh-install
// nodes and from other clusters than Start's.
func startHandBuiltFrom(t *testing.T, lab *Lab, opts Options) (*Sim, Info) {
	t.Helper()
	for _, n := range lab.Nodes {
		opts.Nodes = append(opts.Nodes, n.Name)
	}
	s, _ := startSim(t, opts)
	for _, n := range lab.Nodes {
		base := "/nodes/" + n.Name + "/network"
		if err := s.hbCall(n.Name, "POST", base, map[string]string{
			"iface": "vmbr0", "type": "bridge", "autostart": "1", "bridge_ports": n.Management.NIC,
			"cidr": n.Management.CIDR, "gateway": n.Management.Gateway,
		}); err != nil {
			t.Fatal(err)
		}
		if err := s.hbCall(n.Name, "PUT", base, nil); err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	err := s.applyHandBuilt(lab)
	s.mu.Unlock()
	if err != nil {
		t.Fatalf("applyHandBuilt: %v", err)
	}
	return s, s.Info()
}

func TestHandBuiltNetwork(t *testing.T) {
	_, info := startHandBuiltForTest(t, referenceLabForTest())
	c := newClient(t, info, info.Nodes[2].Endpoint)
	r := c.ok("GET", "/nodes/z2g4c/network", nil)
	if ch, ok := r.env["changes"]; ok {
		t.Errorf("changes staged after the reload: %v", ch)
	}
	list := r.data()
	if vmbr0 := findIface(list, "vmbr0"); vmbr0 != nil {
		t.Errorf("vmbr0 still there: %v", vmbr0)
	}
	want := map[string]map[string]any{
		"bond0": {"type": "bond", "slaves": "bcm5720p0 bcm5720p1", "bond_mode": "802.3ad", "autostart": float64(1), "active": float64(1)},
		"bridge0": {"type": "bridge", "bridge_ports": "bond0", "cidr": "172.27.2.12/24", "gateway": "172.27.2.254",
			"bridge_vlan_aware": float64(1), "bridge_vids": "2-4094", "bridge_stp": "off", "bridge_fd": "0", "active": float64(1)},
		"bridge0.60": {"type": "vlan", "cidr": "169.254.60.12/24", "vlan-id": "60", "vlan-raw-device": "bridge0", "active": float64(1)},
		"cx354ap1":   {"type": "eth", "cidr": "169.254.50.12/24", "mtu": "9000", "autostart": float64(1), "active": float64(1)},
		"bcm5720p0":  {"type": "eth", "autostart": float64(1), "active": float64(1)},
		"i219":       {"type": "eth", "method": "manual"},
		"cx354ap2":   {"type": "eth", "method": "manual"},
	}
	for name, props := range want {
		got := findIface(list, name)
		if got == nil {
			t.Errorf("%s missing from the network list", name)
			continue
		}
		for k, v := range props {
			if got[k] != v {
				t.Errorf("%s %s = %#v, want %#v", name, k, got[k], v)
			}
		}
	}
	for _, n := range []string{"i219", "cx354ap2"} {
		if got := findIface(list, n); got != nil && got["autostart"] != nil {
			t.Errorf("%s autostart = %v, want unset (the log has no auto %s)", n, got["autostart"], n)
		}
	}
}

func TestHandBuiltCluster(t *testing.T) {
	_, info := startHandBuiltForTest(t, referenceLabForTest())
	c := newClient(t, info, info.Nodes[1].Endpoint)
	var nodes, online int
	for _, e := range c.ok("GET", "/cluster/status", nil).data().([]any) {
		m := e.(map[string]any)
		switch m["type"] {
		case "cluster":
			if m["name"] != "z2g4" || m["quorate"] != float64(1) || m["nodes"] != float64(3) {
				t.Errorf("cluster entry %v, want z2g4 quorate with 3 nodes", m)
			}
		case "node":
			nodes++
			if m["online"] == float64(1) {
				online++
			}
		}
	}
	if nodes != 3 || online != 3 {
		t.Errorf("cluster status: %d nodes, %d online; want 3, 3", nodes, online)
	}
	for _, e := range c.ok("GET", "/cluster/config/nodes", nil).data().([]any) {
		m := e.(map[string]any)
		host := map[string]string{"z2g4a": "10", "z2g4b": "11", "z2g4c": "12"}[m["name"].(string)]
		if m["ring0_addr"] != "169.254.60."+host || m["ring1_addr"] != "169.254.50."+host {
			t.Errorf("corosync node %v: want ring0 169.254.60.%s, ring1 169.254.50.%s", m, host, host)
		}
	}
	opts := c.ok("GET", "/cluster/options", nil).data().(map[string]any)
	mig, _ := opts["migration"].(map[string]any)
	if mig["type"] != "secure" || mig["network"] != "169.254.50.0/24" {
		t.Errorf("migration = %v, want secure over 169.254.50.0/24", opts["migration"])
	}
	if ha, _ := opts["ha"].(map[string]any); ha["shutdown_policy"] != "migrate" {
		t.Errorf("ha = %v, want shutdown_policy migrate", opts["ha"])
	}
}

func TestHandBuiltRepositories(t *testing.T) {
	_, info := startHandBuiltForTest(t, referenceLabForTest())
	for _, n := range info.Nodes {
		c := newClient(t, info, n.Endpoint)
		got := map[string]any{}
		for _, e := range c.ok("GET", "/nodes/"+n.Name+"/apt/repositories", nil).data().(map[string]any)["standard-repos"].([]any) {
			m := e.(map[string]any)
			got[m["handle"].(string)] = m["status"]
		}
		want := map[string]any{
			"no-subscription": float64(1), "enterprise": float64(0),
			"ceph-squid-no-subscription": float64(1), "ceph-squid-enterprise": nil,
		}
		for h, st := range want {
			if got[h] != st {
				t.Errorf("%s: repository %s status %v, want %v", n.Name, h, got[h], st)
			}
		}
	}
}

func TestHandBuiltNodeBase(t *testing.T) {
	_, info := startHandBuiltForTest(t, referenceLabForTest())
	for _, n := range info.Nodes {
		tg := sshAs(t, info, n.Name, "root")
		if out := tg.ok("tuned-adm active"); out != "Current active profile: latency-performance\n" {
			t.Errorf("%s: tuned-adm active: %q", n.Name, out)
		}
		out := tg.ok("ethtool -g cx354ap1")
		_, cur, _ := strings.Cut(out, "Current hardware settings:")
		if !strings.Contains(cur, "RX:\t\t\t2048\n") || !strings.Contains(cur, "TX:\t\t\t2048\n") {
			t.Errorf("%s: ethtool -g cx354ap1:\n%s", n.Name, out)
		}
		for _, line := range []string{"systemctl is-active systemd-journal-upload", "systemctl is-enabled systemd-journal-upload"} {
			if out := tg.ok(line); out != "active\n" && out != "enabled\n" {
				t.Errorf("%s: %s: %q", n.Name, line, out)
			}
		}
		if out := tg.ok("cat /etc/systemd/system/systemd-journal-upload.service.d/override.conf"); out != "[Service]\nRestart=always\n" {
			t.Errorf("%s: drop-in %q", n.Name, out)
		}
		if out := tg.ok("cat /etc/systemd/system/pve-daily-update.timer.d/override.conf"); out != "[Timer]\nOnCalendar=\nOnCalendar=00/4:00\nRandomizedDelaySec=0\n" {
			t.Errorf("%s: pve-daily-update.timer drop-in %q", n.Name, out)
		}
		if out := tg.ok("systemctl is-active pve-daily-update.timer"); out != "active\n" {
			t.Errorf("%s: pve-daily-update.timer %q after the drop-in", n.Name, out)
		}
		if out := tg.ok("cat /etc/systemd/journal-upload.conf"); !strings.Contains(out, "URL = https://logs.lab.example:19532/insert/journald\n") {
			t.Errorf("%s: journal-upload.conf %q", n.Name, out)
		}
		ca := tg.ok("cat /usr/local/share/ca-certificates/root-ca-a.crt")
		if linked := tg.ok("cat /etc/ssl/certs/root-ca-a.pem"); linked != ca || !oneCertificate([]byte(ca)) {
			t.Errorf("%s: root CA not trusted by update-ca-certificates", n.Name)
		}
		// Rings were set by hand: no unit keeps them.
		if _, _, code := tg.run("systemctl is-enabled pve-nic-ring-cx354ap1.service", nil); code == 0 {
			t.Errorf("%s: a ring unit exists; the log set the rings by hand", n.Name)
		}
	}
}

func TestHandBuiltCeph(t *testing.T) {
	_, info := startHandBuiltForTest(t, referenceLabForTest())
	c := newClient(t, info, "")
	st := c.ok("GET", "/nodes/z2g4a/ceph/status", nil).data().(map[string]any)
	if h := st["health"].(map[string]any); h["status"] != "HEALTH_OK" {
		t.Errorf("health %v, want HEALTH_OK", h)
	}
	osdmap := st["osdmap"].(map[string]any)
	if osdmap["num_osds"] != float64(6) || osdmap["num_up_osds"] != float64(6) || osdmap["num_in_osds"] != float64(6) {
		t.Errorf("osdmap %v, want 6 OSDs up and in", osdmap)
	}
	if q := st["quorum_names"].([]any); len(q) != 3 {
		t.Errorf("quorum %v, want the three monitors", q)
	}
	for _, n := range info.Nodes {
		mgrs := c.ok("GET", "/nodes/"+n.Name+"/ceph/mgr", nil).data().([]any)
		found := false
		for _, m := range mgrs {
			found = found || m.(map[string]any)["name"] == n.Name
		}
		if !found {
			t.Errorf("no manager on %s: %v", n.Name, mgrs)
		}
	}
	// The OSDs are the datacenter SSDs, never the QLC NVMe.
	for _, n := range info.Nodes {
		for _, d := range c.ok("GET", "/nodes/"+n.Name+"/disks/list", nil).data().([]any) {
			m := d.(map[string]any)
			osd := m["osdid"] != nil && m["osdid"] != float64(-1) && m["osdid"] != "-1"
			if want := m["devpath"] == "/dev/sdb" || m["devpath"] == "/dev/sdc"; osd != want {
				t.Errorf("%s %v: osdid %v", n.Name, m["devpath"], m["osdid"])
			}
		}
	}
	pool := c.ok("GET", "/nodes/z2g4a/ceph/pool/ceph/status", vals("verbose", "1")).data().(map[string]any)
	if pool["size"] != float64(3) || pool["min_size"] != float64(2) || fmt.Sprint(pool["application_list"]) != "[rbd]" || pool["crush_rule"] != "replicated_rule" {
		t.Errorf("pool ceph: size %v min_size %v applications %v crush rule %v", pool["size"], pool["min_size"], pool["application_list"], pool["crush_rule"])
	}
	var rbd map[string]any
	for _, e := range c.ok("GET", "/storage", nil).data().([]any) {
		if m := e.(map[string]any); m["storage"] == "ceph" {
			rbd = m
		}
	}
	if rbd == nil || rbd["type"] != "rbd" || rbd["pool"] != "ceph" {
		t.Errorf("storage ceph = %v, want rbd on pool ceph", rbd)
	}

	tg := sshAs(t, info, "z2g4b", "root")
	conf := tg.ok("cat /etc/pve/ceph.conf")
	for _, want := range []string{"\trbd_cache = true\n", "\trbd_cache_writethrough_until_flush = true\n",
		"# 8 GiB per OSD", "[osd]\n\tosd_memory_target = 8589934592\n\tbdev_enable_discard = true\n"} {
		if !strings.Contains(conf, want) {
			t.Errorf("ceph.conf lacks %q:\n%s", want, conf)
		}
	}
	db := c.ok("GET", "/nodes/z2g4a/ceph/cfg/db", nil).data().([]any)
	found := false
	for _, e := range db {
		m := e.(map[string]any)
		found = found || (m["section"] == "osd" && m["name"] == "osd_max_backfills" && m["value"] == "2")
	}
	if !found {
		t.Errorf("config db lacks osd/osd_max_backfills=2: %v", db)
	}
	if strings.Contains(conf, "osd_max_backfills") {
		t.Errorf("osd_max_backfills is in ceph.conf; it should be in the config database only")
	}
	// Restarted after the edit: every OSD runs with the file's value.
	for i := 0; i < 6; i++ {
		if out := tg.ok(fmt.Sprintf("ceph config show osd.%d osd_memory_target", i)); strings.TrimSpace(out) != "8589934592" {
			t.Errorf("osd.%d runs with osd_memory_target %q, want 8589934592 (restarted after the edit)", i, out)
		}
	}
}

func TestHandBuiltGuests(t *testing.T) {
	_, info := startHandBuiltForTest(t, referenceLabForTest())
	c := newClient(t, info, "")
	cfg := c.ok("GET", "/nodes/z2g4a/qemu/100/config", nil).data().(map[string]any)
	want := map[string]any{
		"agent": "1", "bios": "ovmf", "cores": float64(4), "cpu": "host", "memory": "8192", "numa": float64(0),
		"ostype": "l26", "sockets": float64(1), "scsihw": "virtio-scsi-single",
		"scsi0":   "ceph:vm-100-disk-1,cache=writeback,discard=on,iothread=1,size=32G,ssd=1",
		"unused0": "ceph:vm-100-disk-0", "boot": "order=scsi0",
	}
	for k, v := range want {
		if cfg[k] != v {
			t.Errorf("VM 100 %s = %#v, want %#v", k, cfg[k], v)
		}
	}
	if st := c.ok("GET", "/nodes/z2g4a/qemu/100/status/current", nil).data().(map[string]any); st["status"] != "running" {
		t.Errorf("VM 100 %v, want running", st["status"])
	}
	if st := c.ok("GET", "/nodes/z2g4b/qemu/101/status/current", nil).data().(map[string]any); st["status"] != "stopped" || st["ha"].(map[string]any)["managed"] != float64(0) {
		t.Errorf("VM 101 status %v ha %v, want stopped, not HA-managed", st["status"], st["ha"])
	}
	checkHandBuiltHA(t, c)
	if rules := c.ok("GET", "/cluster/ha/rules", nil).data().([]any); len(rules) != 0 {
		t.Errorf("HA rules %v, want none (VM 100 may run anywhere)", rules)
	}
}

// checkHandBuiltHA: VM 100, and only it, is an HA resource, started,
// without a group, and HA-managed; no rule binds it.
func checkHandBuiltHA(t *testing.T, c *client) {
	t.Helper()
	res := c.ok("GET", "/cluster/ha/resources", nil).data().([]any)
	if len(res) != 1 {
		t.Fatalf("HA resources %v, want vm:100 only", res)
	}
	if r := res[0].(map[string]any); r["sid"] != "vm:100" || r["state"] != "started" || r["group"] != nil {
		t.Errorf("HA resource %v, want vm:100 started without a group", r)
	}
	if st := c.ok("GET", "/nodes/z2g4a/qemu/100/status/current", nil).data().(map[string]any); st["status"] != "running" || st["ha"].(map[string]any)["managed"] != float64(1) {
		t.Errorf("VM 100 status %v ha %v, want running, HA-managed", st["status"], st["ha"])
	}
}

func TestHandBuiltRefusesLabsItCannotBuild(t *testing.T) {
	cases := []struct {
		name string
		edit func(l *Lab)
		want string
	}{
		{"two nodes", func(l *Lab) { l.Nodes = l.Nodes[:2] }, "needs at least 3 nodes"},
		{"two OSD hosts", func(l *Lab) { l.Nodes[1].Disks = l.Nodes[1].Disks[:1] }, "needs three nodes with such disks; the lab has 2 (none on z2g4b)"},
		{"management NIC only", func(l *Lab) {
			l.Nodes[0].Management.NIC = "i219"
			l.Nodes[0].NICs = []LabNIC{{Name: "i219"}}
		}, "needs a storage NIC besides the management NIC i219"},
		{"no gateway", func(l *Lab) { l.Nodes[2].Management.Gateway = "" }, "node z2g4c: the hand-built state needs a management gateway"},
		{"same host part", func(l *Lab) { l.Nodes[1].Management.CIDR = "10.0.0.10/24" }, "ends in 10 like node z2g4a's"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lab := referenceLabForTest()
			tc.edit(lab)
			_, err := hbPlan(lab)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("hbPlan: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// Labs without the reference NIC names: the storage NIC is the fastest
// NIC besides the management NIC, bond0 the first two others.
func TestHandBuiltPlanDerivesNICs(t *testing.T) {
	lab := referenceLabForTest()
	for i := range lab.Nodes {
		n := &lab.Nodes[i]
		n.Management.NIC = "eno1"
		n.NICs = []LabNIC{{Name: "eno1", SpeedMbps: 1000}, {Name: "ens1f0", SpeedMbps: 10000}, {Name: "eno2", SpeedMbps: 1000}, {Name: "ens1f1", SpeedMbps: 10000}}
	}
	plan, err := hbPlan(lab)
	if err != nil {
		t.Fatal(err)
	}
	if p := plan[0]; p.storageNIC != "ens1f0" || strings.Join(p.bond, "+") != "eno1+eno2" {
		t.Errorf("storage %s bond %v, want ens1f0 and eno1+eno2", p.storageNIC, p.bond)
	}
}

// From fresh-install nodes (no cluster yet) the first node creates the
// cluster with the log's links and the others join it.
func TestHandBuiltFromFreshInstall(t *testing.T) {
	_, info := startHandBuiltFrom(t, referenceLabForTest(), Options{CephNotInstalled: true})
	c := newClient(t, info, "")
	cfg := c.ok("GET", "/cluster/config/totem", nil).data().(map[string]any)
	if cfg["cluster_name"] != "z2g4" || fmt.Sprint(cfg["interface"]) != "map[0:map[linknumber:0] 1:map[linknumber:1]]" {
		t.Errorf("totem %v, want cluster z2g4 with links 0 and 1", cfg)
	}
	for _, e := range c.ok("GET", "/cluster/config/nodes", nil).data().([]any) {
		m := e.(map[string]any)
		if !strings.HasPrefix(m["ring0_addr"].(string), "169.254.60.") || !strings.HasPrefix(m["ring1_addr"].(string), "169.254.50.") {
			t.Errorf("corosync node %v: want ring0 on 169.254.60.0/24, ring1 on 169.254.50.0/24", m)
		}
	}
	st := c.ok("GET", "/nodes/z2g4a/ceph/status", nil).data().(map[string]any)
	if h := st["health"].(map[string]any); h["status"] != "HEALTH_OK" {
		t.Errorf("health %v, want HEALTH_OK", h)
	}
}

// A node without power-loss-protected data disks (diskless) joins the
// cluster and gets a monitor, but no OSDs.
func TestHandBuiltDisklessNode(t *testing.T) {
	lab := referenceLabForTest()
	d := lab.Nodes[0]
	d.Name, d.Management.CIDR = "z2g4d", "172.27.2.13/24"
	d.Disks = []LabDisk{d.Disks[0]}
	d.Disks[0].Serial, d.Disks[0].WWN = "BTWL4711D4120LGN", "0x55cd2e414d0001d4"
	d.NICs = append([]LabNIC(nil), d.NICs...)
	for i := range d.NICs {
		d.NICs[i].MAC = fmt.Sprintf("02:00:00:00:0d:%02x", i)
	}
	lab.Nodes = append(lab.Nodes, d)
	_, info := startHandBuiltForTest(t, lab)
	c := newClient(t, info, "")
	st := c.ok("GET", "/nodes/z2g4d/ceph/status", nil).data().(map[string]any)
	if h := st["health"].(map[string]any); h["status"] != "HEALTH_OK" {
		t.Errorf("health %v, want HEALTH_OK", h)
	}
	if osdmap := st["osdmap"].(map[string]any); osdmap["num_osds"] != float64(6) {
		t.Errorf("osdmap %v, want the 6 OSDs of the three nodes with disks", osdmap)
	}
	if q := st["quorum_names"].([]any); len(q) != 4 {
		t.Errorf("quorum %v, want four monitors", q)
	}
	if m := findIface(c.ok("GET", "/nodes/z2g4d/network", nil).data(), "bridge0.60"); m == nil || m["cidr"] != "169.254.60.13/24" {
		t.Errorf("z2g4d bridge0.60 = %v", m)
	}
}

// The rolling restart of the build is not in the test history: a client
// under test starts with none.
func TestHandBuiltCephHistoryStartsEmpty(t *testing.T) {
	s, _ := startHandBuiltForTest(t, referenceLabForTest())
	if n := s.CephMaxHostsDownAtOnce(); n != 0 {
		t.Errorf("CephMaxHostsDownAtOnce = %d, want 0", n)
	}
	if h := s.CephDownWithoutNoout(); len(h) != 0 {
		t.Errorf("CephDownWithoutNoout = %v, want none", h)
	}
	if h := s.CephDownHistory(); len(h) != 0 {
		t.Errorf("CephDownHistory = %v, want none", h)
	}
	if v := s.CephMinSizeViolations(); len(v) != 0 {
		t.Errorf("CephMinSizeViolations = %v", v)
	}
}

// The build is no client's traffic: the request and SSH logs and the
// task peaks start empty, so an adoption can be shown to write nothing.
func TestHandBuiltLeavesNoClientTraces(t *testing.T) {
	s, _ := startHandBuiltForTest(t, referenceLabForTest())
	if r := s.Requests(); len(r) != 0 {
		t.Errorf("request log has %d entries after the build, first %+v", len(r), r[0])
	}
	if c := s.SSHCommands(); len(c) != 0 {
		t.Errorf("SSH log has %d entries after the build, first %+v", len(c), c[0])
	}
	if p := s.PeakConcurrentTasks("z2g4a", "cephcreateosd"); p != 0 {
		t.Errorf("peak cephcreateosd tasks %d, want 0", p)
	}
}

// On PVE 8.4 (bookworm, one-line .list files) the same log holds.
func TestHandBuiltOnPVE84(t *testing.T) {
	lab := referenceLabForTest()
	lab.PVERelease = "8.4"
	_, info := startHandBuiltForTest(t, lab)
	c := newClient(t, info, "")
	got := map[string]any{}
	for _, e := range c.ok("GET", "/nodes/z2g4a/apt/repositories", nil).data().(map[string]any)["standard-repos"].([]any) {
		m := e.(map[string]any)
		got[m["handle"].(string)] = m["status"]
	}
	if got["no-subscription"] != float64(1) || got["enterprise"] != float64(0) || got["ceph-squid-no-subscription"] != float64(1) {
		t.Errorf("8.4 repositories %v", got)
	}
	st := c.ok("GET", "/nodes/z2g4a/ceph/status", nil).data().(map[string]any)
	if h := st["health"].(map[string]any); h["status"] != "HEALTH_OK" {
		t.Errorf("health %v, want HEALTH_OK", h)
	}
	cfg := c.ok("GET", "/nodes/z2g4a/qemu/100/config", nil).data().(map[string]any)
	if cfg["scsi0"] != "ceph:vm-100-disk-1,cache=writeback,discard=on,iothread=1,size=32G,ssd=1" {
		t.Errorf("8.4 VM 100 scsi0 %v", cfg["scsi0"])
	}
	checkHandBuiltHA(t, c)
}

// Every shipped lab can be hand-built: the consumer lab by its data disks
// without PLP, the diskless lab without bonds.
func TestHandBuiltPlanOfShippedLabs(t *testing.T) {
	want := map[string]string{
		"reference": "",
		"consumer":  "",
		"diskless":  "",
	}
	for _, name := range ShippedLabNames() {
		lab, err := ShippedLab(name)
		if err != nil {
			t.Fatal(err)
		}
		_, err = hbPlan(lab)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if w, ok := want[name]; !ok {
			t.Errorf("lab %s: no expectation; hbPlan says %q", name, got)
		} else if got != w {
			t.Errorf("lab %s: hbPlan error\n got %q\nwant %q", name, got, w)
		}
	}
}

// The hand-built state survives a restart from its saved state, which
// wins over the lab (no second build).
func TestHandBuiltPersists(t *testing.T) {
	path := t.TempDir() + "/state.json"
	s, err := Start(Options{Lab: referenceLabForTest(), StatePath: path})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	_, info := startSim(t, Options{Lab: referenceLabForTest(), StatePath: path})
	c := newClient(t, info, "")
	cfg := c.ok("GET", "/nodes/z2g4a/qemu/100/config", nil).data().(map[string]any)
	if cfg["unused0"] != "ceph:vm-100-disk-0" {
		t.Errorf("VM 100 after restart %v", cfg)
	}
	st := c.ok("GET", "/nodes/z2g4a/ceph/status", nil).data().(map[string]any)
	if n := st["osdmap"].(map[string]any)["num_osds"]; n != float64(6) {
		t.Errorf("num_osds %v after restart, want 6 (no second build)", n)
	}
	tg := sshAs(t, info, "z2g4c", "root")
	if conf := tg.ok("cat /etc/pve/ceph.conf"); !strings.Contains(conf, "# 8 GiB per OSD") {
		t.Errorf("ceph.conf after restart lost the hand comment:\n%s", conf)
	}
}
