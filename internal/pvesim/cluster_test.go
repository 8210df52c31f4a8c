package pvesim

import (
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// nodeInfo returns the current credentials of node.
func nodeInfo(t *testing.T, s *Sim, node string) NodeInfo {
	t.Helper()
	for _, n := range s.Info().Nodes {
		if n.Name == node {
			return n
		}
	}
	t.Fatalf("no node %s", node)
	return NodeInfo{}
}

// rootOn logs in as root@pam on node's own listener.
func rootOn(t *testing.T, s *Sim, node string) *client {
	t.Helper()
	ni := nodeInfo(t, s, node)
	c := newClient(t, Info{Endpoint: ni.Endpoint, CACertPEM: ni.CACertPEM}, "")
	d := c.ok("POST", "/access/ticket", vals("username", "root@pam", "password", ni.RootPassword)).data().(map[string]any)
	c.ticket, c.csrf = d["ticket"].(string), d["CSRFPreventionToken"].(string)
	return c
}

func tokenOn(t *testing.T, s *Sim, node string) *client {
	t.Helper()
	ni := nodeInfo(t, s, node)
	return newClient(t, Info{Endpoint: ni.Endpoint, CACertPEM: ni.CACertPEM, APIToken: ni.APIToken}, "")
}

// setAddr configures an applied address on node, as a reloaded
// pve_node_network would.
func setAddr(s *Sim, node, iface, ip string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.Nodes[node].Applied.Ifaces[iface] = &netIface{Name: iface, Type: "eth", Autostart: true, Address: ip, Netmask: "24"}
}

// labAddrs gives the reference lab's corosync and storage addresses.
func labAddrs(s *Sim) {
	for i, n := range []string{"z2g4a", "z2g4b", "z2g4c"} {
		setAddr(s, n, "i219", fmt.Sprintf("169.254.60.%d", 10+i))
		setAddr(s, n, "cx354ap1", fmt.Sprintf("169.254.50.%d", 10+i))
	}
}

// waitVia polls a task through a cluster member, which cannot reach a
// joining node until its join is finished (595).
func waitVia(t *testing.T, c *client, node, upid string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := c.do("GET", "/nodes/"+node+"/tasks/"+url.PathEscape(upid)+"/status", nil)
		if r.status == 200 && r.data().(map[string]any)["status"] == "stopped" {
			return r.data().(map[string]any)
		}
		if r.status != 200 && r.status != 595 {
			t.Fatalf("task status: %d %s", r.status, r.raw)
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s still running", upid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func taskOK(t *testing.T, c *client, node, upid string) {
	t.Helper()
	st := waitVia(t, c, node, upid)
	if st["exitstatus"] != "OK" {
		t.Fatalf("task %s: %v; log %s", upid, st["exitstatus"], c.ok("GET", "/nodes/"+node+"/tasks/"+url.PathEscape(upid)+"/log", nil).raw)
	}
}

// taskFails waits for a failed task and returns its exit status and log.
func taskFails(t *testing.T, c *client, node, upid string) (string, string) {
	t.Helper()
	st := c.waitTask(node, upid)
	if st["exitstatus"] == "OK" {
		t.Fatalf("task %s succeeded", upid)
	}
	log := c.ok("GET", "/nodes/"+node+"/tasks/"+url.PathEscape(upid)+"/log", vals("limit", "100")).raw
	return st["exitstatus"].(string), string(log)
}

func createLab(t *testing.T, s *Sim) *client {
	t.Helper()
	a := rootOn(t, s, "z2g4a")
	upid := a.ok("POST", "/cluster/config", vals("clustername", "lab", "link0", "169.254.60.10", "link1", "address=169.254.50.10,priority=10")).data().(string)
	if !strings.Contains(upid, ":clustercreate:lab:root@pam:") {
		t.Fatalf("upid %s", upid)
	}
	taskOK(t, a, "z2g4a", upid)
	return a
}

// joinParams are the parameters that join the ith node (1-based) to
// z2g4a's cluster, with its own link addresses.
func joinParams(s *Sim, t *testing.T, i int) url.Values {
	a := nodeInfo(t, s, "z2g4a")
	return vals("hostname", "172.27.2.10", "fingerprint", a.TLSFingerprint, "password", a.RootPassword,
		"link0", fmt.Sprintf("169.254.60.%d", 10+i), "link1", fmt.Sprintf("169.254.50.%d", 10+i))
}

func TestClusterCreateAndJoin(t *testing.T) {
	s, _ := startSim(t, Options{})
	labAddrs(s)
	before := map[string]NodeInfo{}
	for _, n := range s.Info().Nodes {
		before[n.Name] = n
	}
	a := createLab(t, s)

	// The founding node keeps its credentials and certificate.
	if got := nodeInfo(t, s, "z2g4a"); got != before["z2g4a"] {
		t.Fatalf("founding node changed: %+v", got)
	}
	st := a.ok("GET", "/cluster/status", nil).data().([]any)
	if len(st) != 2 || st[0].(map[string]any)["name"] != "lab" || st[0].(map[string]any)["quorate"] != float64(1) || st[1].(map[string]any)["nodeid"] != float64(1) {
		t.Fatalf("status after create: %v", st)
	}
	totem := a.ok("GET", "/cluster/config/totem", nil).data().(map[string]any)
	if totem["cluster_name"] != "lab" || totem["interface"].(map[string]any)["1"].(map[string]any)["knet_link_priority"] != "10" {
		t.Fatalf("totem: %v", totem)
	}
	// Creating again fails synchronously.
	if r := a.do("POST", "/cluster/config", vals("clustername", "lab2")); r.status != 500 || r.reason != "cluster config '/etc/pve/corosync.conf' already exists" {
		t.Fatalf("second create: %d %q", r.status, r.reason)
	}

	for i, n := range []string{"z2g4b", "z2g4c"} {
		c := rootOn(t, s, n)
		upid := c.ok("POST", "/cluster/config/join", joinParams(s, t, i+1)).data().(string)
		if !strings.HasPrefix(upid, "UPID:"+n+":") || !strings.Contains(upid, ":clusterjoin::root@pam:") {
			t.Fatalf("upid %s", upid)
		}
		// Poll through the member: the joining node's /etc/pve and
		// certificate change under the client when the join finishes.
		taskOK(t, a, n, upid)
		after := nodeInfo(t, s, n)
		if after.TLSFingerprint == before[n].TLSFingerprint || after.RootPassword != before["z2g4a"].RootPassword ||
			after.APIToken != before["z2g4a"].APIToken || after.CACertPEM != before["z2g4a"].CACertPEM {
			t.Fatalf("%s after join: %+v", n, after)
		}
		// The listener serves the reissued certificate.
		if fp := servedFingerprint(t, after.Endpoint); fp != after.TLSFingerprint {
			t.Fatalf("%s serves %s, Info says %s", n, fp, after.TLSFingerprint)
		}
	}
	// Every member lists every node and forwards to it.
	for _, n := range []string{"z2g4a", "z2g4b", "z2g4c"} {
		c := tokenOn(t, s, n)
		nodes := c.ok("GET", "/nodes", nil).data().([]any)
		if len(nodes) != 3 {
			t.Fatalf("%s lists %v", n, nodes)
		}
		for _, other := range []string{"z2g4a", "z2g4b", "z2g4c"} {
			c.ok("GET", "/nodes/"+other+"/status", nil)
		}
		if r := c.do("GET", "/nodes/z2g4x/status", nil); r.status != 500 || !strings.Contains(r.msg(), "hostname lookup 'z2g4x' failed") {
			t.Fatalf("unknown node: %d %s", r.status, r.raw)
		}
	}
	cn := a.ok("GET", "/cluster/config/nodes", nil).data().([]any)
	if len(cn) != 3 || cn[2].(map[string]any)["ring1_addr"] != "169.254.50.12" || cn[2].(map[string]any)["nodeid"] != "3" {
		t.Fatalf("config nodes: %v", cn)
	}
	ji := a.ok("GET", "/cluster/config/join", vals("node", "z2g4b")).data().(map[string]any)
	if ji["preferred_node"] != "z2g4b" || len(ji["nodelist"].([]any)) != 3 || ji["config_digest"] == "" {
		t.Fatalf("join info: %v", ji)
	}
	for _, e := range ji["nodelist"].([]any) {
		m := e.(map[string]any)
		if m["pve_fp"] != nodeInfo(t, s, m["name"].(string)).TLSFingerprint {
			t.Fatalf("join info fingerprint of %v", m)
		}
	}
	st = tokenOn(t, s, "z2g4c").ok("GET", "/cluster/status", nil).data().([]any)
	if len(st) != 4 || st[0].(map[string]any)["nodes"] != float64(3) || st[0].(map[string]any)["version"] != float64(3) || st[3].(map[string]any)["local"] != float64(1) {
		t.Fatalf("status: %v", st)
	}
	// A ticket from the cluster works on every member.
	b := newClient(t, Info{Endpoint: nodeInfo(t, s, "z2g4b").Endpoint, CACertPEM: nodeInfo(t, s, "z2g4b").CACertPEM}, "")
	b.ticket, b.csrf = a.ticket, a.csrf
	b.ok("GET", "/cluster/config/nodes", nil)
	// Joining an existing member again fails in the task, leaving it as is.
	upid := b.ok("POST", "/cluster/config/join", joinParams(s, t, 1)).data().(string)
	exit, log := taskFails(t, b, "z2g4b", upid)
	if exit != "Check if node may join a cluster failed!" || !strings.Contains(log, "* cluster config '/etc/pve/corosync.conf' already exists") {
		t.Fatalf("rejoin: %s %s", exit, log)
	}
}

// servedFingerprint is the fingerprint of the certificate endpoint serves.
func servedFingerprint(t *testing.T, endpoint string) string {
	t.Helper()
	conn, err := tls.Dial("tcp", strings.TrimPrefix(endpoint, "https://"), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // test reads the certificate
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	raw := conn.ConnectionState().PeerCertificates[0].Raw
	return certFingerprint(string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: raw})))
}

