package pvesim

import (
	"bufio"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const seedSpec = "read /nodes/*/status=503:50%; read /version=503:50%"

// The two paths seedSpec faults.
const seedPathA, seedPathB = "/nodes/z2g4a/status", "/version"

// statuses sends n GETs of each of seedSpec's paths, in the order given by
// interleave (true: a, b, a, b...; false: all a, then all b), and returns
// each path's statuses in its own order.
func statuses(c *client, n int, interleave bool) map[string][]int {
	a, b := seedPathA, seedPathB
	out := map[string][]int{}
	get := func(p string) { out[p] = append(out[p], c.do("GET", p, nil).status) }
	if interleave {
		for range n {
			get(a)
			get(b)
		}
		return out
	}
	for range n {
		get(a)
	}
	for range n {
		get(b)
	}
	return out
}

func seededSim(t *testing.T, seed int64) (*Sim, *client) {
	fs, err := ParseFaultSpec(seedSpec)
	if err != nil {
		t.Fatal(err)
	}
	s, info := startSim(t, Options{NoSSH: true, TaskDuration: -1, Faults: fs, FaultSeed: seed})
	return s, newClient(t, info, "")
}

func TestFaultSeedDecidesTheFaults(t *testing.T) {
	const n = 40
	s1, c1 := seededSim(t, 7)
	got1 := statuses(c1, n, true)
	// The same seed: the same faults for each path's requests, even in
	// another interleaving (as Terraform's parallel walk would send them).
	_, c2 := seededSim(t, 7)
	if got2 := statuses(c2, n, false); !reflect.DeepEqual(got1, got2) {
		t.Fatalf("seed 7 twice:\n%v\n%v", got1, got2)
	}
	for p, st := range got1 {
		faults := 0
		for _, code := range st {
			if code == 503 {
				faults++
			} else if code != 200 {
				t.Fatalf("%s: status %d", p, code)
			}
		}
		if faults == 0 || faults == n {
			t.Errorf("%s: %d of %d faulted at 50%%", p, faults, n)
		}
	}
	_, c3 := seededSim(t, 8)
	if got3 := statuses(c3, n, true); reflect.DeepEqual(got1, got3) {
		t.Fatalf("seeds 7 and 8 gave the same faults: %v", got1)
	}
	// Replacing the faults at runtime starts their draws afresh.
	if err := s1.SetFaultSpec(seedSpec); err != nil {
		t.Fatal(err)
	}
	if again := statuses(c1, n, false); !reflect.DeepEqual(got1, again) {
		t.Fatalf("after SetFaultSpec:\n%v\n%v", got1, again)
	}
	// Clearing them: every request served.
	s1.ClearFaults()
	if len(s1.Faults()) != 0 || s1.FaultSpec() != "" {
		t.Fatalf("after ClearFaults: %+v", s1.Faults())
	}
	for p, st := range statuses(c1, 10, true) {
		for _, code := range st {
			if code != 200 {
				t.Fatalf("%s after ClearFaults: %d", p, code)
			}
		}
	}
}

func TestFaultSpecAtRuntime(t *testing.T) {
	s, info := startSim(t, Options{NoSSH: true, TaskDuration: -1})
	c := newClient(t, info, "")
	if err := s.SetFaultSpec("GET /version=502:2x"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetFaultSpec("GET /version=teapot"); err == nil {
		t.Fatal("a bad spec was taken")
	}
	if got := s.FaultSpec(); got != "GET /version=502:2x\n" {
		t.Fatalf("a bad spec changed the faults: %q", got)
	}
	for i, want := range []int{502, 502, 200} {
		if r := c.do("GET", "/version", nil); r.status != want {
			t.Fatalf("request %d: %d, want %d", i, r.status, want)
		}
	}
	// Faults set from Go are listed too, as comments.
	s.InjectFault(Fault{Path: "^/cluster/status$", Kind: FaultError, Status: 500})
	if got := s.FaultSpec(); !strings.HasPrefix(got, "# set from Go: error") {
		t.Fatalf("FaultSpec: %q", got)
	}
	if err := s.SetFaultSpec(""); err != nil || len(s.Faults()) != 0 {
		t.Fatalf("an empty spec clears: %v %+v", err, s.Faults())
	}
}

func TestNoFaultsChangeNothing(t *testing.T) {
	logs := t.TempDir()
	run := func(opts Options) []string {
		s, info := startSim(t, opts)
		c := newClient(t, info, "")
		var out []string
		for _, p := range []string{"/version", "/storage", "/pools", "/nodes/z2g4a/network", "/nope"} {
			r := c.do("GET", p, nil)
			out = append(out, p+" "+r.reason+" "+string(r.raw))
		}
		c.ok("POST", "/pools", vals("poolid", "p1"))
		for _, r := range s.Requests() {
			if r.Fault != "" || r.FaultRule != "" {
				t.Errorf("unfaulted request marked: %+v", r)
			}
		}
		return out
	}
	plain := run(Options{NoSSH: true, TaskDuration: -1, RequestLogPath: filepath.Join(logs, "plain.jsonl")})
	// Faults that match none of these requests change none of the answers.
	fs, err := ParseFaultSpec("GET /cluster/**=5xx; task qmcreate=fail; ssh *=down")
	if err != nil {
		t.Fatal(err)
	}
	other := run(Options{NoSSH: true, TaskDuration: -1, Faults: fs, FaultSeed: 3, RequestLogPath: filepath.Join(logs, "other.jsonl")})
	if !reflect.DeepEqual(plain, other) {
		t.Fatalf("answers differ:\n%q\n%q", plain, other)
	}
	for _, name := range []string{"plain.jsonl", "other.jsonl"} {
		f, err := os.Open(filepath.Join(logs, name))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if strings.Contains(sc.Text(), `"fault`) {
				t.Errorf("%s: %s", name, sc.Text())
			}
		}
		f.Close()
	}
}
