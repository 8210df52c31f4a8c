package pvesim

import (
	"bufio"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestStandaloneNodes(t *testing.T) {
	_, info := startSim(t, Options{TaskDuration: -1})
	if len(info.Nodes) != 3 || info.Nodes[0].APIToken == info.Nodes[1].APIToken || info.Nodes[0].CACertPEM == info.Nodes[1].CACertPEM {
		t.Fatalf("standalone nodes must have their own credentials and CA")
	}
	if !strings.HasPrefix(info.APIToken, "root@pam!terraform=") || len(strings.Split(info.TLSFingerprint, ":")) != 32 {
		t.Fatalf("info: %+v", info)
	}
	c := newClient(t, info, "")
	nodes := c.ok("GET", "/nodes", nil).data().([]any)
	if len(nodes) != 1 || nodes[0].(map[string]any)["node"] != "z2g4a" || nodes[0].(map[string]any)["ssl_fingerprint"] != info.TLSFingerprint {
		t.Fatalf("nodes: %v", nodes)
	}
	r := c.do("GET", "/nodes/z2g4b/network", nil)
	if r.status != 500 || r.msg() != "hostname lookup 'z2g4b' failed - failed to get address info for: z2g4b: Name or service not known\n" {
		t.Fatalf("other node: %d %s", r.status, r.raw)
	}
	cs := c.ok("GET", "/cluster/status", nil).data().([]any)
	if len(cs) != 1 || cs[0].(map[string]any)["type"] != "node" {
		t.Fatalf("cluster status: %v", cs)
	}
	// The second node's token is not valid on the first node.
	other := newClient(t, info, "")
	other.token = info.Nodes[1].APIToken
	if r := other.do("GET", "/version", nil); r.status != 401 {
		t.Fatalf("foreign token: %d", r.status)
	}
	// Its own listener accepts it, with its own CA.
	ni := info
	ni.CACertPEM = info.Nodes[1].CACertPEM
	own := newClient(t, ni, info.Nodes[1].Endpoint)
	own.token = info.Nodes[1].APIToken
	own.ok("GET", "/nodes/z2g4b/status", nil)
}

func TestClusteredNodes(t *testing.T) {
	_, info := startSim(t, Options{ClusterName: "lab", TaskDuration: -1})
	if info.Nodes[1].APIToken != info.APIToken || info.Nodes[2].CACertPEM != info.CACertPEM {
		t.Fatal("a cluster shares token and CA")
	}
	for _, ni := range info.Nodes {
		c := newClient(t, info, ni.Endpoint)
		if got := len(c.ok("GET", "/nodes", nil).data().([]any)); got != 3 {
			t.Fatalf("%s lists %d nodes", ni.Name, got)
		}
		for _, n := range []string{"z2g4a", "z2g4b", "z2g4c"} {
			c.ok("GET", "/nodes/"+n+"/network", nil)
		}
		if r := c.do("GET", "/nodes/z2g4x/network", nil); r.status != 500 {
			t.Fatalf("unknown node: %d", r.status)
		}
	}
	c := newClient(t, info, info.Nodes[1].Endpoint)
	c.token = ""
	d := c.ok("POST", "/access/ticket", vals("username", "root@pam", "password", info.RootPassword)).data().(map[string]any)
	if d["clustername"] != "lab" {
		t.Fatalf("ticket: %v", d)
	}
	c.token = info.APIToken
	cs := c.ok("GET", "/cluster/status", nil)
	if first := cs.data().([]any)[0].(map[string]any); first["type"] != "cluster" || first["name"] != "lab" || len(cs.data().([]any)) != 4 {
		t.Fatalf("cluster status: %s", cs.raw)
	}
}

func TestFaults(t *testing.T) {
	s, info := startSim(t, Options{TaskDuration: -1})
	c := newClient(t, info, "")
	const n = "/nodes/z2g4a/network"

	s.InjectFault(Fault{Method: "POST", Path: `^/nodes/[^/]+/network$`, Kind: FaultLockTimeout, Count: 1})
	r := c.do("POST", n, vals("iface", "vmbr1", "type", "bridge"))
	if r.status != 500 || r.reason != "can't lock file '/etc/network/.pve-interfaces.lock' - got timeout" {
		t.Fatalf("lock timeout: %d %q", r.status, r.reason)
	}
	if findIface(c.ok("GET", n, nil).data(), "vmbr1") != nil {
		t.Fatal("lock timeout executed the write")
	}
	c.ok("POST", n, vals("iface", "vmbr1", "type", "bridge", "autostart", "1")) // Count 1: spent

	s.InjectFault(Fault{Method: "PUT", Path: `^/nodes/z2g4a/network$`, Kind: FaultTaskFailure, Message: "ifreload failed", Count: 1})
	upid := c.ok("PUT", n, nil).data().(string)
	st := c.waitTask("z2g4a", upid)
	if st["exitstatus"] != "ifreload failed" {
		t.Fatalf("task failure: %v", st)
	}
	lines := c.ok("GET", "/nodes/z2g4a/tasks/"+upid+"/log", nil).data().([]any)
	if lines[len(lines)-1].(map[string]any)["t"] != "TASK ERROR: ifreload failed" {
		t.Fatalf("log %v", lines)
	}
	// As on PVE: interfaces.new was renamed before ifreload ran, so the
	// new config is in place (nothing staged) but the reload did not bring
	// it up.
	after := c.ok("GET", n, nil)
	if after.env["changes"] != nil {
		t.Fatal("a failed reload must not leave the config staged: PVE renames it first")
	}
	for _, it := range after.data().([]any) {
		if in := it.(map[string]any); in["iface"] == "vmbr1" && in["active"] != nil {
			t.Fatalf("vmbr1 is active after a failed reload: %v", in)
		}
	}

	s.InjectFault(Fault{Path: `^/version$`, Kind: FaultError, Status: 503, Message: "service unavailable"})
	if r := c.do("GET", "/version", nil); r.status != 503 || r.msg() != "service unavailable\n" {
		t.Fatalf("error fault: %d %s", r.status, r.raw)
	}
	s.ClearFaults()
	c.ok("GET", "/version", nil)

	s.InjectFault(Fault{Path: `^/version$`, Kind: FaultLatency, Latency: 150 * time.Millisecond})
	start := time.Now()
	c.ok("GET", "/version", nil)
	if time.Since(start) < 150*time.Millisecond {
		t.Fatal("latency not applied")
	}
	s.ClearFaults()

	// Unlimited: Go's client retries an idempotent request once on a reset.
	s.InjectFault(Fault{Path: `^/version$`, Kind: FaultConnectionReset})
	if res, err := c.hc.Get(c.base + "/version"); err == nil {
		res.Body.Close()
		t.Fatal("connection reset fault answered")
	}
	s.ClearFaults()
	c.ok("GET", "/version", nil)
}

func TestRequestLog(t *testing.T) {
	dir := t.TempDir()
	envLog := filepath.Join(dir, "env.jsonl")
	fileLog := filepath.Join(dir, "file.jsonl")
	t.Setenv("PVESIM_REQUEST_LOG", envLog)
	s, info := startSim(t, Options{TaskDuration: -1, RequestLogPath: fileLog})
	c := newClient(t, info, "")
	c.token = ""
	c.ok("POST", "/access/ticket", vals("username", "root@pam", "password", info.RootPassword))
	c.token = info.APIToken
	c.ok("GET", "/nodes/z2g4a/network", url.Values{"type": {"bridge"}})
	c.do("GET", "/nope", nil)

	reqs := s.Requests()
	if len(reqs) != 3 {
		t.Fatalf("requests: %+v", reqs)
	}
	if r := reqs[0]; r.Method != "POST" || r.Path != "/access/ticket" || r.Status != 200 || r.Auth != "none" || r.Params["password"] != "<redacted>" || r.Params["username"] != "root@pam" {
		t.Fatalf("login record: %+v", r)
	}
	if r := reqs[1]; r.Path != "/nodes/z2g4a/network" || r.Auth != "token" || r.Params["type"] != "bridge" || r.Node != "z2g4a" {
		t.Fatalf("record: %+v", r)
	}
	if reqs[2].Status != 501 {
		t.Fatalf("501 record: %+v", reqs[2])
	}
	for _, p := range []string{envLog, fileLog} {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		lines := 0
		for sc.Scan() {
			var r Request
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if strings.Contains(sc.Text(), info.RootPassword) {
				t.Fatal("secret in request log")
			}
			lines++
		}
		f.Close()
		if lines != 3 {
			t.Fatalf("%s has %d lines", p, lines)
		}
	}
	s.ResetRequests()
	if len(s.Requests()) != 0 {
		t.Fatal("reset")
	}
}

func TestPersistence(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s, info := startSim(t, Options{TaskDuration: -1, StatePath: path, Nodes: []string{"pve1"}})
	c := newClient(t, info, "")
	c.ok("POST", "/nodes/pve1/network", vals("iface", "vmbr1", "type", "bridge", "autostart", "1"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	_, info2 := startSim(t, Options{TaskDuration: -1, StatePath: path, Nodes: []string{"ignored"}})
	if info2.APIToken != info.APIToken || info2.CACertPEM != info.CACertPEM || info2.TLSFingerprint != info.TLSFingerprint {
		t.Fatal("credentials not persisted")
	}
	c2 := newClient(t, info2, "")
	r := c2.ok("GET", "/nodes/pve1/network", nil)
	if findIface(r.data(), "vmbr1") == nil || r.env["changes"] == nil {
		t.Fatalf("staged config not persisted: %s", r.raw)
	}
}

func TestUPIDFormat(t *testing.T) {
	_, info := startSim(t, Options{TaskDuration: -1})
	c := newClient(t, info, "")
	upid := c.ok("PUT", "/nodes/z2g4a/network", nil).data()
	if !upidRE.MatchString(upid.(string)) {
		t.Fatalf("upid %v", upid)
	}
	parts := strings.Split(upid.(string), ":")
	if parts[1] != "z2g4a" || len(parts[2]) != 8 || strings.ToUpper(parts[2]) != parts[2] || parts[8] != "" {
		t.Fatalf("upid %v", upid)
	}
}

func TestStartErrors(t *testing.T) {
	if _, err := Start(Options{Nodes: []string{"bad_name"}}); err == nil {
		t.Fatal("bad node name accepted")
	}
	path := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(path, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Start(Options{StatePath: path}); err == nil || errors.Is(err, os.ErrNotExist) {
		t.Fatalf("corrupt state: %v", err)
	}
}

// The simulator can be PVE 8.4: it reports that version and refuses what
// 8.4 does not know, such as the fabric interface type of PVE 9.
func TestRelease84(t *testing.T) {
	s, err := Start(Options{ClusterName: "old", PVERelease: "8.4"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	c := newClient(t, s.Info(), "")
	if v := c.ok("GET", "/version", nil).data().(map[string]any); v["release"] != "8.4" {
		t.Fatalf("version %v", v)
	}
	r := c.do("POST", "/nodes/z2g4a/network", vals("iface", "fab0", "type", "fabric"))
	if r.status != 400 || !strings.Contains(string(r.raw), "does not have a value in the enumeration") {
		t.Fatalf("8.4 accepted type=fabric: %d %s", r.status, r.raw)
	}
	if r := c.do("PUT", "/nodes/z2g4a/network", vals("regenerate-frr", "1")); r.status != 400 {
		t.Fatalf("8.4 accepted regenerate-frr: %d %s", r.status, r.raw)
	}
	if _, err := Start(Options{PVERelease: "7.4"}); err == nil || !strings.Contains(err.Error(), "unsupported PVE release") {
		t.Fatalf("unknown release: %v", err)
	}
}