// memberEntry is node's entry in the cluster status member lists.
func memberEntry(t *testing.T, member *client, node string) map[string]any {
	t.Helper()
	for _, e := range member.ok("GET", "/cluster/status", nil).data().([]any) {
		if m := e.(map[string]any); m["type"] == "node" && m["name"] == node {
			return m
		}
	}
	return nil
}

// The join switches the node to the cluster's pmxcfs partway through the
// worker, as Setup::join's finish_join restarts pve-cluster with the
// cluster's database after the member's addnode: until then the member
// lists the node offline and the node takes its own tickets; from then
// the member lists it online and the node refuses its old tickets (the
// cluster's key verifies them now). The new certificate comes only when
// the worker ends (pveproxy restarts last).
func TestClusterJoinSwitchesCredentialsMidTask(t *testing.T) {
	// clusterjoin takes 20 PVE seconds: 4 s here, the switch after ~1 s.
	s, _ := startSim(t, Options{TimeScale: 0.2})
	labAddrs(s)
	a := createLab(t, s)
	before := nodeInfo(t, s, "z2g4b")
	b := rootOn(t, s, "z2g4b")
	upid := b.ok("POST", "/cluster/config/join", joinParams(s, t, 1)).data().(string)
	statusPath := "/nodes/z2g4b/tasks/" + url.PathEscape(upid) + "/status"

	// Added by the member, not switched: the node's own ticket works.
	if m := memberEntry(t, a, "z2g4b"); m == nil || m["online"] != float64(0) {
		t.Fatalf("member lists the joining node as %v right after the join started, want offline", m)
	}
	if st := b.ok("GET", statusPath, nil).data().(map[string]any); st["status"] != "running" {
		t.Fatalf("join task %v right after it started", st)
	}
	if r := a.do("GET", statusPath, nil); r.status != 595 {
		t.Fatalf("member proxies to the node before it switched: %d %s", r.status, r.raw)
	}

	deadline := time.Now().Add(30 * time.Second)
	for m := memberEntry(t, a, "z2g4b"); m["online"] != float64(1); m = memberEntry(t, a, "z2g4b") {
		if time.Now().After(deadline) {
			t.Fatal("the joining node never came online")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Switched: the old ticket is stale, the member reaches the node.
	if r := b.do("GET", statusPath, nil); r.status != 401 {
		t.Fatalf("the node's own ticket after the switch: %d %s, want 401", r.status, r.raw)
	}
	st := a.ok("GET", statusPath, nil).data().(map[string]any)
	fp := servedFingerprint(t, before.Endpoint)
	if st2 := a.ok("GET", statusPath, nil).data().(map[string]any); st["status"] == "running" && st2["status"] == "running" && fp != before.TLSFingerprint {
		t.Fatalf("the node serves a new certificate while its join still runs")
	}
	taskOK(t, a, "z2g4b", upid)
	if fp := servedFingerprint(t, before.Endpoint); fp == before.TLSFingerprint || fp != nodeInfo(t, s, "z2g4b").TLSFingerprint {
		t.Fatalf("after the join the node serves %s (before %s)", fp, before.TLSFingerprint)
	}
}

func TestClusterStandaloneAnswers(t *testing.T) {
	s, _ := startSim(t, Options{})
	c := tokenOn(t, s, "z2g4b")
	st := c.ok("GET", "/cluster/status", nil).data().([]any)
	if len(st) != 1 || st[0].(map[string]any)["name"] != "z2g4b" || st[0].(map[string]any)["nodeid"] != float64(0) || st[0].(map[string]any)["local"] != float64(1) {
		t.Fatalf("standalone status: %v", st)
	}
	if r := c.do("GET", "/cluster/config/join", nil); r.status != 424 || r.reason != "node is not in a cluster, no join info available!" {
		t.Fatalf("join info standalone: %d %q", r.status, r.reason)
	}
	if r := c.ok("GET", "/cluster/config/nodes", nil); len(r.data().([]any)) != 0 {
		t.Fatalf("nodes: %s", r.raw)
	}
	// Tokens are refused before parameters are checked.
	for _, p := range []string{"/cluster/config", "/cluster/config/join"} {
		if r := c.do("POST", p, nil); r.status != 403 || r.reason != "Permission check failed (user != root@pam)" {
			t.Fatalf("token %s: %d %q", p, r.status, r.reason)
		}
	}
	if r := c.do("DELETE", "/cluster/config/nodes/z2g4a", nil); r.status != 403 {
		t.Fatalf("token delete: %d", r.status)
	}
	root := rootOn(t, s, "z2g4b")
	for _, tc := range []struct {
		params url.Values
		key    string
		msg    string
	}{
		{vals("clustername", "this-name-is-too-long"), "clustername", "value may only be 15 characters long"},
		{vals("clustername", "bad_name"), "clustername", "invalid format - value does not look like a valid node name\n"},
		{vals("clustername", "lab", "link0", "169.254.60.10,priority=256"), "link0", "invalid format - format error\nlink0.priority: value must have a maximum value of 255\n"},
		{vals("clustername", "lab", "link2", "not an ip"), "link2", "invalid format - format error\nlink2.address: invalid format - value does not look like a valid address: not an ip\n\n"},
		{vals("clustername", "lab", "link8", "10.0.0.1"), "link8", "property is not defined in schema and the schema does not allow additional properties"},
		{vals("clustername", "lab", "nodeid", "0"), "nodeid", "value must have a minimum value of 1"},
	} {
		r := root.do("POST", "/cluster/config", tc.params)
		if r.status != 400 || r.errs()[tc.key] != tc.msg {
			t.Errorf("%v: %d %s", tc.params, r.status, r.raw)
		}
	}
	if r := root.do("POST", "/cluster/config/join", vals("hostname", "z2g4a", "password", "x", "fingerprint", "AA:BB")); r.status != 400 || r.errs()["fingerprint"] != "value does not match the regex pattern" {
		t.Fatalf("bad fingerprint: %d %s", r.status, r.raw)
	}
	if r := root.do("DELETE", "/cluster/config/nodes/z2g4b", nil); r.status != 500 || r.reason != "Cannot delete myself from cluster!" {
		t.Fatalf("delete self: %d %q", r.status, r.reason)
	}
	if r := root.do("DELETE", "/cluster/config/nodes/z2g4a", nil); r.status != 500 || r.reason != "Node/IP: z2g4a is not a known host of the cluster." {
		t.Fatalf("delete standalone: %d %q", r.status, r.reason)
	}
}

// A failed join leaves the joining node standalone and usable, and the
// cluster unchanged.
func TestClusterJoinFailures(t *testing.T) {
	s, _ := startSim(t, Options{})
	labAddrs(s)
	a := createLab(t, s)
	bBefore := nodeInfo(t, s, "z2g4b")
	aInfo := nodeInfo(t, s, "z2g4a")
	cInfo := nodeInfo(t, s, "z2g4c")
	good := func() url.Values { return joinParams(s, t, 1) }
	with := func(kv ...string) url.Values {
		v := good()
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == "" {
				v.Del(kv[i])
			} else {
				v.Set(kv[i], kv[i+1])
			}
		}
		return v
	}
	for _, tc := range []struct {
		name   string
		params url.Values
		exit   string
		log    string
	}{
		{"wrong fingerprint", with("fingerprint", cInfo.TLSFingerprint), "fingerprint '" + aInfo.TLSFingerprint + "' not verified, abort!", "Establishing API connection with host '172.27.2.10'"},
		{"wrong password", with("password", "nope"), "401 authentication failure", ""},
		{"unknown host", with("hostname", "z2g4x"), "500 Can't connect to z2g4x:8006 (Name or service not known)", ""},
		{"address not on node", with("link1", "169.254.50.99"), "Check if node may join a cluster failed!", "* link1: cannot use IP '169.254.50.99', not found on local node!"},
		{"missing link", with("link1", ""), "Cluster join aborted!", "An error occurred on the cluster node: corosync: link 1 exists in cluster config but wasn't specified for new node"},
		{"address in use", with("link0", "169.254.60.10", "link1", "169.254.50.11"), "Check if node may join a cluster failed!", "* link0: cannot use IP '169.254.60.10', not found on local node!"},
		{"standalone member", with("hostname", "z2g4c", "fingerprint", cInfo.TLSFingerprint, "password", cInfo.RootPassword), "Cluster join aborted!", "An error occurred on the cluster node: invalid corosync.conf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := rootOn(t, s, "z2g4b")
			upid := b.ok("POST", "/cluster/config/join", tc.params).data().(string)
			exit, log := taskFails(t, b, "z2g4b", upid)
			if exit != tc.exit || !strings.Contains(log, tc.log) {
				t.Fatalf("exit %q log %s", exit, log)
			}
			if got := nodeInfo(t, s, "z2g4b"); got != bBefore {
				t.Fatalf("node changed: %+v", got)
			}
			if n := b.ok("GET", "/nodes", nil).data().([]any); len(n) != 1 {
				t.Fatalf("standalone lists %v", n)
			}
			if n := a.ok("GET", "/cluster/config/nodes", nil).data().([]any); len(n) != 1 {
				t.Fatalf("cluster nodelist changed: %v", n)
			}
		})
	}
}

