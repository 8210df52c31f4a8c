package pvesim

import (
	"regexp"
	"strings"
	"testing"
)

func TestNetworkStagingApplyRevert(t *testing.T) {
	_, info := startSim(t, Options{TaskDuration: 30 * 1e6})
	c := newClient(t, info, "")
	const n = "/nodes/z2g4a/network"

	r := c.ok("GET", n, nil)
	if _, ok := r.env["changes"]; ok {
		t.Fatal("fresh node has changes")
	}
	for _, nic := range physicalNICs {
		m := findIface(r.data(), nic)
		if m == nil || m["type"] != "eth" || m["exists"] != float64(1) || m["method"] != "manual" || m["autostart"] != nil {
			t.Fatalf("nic %s: %v", nic, m)
		}
	}
	if findIface(r.data(), "lo") != nil {
		t.Fatal("lo listed")
	}

	r = c.ok("POST", n, vals("iface", "vmbr1", "type", "bridge", "autostart", "1", "comments", "test"))
	if string(r.raw) != `{"data":null}` {
		t.Fatalf("create returned %s", r.raw)
	}
	r = c.ok("GET", n, nil)
	m := findIface(r.data(), "vmbr1")
	if m == nil || m["comments"] != "test\n" || m["active"] != nil {
		t.Fatalf("staged iface: %v", m)
	}
	changes, _ := r.env["changes"].(string)
	if !strings.Contains(changes, "--- /etc/network/interfaces\n+++ /etc/network/interfaces.new\n") ||
		!strings.Contains(changes, "+auto vmbr1\n") || !strings.Contains(changes, "+iface vmbr1 inet manual\n") {
		t.Fatalf("changes: %q", changes)
	}

	// Revert drops the staged file.
	c.ok("DELETE", n, nil)
	r = c.ok("GET", n, nil)
	if findIface(r.data(), "vmbr1") != nil || r.env["changes"] != nil {
		t.Fatalf("after revert: %s", r.raw)
	}

	// Stage again and apply.
	c.ok("POST", n, vals("iface", "vmbr1", "type", "bridge", "autostart", "1"))
	r = c.ok("PUT", n, nil)
	upid, _ := r.data().(string)
	if !upidRE.MatchString(upid) || !strings.Contains(upid, ":srvreload:networking:root@pam!terraform:") {
		t.Fatalf("apply returned %q", upid)
	}
	st := c.ok("GET", "/nodes/z2g4a/tasks/"+upid+"/status", nil).data().(map[string]any)
	if st["status"] != "running" || st["exitstatus"] != nil || st["endtime"] != nil {
		t.Fatalf("fresh task status %v", st)
	}
	st = c.waitTask("z2g4a", upid)
	if st["exitstatus"] != "OK" || st["user"] != "root@pam" || st["tokenid"] != "terraform" || st["type"] != "srvreload" {
		t.Fatalf("task: %v", st)
	}
	r = c.ok("GET", n, nil)
	if r.env["changes"] != nil {
		t.Fatalf("changes after apply: %v", r.env["changes"])
	}
	if m := findIface(r.data(), "vmbr1"); m == nil || m["active"] != float64(1) {
		t.Fatalf("applied vmbr1: %v", m)
	}
	lg := c.ok("GET", "/nodes/z2g4a/tasks/"+upid+"/log", nil)
	lines := lg.data().([]any)
	if last := lines[len(lines)-1].(map[string]any); last["t"] != "TASK OK" || lg.env["total"] == nil {
		t.Fatalf("log: %s", lg.raw)
	}
	tl := c.ok("GET", "/nodes/z2g4a/tasks", nil)
	if tl.env["total"] != float64(1) {
		t.Fatalf("task list: %s", tl.raw)
	}
	// Task status errors.
	if r := c.do("GET", "/nodes/z2g4a/tasks/UPID:bogus/status", nil); r.status != 400 || r.errs()["upid"] != "unable to parse worker upid" {
		t.Fatalf("malformed upid: %s", r.raw)
	}
	other := strings.Replace(upid, ":srvreload:", ":qmstart:", 1)
	if r := c.do("GET", "/nodes/z2g4a/tasks/"+other+"/status", nil); r.status != 400 || r.errs()["upid"] != "no such task" {
		t.Fatalf("unknown upid: %s", r.raw)
	}
}

