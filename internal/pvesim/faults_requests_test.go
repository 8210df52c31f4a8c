package pvesim

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// postNoAnswer sends a POST and expects the connection to end without an
// answer (a dropped connection).
func postNoAnswer(t *testing.T, c *client, path string, v url.Values) {
	t.Helper()
	req, err := http.NewRequest("POST", c.base+path, strings.NewReader(v.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "PVEAPIToken="+c.token)
	res, err := c.hc.Do(req)
	if err == nil {
		res.Body.Close()
		t.Fatalf("POST %s: answered %d, want a dropped connection", path, res.StatusCode)
	}
}

func poolIDs(c *client) map[string]bool {
	ids := map[string]bool{}
	for _, p := range c.ok("GET", "/pools", nil).data().([]any) {
		ids[p.(map[string]any)["poolid"].(string)] = true
	}
	return ids
}

func TestFaultsOnRequestsAndTheirLogMarks(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "requests.jsonl")
	fs, err := ParseFaultSpec("GET /nodes/*/ceph/status=5xx; POST /pools=lock:1x; POST /pools=drop-before:1x; POST /pools=drop-after:1x; GET /version=delay:1ms")
	if err != nil {
		t.Fatal(err)
	}
	s, info := startSim(t, Options{NoSSH: true, TaskDuration: -1, RequestLogPath: logPath, Faults: fs})
	c := newClient(t, info, "")

	if r := c.do("GET", "/nodes/z2g4a/ceph/status", nil); r.status != 500 || r.msg() != "injected fault\n" {
		t.Errorf("5xx: %d %q", r.status, r.msg())
	}
	c.ok("GET", "/nodes/z2g4a/status", nil) // not matched: served
	// pve-manager API2/Pool.pm: lock_user_config(..., "create pool failed").
	if r := c.do("POST", "/pools", vals("poolid", "p1")); r.status != 500 ||
		r.msg() != "create pool failed: cfs-lock 'file-user_cfg' error: got lock request timeout\n" {
		t.Errorf("lock: %d %q", r.status, r.msg())
	}
	if poolIDs(c)["p1"] {
		t.Fatal("a lock timeout created the pool")
	}
	postNoAnswer(t, c, "/pools", vals("poolid", "p1"))
	if poolIDs(c)["p1"] {
		t.Fatal("a connection dropped before the write created the pool")
	}
	postNoAnswer(t, c, "/pools", vals("poolid", "p1"))
	if !poolIDs(c)["p1"] {
		t.Fatal("a connection dropped after the write lost the pool")
	}
	c.ok("POST", "/pools", vals("poolid", "p2")) // every count spent
	c.ok("GET", "/version", nil)

	type mark struct {
		method, path, fault, rule string
		status                    int
	}
	var got []mark
	for _, r := range s.Requests() {
		if r.Path == "/pools" && r.Method == "GET" {
			continue
		}
		got = append(got, mark{r.Method, r.Path, r.Fault, r.FaultRule, r.Status})
	}
	want := []mark{
		{"GET", "/nodes/z2g4a/ceph/status", "error", "GET /nodes/*/ceph/status=5xx", 500},
		{"GET", "/nodes/z2g4a/status", "", "", 200},
		{"POST", "/pools", "lock", "POST /pools=lock:1x", 500},
		{"POST", "/pools", "drop-before", "POST /pools=drop-before:1x", -1},
		{"POST", "/pools", "drop-after", "POST /pools=drop-after:1x", 200},
		{"POST", "/pools", "", "", 200},
		{"GET", "/version", "delay", "GET /version=delay:1ms", 200},
	}
	if len(got) != len(want) {
		t.Fatalf("log:\n got %+v\nwant %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("log %d: got %+v, want %+v", i, got[i], want[i])
		}
	}

	// The JSON-lines log (make sim's requests.jsonl) carries the same marks;
	// a request served as PVE would has no fault keys at all.
	f, err := os.Open(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	marked := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r Request
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if r.Fault == "" && strings.Contains(sc.Text(), `"fault`) {
			t.Errorf("unfaulted line with a fault key: %s", sc.Text())
		}
		if r.Fault != "" && !strings.Contains(sc.Text(), `"fault_rule":`) {
			t.Errorf("faulted line without its rule: %s", sc.Text())
		}
		marked[r.Fault]++
	}
	for _, k := range []string{"error", "lock", "drop-before", "drop-after", "delay"} {
		if marked[k] != 1 {
			t.Errorf("%d lines marked %q in the JSON log, want 1", marked[k], k)
		}
	}
}

func TestFaultLockTimeoutOnlyWhereALockIs(t *testing.T) {
	s, info := startSim(t, Options{NoSSH: true, TaskDuration: -1})
	c := newClient(t, info, "")
	c.ok("POST", "/pools", vals("poolid", "p1"))
	if err := s.SetFaultSpec("* **=lock"); err != nil {
		t.Fatal(err)
	}
	c.ok("GET", "/pools", nil) // reads take no lock
	for _, tc := range []struct{ method, path, param, want string }{
		{"PUT", "/pools/p1", "comment", "update pools failed: cfs-lock 'file-user_cfg' error: got lock request timeout"},
		{"DELETE", "/pools/p1", "", "delete pool failed: cfs-lock 'file-user_cfg' error: got lock request timeout"},
		// pve-storage API2/Storage/Config.pm: lock_storage_config(..., "create storage failed").
		{"POST", "/storage", "storage", "create storage failed: cfs-lock 'file-storage_cfg' error: got lock request timeout"},
		// pve-manager API2/Network.pm: lock_file($iflockfn, 10, ...).
		{"POST", "/nodes/z2g4a/network", "iface", "can't lock file '/etc/network/.pve-interfaces.lock' - got timeout"},
		{"PUT", "/nodes/z2g4a/qemu/100/config", "cores", "can't lock file '/var/lock/qemu-server/lock-100.conf' - got timeout"},
	} {
		var v url.Values
		if tc.param != "" {
			v = vals(tc.param, "x")
		}
		if r := c.do(tc.method, tc.path, v); r.status != 500 || r.msg() != tc.want+"\n" {
			t.Errorf("%s %s: %d %q, want 500 %q", tc.method, tc.path, r.status, r.msg(), tc.want)
		}
	}
	if !poolIDs(c)["p1"] {
		t.Fatal("a lock timeout deleted the pool")
	}
	// A create whose lock is taken inside its worker answers with a task.
	if r := c.do("POST", "/access/ticket", vals("username", "root@pam", "password", info.RootPassword)); r.status != 200 {
		t.Errorf("login met a lock: %d %q", r.status, r.msg())
	}
	for _, r := range s.Requests() {
		if (r.Method == "GET" || r.Path == "/access/ticket") && r.Fault != "" {
			t.Errorf("%s %s marked %q", r.Method, r.Path, r.Fault)
		}
	}
}