// Joins through one member are not serialised by PVE beyond addnode: while
// the first joiner is still finishing, the cluster has lost quorum and the
// second join's addnode fails.
func TestClusterConcurrentJoins(t *testing.T) {
	s, _ := startSim(t, Options{TaskDuration: 300 * time.Millisecond})
	labAddrs(s)
	a := createLab(t, s)
	var wg sync.WaitGroup
	upids := map[string]string{}
	var mu sync.Mutex
	clients := map[string]*client{"z2g4b": rootOn(t, s, "z2g4b"), "z2g4c": rootOn(t, s, "z2g4c")}
	for i, n := range []string{"z2g4b", "z2g4c"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := clients[n].do("POST", "/cluster/config/join", joinParams(s, t, i+1))
			mu.Lock()
			upids[n], _ = r.data().(string)
			mu.Unlock()
		}()
	}
	wg.Wait()
	ok, failed := 0, 0
	for n, upid := range upids {
		var st map[string]any
		s.mu.Lock()
		added := s.clusterOf("z2g4a").Nodes[n] != nil
		s.mu.Unlock()
		if added {
			st = waitVia(t, a, n, upid)
		} else {
			st = clients[n].waitTask(n, upid)
		}
		if st["exitstatus"] == "OK" {
			ok++
			continue
		}
		failed++
		exit, log := taskFails(t, clients[n], n, upid)
		if exit != "Cluster join aborted!" || !strings.Contains(log, "cluster not ready - no quorum?") {
			t.Fatalf("%s: %s %s", n, exit, log)
		}
		if got := nodeInfo(t, s, n); got.RootPassword == nodeInfo(t, s, "z2g4a").RootPassword {
			t.Fatalf("%s half joined", n)
		}
	}
	if ok != 1 || failed != 1 {
		t.Fatalf("ok %d failed %d", ok, failed)
	}
	if n := a.ok("GET", "/nodes", nil).data().([]any); len(n) != 2 {
		t.Fatalf("nodes %v", n)
	}
}