func TestNetworkValidation(t *testing.T) {
	_, info := startSim(t, Options{TaskDuration: -1})
	c := newClient(t, info, "")
	const n = "/nodes/z2g4a/network"
	expect400 := func(params []string, key, msg string) {
		t.Helper()
		r := c.do("POST", n, vals(params...))
		if r.status != 400 || r.errs()[key] != msg {
			t.Fatalf("%v: got %d %s", params, r.status, r.raw)
		}
	}
	expect500 := func(method, path string, params []string, msg string) {
		t.Helper()
		r := c.do(method, path, vals(params...))
		if r.status != 500 || r.msg() != msg+"\n" || r.reason != msg {
			t.Fatalf("%v: got %d %q %s", params, r.status, r.reason, r.raw)
		}
	}

	c.ok("POST", n, vals("iface", "vmbr0", "type", "bridge", "cidr", "10.0.0.2/24", "gateway", "10.0.0.1"))
	expect400([]string{"iface", "vmbr0", "type", "bridge"}, "iface", "interface already exists")
	expect400([]string{"iface", "vmbr1", "type", "bridge", "cidr", "10.0.1.2/24", "gateway", "10.0.1.1"}, "gateway", "Default gateway already exists on interface 'vmbr0'.")
	expect400([]string{"iface", "vmbr1", "type", "bridge", "cidr", "10.0.1.2/24", "address", "10.0.1.3", "netmask", "255.255.255.0"}, "address", "address conflicts with cidr")
	expect400([]string{"iface", "vmbr1", "type", "bridge", "bridge_vlan_aware", "1", "bridge_vids", ","}, "bridge_vids", "VLAN list items are empty")
	if r := c.do("PUT", n+"/nope", vals("type", "bridge")); r.status != 400 || r.errs()["iface"] != "interface does not exist" {
		t.Fatalf("update missing: %s", r.raw)
	}
	if r := c.do("PUT", n+"/vmbr0", vals("mtu", "9000")); r.status != 400 || r.errs()["type"] != "property is missing and it is not optional" {
		t.Fatalf("update without type: %s", r.raw)
	}

	c.ok("POST", n, vals("iface", "bond0", "type", "bond", "slaves", "bcm5720p0,bcm5720p1", "bond_mode", "active-backup", "bond-primary", "bcm5720p0"))
	expect400([]string{"iface", "bond1", "type", "bond", "slaves", "bcm5720p1 i219"}, "slaves", "bcm5720p1 is already used on interface 'bond0'.")
	expect500("POST", n, []string{"iface", "bond1", "type", "bond", "slaves", "eno9"}, "bond 'bond1' - unable to find slave 'eno9'")
	expect500("POST", n, []string{"iface", "bond1", "type", "bond", "slaves", "vmbr0"}, "bond 'bond1' - wrong interface type on slave 'vmbr0' ('bridge' != 'eth or bond')")
	expect500("POST", n, []string{"iface", "bond1", "type", "bond", "slaves", "i219", "bond_mode", "active-backup", "bond-primary", "cx354ap1"}, "bond 'bond1' - bond-primary interface is not a slave")
	expect500("POST", n, []string{"iface", "nope.5", "type", "vlan"}, "vlan 'nope.5' - unable to find parent 'nope'")
	expect500("POST", n, []string{"iface", "myvlan", "type", "vlan"}, "missing vlan-raw-device option")
	expect500("POST", n, []string{"iface", "vmbr0.10", "type", "vlan", "mtu", "9000"}, "interface 'vmbr0' - mtu 1500 is lower than 'vmbr0.10' - mtu 9000")
	expect500("POST", n, []string{"iface", "vmbr2", "type", "bridge", "bridge_ports", "eno9"}, "bridge 'vmbr2' - unable to find bridge port 'eno9'")
	c.ok("PUT", n+"/cx354ap1", vals("type", "eth", "cidr", "10.9.9.9/24"))
	expect500("POST", n, []string{"iface", "vmbr2", "type", "bridge", "bridge_ports", "cx354ap1"}, "iface cx354ap1 - ip address can't be set on interface if bridged in vmbr2")

	// A failed write leaves the staged config unchanged.
	before := c.ok("GET", n, nil).env["changes"]
	expect500("POST", n, []string{"iface", "vmbr3", "type", "bridge", "bridge_ports", "eno9"}, "bridge 'vmbr3' - unable to find bridge port 'eno9'")
	if after := c.ok("GET", n, nil).env["changes"]; after != before {
		t.Fatal("failed write changed the staged config")
	}

	// The writer checks the whole result: deleting a bond that is still a
	// bridge port fails with the bridge error.
	c.ok("POST", n, vals("iface", "vmbr4", "type", "bridge", "bridge_ports", "bond0"))
	expect500("DELETE", n+"/bond0", nil, "bridge 'vmbr4' - unable to find bridge port 'bond0'")

	// bridge_vlan_aware=0 keeps the flag until deleted.
	c.ok("PUT", n+"/vmbr0", vals("type", "bridge", "bridge_vlan_aware", "0"))
	m := c.ok("GET", n+"/vmbr0", nil).data().(map[string]any)
	if m["bridge_vlan_aware"] != float64(1) || m["bridge_vids"] != "2-4094" {
		t.Fatalf("vlan aware 0: %v", m)
	}
	c.ok("PUT", n+"/vmbr0", vals("type", "bridge", "delete", "bridge_vlan_aware,cidr"))
	m = c.ok("GET", n+"/vmbr0", nil).data().(map[string]any)
	if m["bridge_vlan_aware"] != nil || m["address"] != nil || m["method"] != "manual" || m["gateway"] != "10.0.0.1" {
		t.Fatalf("after delete: %v", m)
	}

	// Deleting a physical NIC removes its stanza, but it is still listed.
	c.ok("DELETE", n+"/i219", nil)
	r := c.ok("GET", n, nil)
	if m := findIface(r.data(), "i219"); m == nil || m["exists"] != float64(1) || m["type"] != "eth" {
		t.Fatalf("deleted nic: %v", m)
	}
	if !strings.Contains(r.env["changes"].(string), "-iface i219 inet manual\n") {
		t.Fatalf("changes: %s", r.env["changes"])
	}
}

