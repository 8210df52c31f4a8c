package pvesim

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestFaultSpecParses(t *testing.T) {
	fs, err := ParseFaultSpec(`read /nodes/*/ceph/**=5xx:20%
# lock timeouts on writes
write **=lock:10% ; task qmcreate=fail-late:1x
POST,PUT /pools=drop-after:2x;GET /version=delay:150ms
task cephcreateosd/sd?=hang; ssh z2g4b=down; * /cluster/status=503`)
	if err != nil {
		t.Fatal(err)
	}
	want := []Fault{
		{Method: "GET", Path: `^/nodes/[^/]*/ceph/.*$`, Kind: FaultError, Status: 500, Rate: 0.2},
		{Method: "POST,PUT,DELETE", Kind: FaultLockTimeout, Rate: 0.1},
		{TaskType: "qmcreate", Kind: FaultTaskLateFailure, Count: 1},
		{Method: "POST,PUT", Path: `^/pools$`, Kind: FaultDropAfter, Count: 2},
		{Method: "GET", Path: `^/version$`, Kind: FaultLatency, Latency: 150 * time.Millisecond},
		{TaskType: "cephcreateosd", TaskID: "sd.", Kind: FaultTaskHang},
		{Node: "z2g4b", Kind: FaultSSHDown},
		{Path: `^/cluster/status$`, Kind: FaultError, Status: 503},
	}
	if len(fs) != len(want) {
		t.Fatalf("got %d faults: %+v", len(fs), fs)
	}
	for i, w := range want {
		g := fs[i]
		if g.Rule == "" || strings.Contains(g.Rule, ";") || strings.Contains(g.Rule, "#") {
			t.Errorf("rule %d: Rule %q is not the rule's own text", i, g.Rule)
		}
		g.Rule = ""
		if !reflect.DeepEqual(g, w) {
			t.Errorf("rule %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
	// The glob is anchored and * stays in one segment.
	f := fs[0]
	f.prepare(0)
	for path, m := range map[string]bool{
		"/nodes/z2g4a/ceph/status": true, "/nodes/z2g4a/ceph/pool/rbd": true,
		"/nodes/z2g4a/qemu": false, "/x/nodes/z2g4a/ceph/status": false, "/nodes/a/b/ceph/status": false,
	} {
		if f.matches("GET", path) != m {
			t.Errorf("GET %s matches = %v, want %v", path, !m, m)
		}
	}
	if f.matches("POST", "/nodes/z2g4a/ceph/status") {
		t.Error("a read rule matches POST")
	}
}

func TestFaultSpecRefusesWithTheFix(t *testing.T) {
	for spec, want := range map[string]string{
		"GET /version":                 "no '=': want SELECTOR=ACTION",
		"/version=5xx":                 "want METHODS PATH, task TYPE[/ID] or ssh NODE",
		"FETCH /version=5xx":           `method "FETCH": want *, read, write or GET, POST, PUT, DELETE`,
		"GET version=5xx":              "want an API path starting with /",
		"GET /version=404":             "want 5xx, a status 500-599, lock, drop, drop-before, drop-after or delay",
		"GET /version=5xx:120%":        "want a percentage above 0 and at most 100",
		"GET /version=5xx:0x":          "want a positive number of times",
		"GET /version=5xx:2s":          "for delay, a duration (2s)",
		"GET /version=delay":           "delay needs a duration",
		"task qmcreate=explode":        "want fail, fail-late, kill, hang or lock",
		"ssh z2g4a=slow":               "want down",
		"GET /ok=5xx; GET /bad=teapot": `fault rule "GET /bad=teapot"`,
	} {
		fs, err := ParseFaultSpec(spec)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v (%v), want an error with %q", spec, err, fs, want)
		}
	}
	for _, empty := range []string{"", " ; ;", "# only a comment\n\n"} {
		if fs, err := ParseFaultSpec(empty); err != nil || len(fs) != 0 {
			t.Errorf("%q: %v %v, want no faults", empty, fs, err)
		}
	}
}