func TestClusterRemoveNodeAndPersistence(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s, _ := startSim(t, Options{StatePath: path})
	labAddrs(s)
	a := createLab(t, s)
	for i, n := range []string{"z2g4b", "z2g4c"} {
		upid := rootOn(t, s, n).ok("POST", "/cluster/config/join", joinParams(s, t, i+1)).data().(string)
		taskOK(t, a, n, upid)
	}
	want := s.Info()
	_ = s.Close()

	s2, _ := startSim(t, Options{StatePath: path})
	if got := s2.Info(); fmt.Sprint(got.Nodes[1:]) == fmt.Sprint(want.Nodes[1:]) {
		// Endpoints differ between runs; compare credentials.
		t.Log("same endpoints")
	}
	for i, n := range want.Nodes {
		got := s2.Info().Nodes[i]
		if got.TLSFingerprint != n.TLSFingerprint || got.RootPassword != n.RootPassword || got.CACertPEM != n.CACertPEM {
			t.Fatalf("%s changed over restart", n.Name)
		}
	}
	a2 := rootOn(t, s2, "z2g4a")
	if n := a2.ok("GET", "/nodes", nil).data().([]any); len(n) != 3 {
		t.Fatalf("after restart: %v", n)
	}
	c := rootOn(t, s2, "z2g4c")
	if r := c.ok("POST", "/access/ticket", vals("username", "root@pam", "password", want.RootPassword)); r.data().(map[string]any)["clustername"] != "lab" {
		t.Fatalf("ticket: %s", r.raw)
	}
	// Remove z2g4c after powering it off.
	s2.PowerOff("z2g4c")
	st := a2.ok("GET", "/cluster/status", nil).data().([]any)
	if st[3].(map[string]any)["online"] != float64(0) || st[0].(map[string]any)["quorate"] != float64(1) {
		t.Fatalf("status with c off: %v", st)
	}
	if r := a2.do("GET", "/nodes/z2g4c/status", nil); r.status != 595 {
		t.Fatalf("offline node: %d", r.status)
	}
	a2.ok("DELETE", "/cluster/config/nodes/z2g4c", nil)
	if n := a2.ok("GET", "/nodes", nil).data().([]any); len(n) != 2 {
		t.Fatalf("after delete: %v", n)
	}
	if r := a2.do("DELETE", "/cluster/config/nodes/z2g4c", nil); r.status != 500 || r.reason != "Node/IP: z2g4c is not a known host of the cluster." {
		t.Fatalf("delete again: %d %q", r.status, r.reason)
	}
	if r := a2.do("GET", "/nodes/z2g4c/status", nil); r.status != 500 {
		t.Fatalf("removed node still reachable: %d", r.status)
	}
}

func TestClusteredOptionStillWorks(t *testing.T) {
	s, info := startSim(t, Options{ClusterName: "acctest"})
	c := newClient(t, info, "")
	st := c.ok("GET", "/cluster/status", nil).data().([]any)
	if len(st) != 4 || st[0].(map[string]any)["name"] != "acctest" {
		t.Fatalf("status: %v", st)
	}
	ji := c.ok("GET", "/cluster/config/join", nil).data().(map[string]any)
	if ji["preferred_node"] != "z2g4a" {
		t.Fatalf("join info %v", ji)
	}
	_ = s
}