func TestReferenceLabNetwork(t *testing.T) {
	_, info := startSim(t, Options{TaskDuration: -1})
	c := newClient(t, info, "")
	const n = "/nodes/z2g4a/network"
	c.ok("POST", n, vals("iface", "bond0", "type", "bond", "slaves", "bcm5720p0 bcm5720p1", "bond_mode", "802.3ad", "autostart", "1"))
	c.ok("POST", n, vals("iface", "bridge0", "type", "bridge", "bridge_ports", "bond0", "bridge_vlan_aware", "1",
		"cidr", "172.27.2.10/24", "gateway", "172.27.2.254", "autostart", "1"))
	c.ok("POST", n, vals("iface", "bridge0.60", "type", "vlan", "cidr", "169.254.60.10/24", "autostart", "1"))
	c.ok("PUT", n+"/cx354ap1", vals("type", "eth", "cidr", "169.254.50.10/24", "mtu", "9000", "autostart", "1"))
	upid := c.ok("PUT", n, nil).data().(string)
	if st := c.waitTask("z2g4a", upid); st["exitstatus"] != "OK" {
		t.Fatalf("apply: %v", st)
	}
	r := c.ok("GET", n, nil)
	if r.env["changes"] != nil {
		t.Fatal("changes after apply")
	}
	want := map[string]map[string]any{
		"bond0": {"type": "bond", "slaves": "bcm5720p0 bcm5720p1", "bond_mode": "802.3ad", "bond_miimon": "100",
			"autostart": float64(1), "active": float64(1), "method": "manual"},
		"bridge0": {"type": "bridge", "bridge_ports": "bond0", "bridge_vlan_aware": float64(1), "bridge_vids": "2-4094",
			"bridge_stp": "off", "bridge_fd": "0", "address": "172.27.2.10", "netmask": "24", "cidr": "172.27.2.10/24",
			"gateway": "172.27.2.254", "method": "static", "autostart": float64(1), "active": float64(1)},
		"bridge0.60": {"type": "vlan", "vlan-id": "60", "vlan-raw-device": "bridge0", "address": "169.254.60.10",
			"netmask": "24", "method": "static", "active": float64(1)},
		"cx354ap1":  {"type": "eth", "mtu": "9000", "address": "169.254.50.10", "cidr": "169.254.50.10/24", "exists": float64(1), "active": float64(1)},
		"bcm5720p0": {"type": "eth", "autostart": float64(1), "exists": float64(1), "active": float64(1)},
		"i219":      {"type": "eth", "exists": float64(1), "method": "manual"},
	}
	for name, fields := range want {
		m := findIface(r.data(), name)
		if m == nil {
			t.Fatalf("%s missing", name)
		}
		for k, v := range fields {
			if m[k] != v {
				t.Errorf("%s.%s = %#v, want %#v", name, k, m[k], v)
			}
		}
	}
	if m := findIface(r.data(), "i219"); m["autostart"] != nil || m["active"] != nil {
		t.Errorf("i219 should be neither auto nor active: %v", m)
	}
	fam := findIface(r.data(), "bridge0")["families"].([]any)
	if len(fam) != 1 || fam[0] != "inet" {
		t.Errorf("families %v", fam)
	}

	s := c.ok("GET", n+"/bridge0", nil)
	if s.data().(map[string]any)["gateway"] != "172.27.2.254" {
		t.Fatalf("single get: %s", s.raw)
	}
}

func TestRenderReferenceFile(t *testing.T) {
	cfg := defaultNetConfig()
	vlanAware := 1
	cfg.Ifaces["bond0"] = &netIface{Name: "bond0", Type: "bond", Autostart: true, Slaves: "bcm5720p0 bcm5720p1", BondMode: "802.3ad", BondXmitHashPolicy: "layer3+4"}
	cfg.Ifaces["bridge0"] = &netIface{Name: "bridge0", Type: "bridge", Autostart: true, Address: "172.27.2.12", Netmask: "24", Gateway: "172.27.2.254", BridgePorts: "bond0", BridgeVlanAware: &vlanAware}
	cfg.Ifaces["bridge0.60"] = &netIface{Name: "bridge0.60", Type: "vlan", Autostart: true, Address: "169.254.60.12", Netmask: "24"}
	cfg.Ifaces["cx354ap1"] = &netIface{Name: "cx354ap1", Type: "eth", Autostart: true, Address: "169.254.50.12", Netmask: "24", MTU: 9000}
	if err := cfg.writerCheck(); err != nil {
		t.Fatal(err)
	}
	got := cfg.render()
	want := strings.Join([]string{
		"auto lo", "iface lo inet loopback", "",
		"auto bcm5720p0", "iface bcm5720p0 inet manual", "",
		"auto bcm5720p1", "iface bcm5720p1 inet manual", "",
		"iface i219 inet manual", "",
		"auto cx354ap1", "iface cx354ap1 inet static", "\taddress 169.254.50.12/24", "\tmtu 9000", "",
		"auto bond0", "iface bond0 inet manual", "\tbond-slaves bcm5720p0 bcm5720p1", "\tbond-miimon 100", "\tbond-mode 802.3ad", "\tbond-xmit-hash-policy layer3+4", "",
		"auto bridge0", "iface bridge0 inet static", "\taddress 172.27.2.12/24", "\tgateway 172.27.2.254", "\tbridge-ports bond0", "\tbridge-stp off", "\tbridge-fd 0", "\tbridge-vlan-aware yes", "\tbridge-vids 2-4094", "",
		"auto bridge0.60", "iface bridge0.60 inet static", "\taddress 169.254.60.12/24", "", "",
	}, "\n")
	if got != want {
		t.Fatalf("render:\n%s\nwant:\n%s", got, want)
	}
}

func TestUnifiedDiff(t *testing.T) {
	a := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"
	b := "1\n2\n3\n4\nX\n6\n7\n8\n9\n10\n11\n"
	d := unifiedDiff("a", "b", a, b)
	want := "--- a\n+++ b\n@@ -2,9 +2,10 @@\n 2\n 3\n 4\n-5\n+X\n 6\n 7\n 8\n 9\n 10\n+11\n"
	if d != want {
		t.Fatalf("diff:\n%q\nwant\n%q", d, want)
	}
	if unifiedDiff("a", "b", a, a) != "" {
		t.Fatal("equal texts must give no diff")
	}
	if !regexp.MustCompile(`@@ -1,3 \+1,3 @@`).MatchString(unifiedDiff("a", "b", "1\n2\n3\n", "1\nx\n3\n")) {
		t.Fatal("small diff header")
	}
}
