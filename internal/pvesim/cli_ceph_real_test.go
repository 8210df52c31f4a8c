package pvesim

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// The `ceph` commands the provider runs over SSH, asked of pvesim's model
// and of a real Ceph cluster (make testlab: Ceph 16 in network namespaces
// named like pvesim's nodes, two OSDs per host, an sshd per host). Where
// they disagree the model is wrong, unless the difference is Pacific
// against the Squid PVE ships, which the case says.
//
// Without PVESIM_REAL_CEPH (the lab's directory) the test is skipped: make
// test has no real Ceph; make testlab runs it.

// realCephTarget dials the real sshd of one lab host.
func realCephTarget(t *testing.T, dir, node string) *sshTarget {
	t.Helper()
	key, err := os.ReadFile(filepath.Join(dir, "ssh", "client_key"))
	if err != nil {
		t.Fatalf("the lab's client key: %v", err)
	}
	signer, err := ssh.ParsePrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	known, err := os.ReadFile(filepath.Join(dir, "ssh", "known_hosts"))
	if err != nil {
		t.Fatal(err)
	}
	addr, hostKey := "", ssh.PublicKey(nil)
	pub, err := os.ReadFile(filepath.Join(dir, "ssh", node, "host_key.pub"))
	if err != nil {
		t.Fatalf("no lab host %s: %v", node, err)
	}
	if hostKey, _, _, _, err = ssh.ParseAuthorizedKey(pub); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(known), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[1]+" "+f[2] == strings.Join(strings.Fields(string(pub))[:2], " ") {
			addr = f[0] + ":22"
		}
	}
	c, err := ssh.Dial("tcp", addr, &ssh.ClientConfig{User: "root", Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.FixedHostKey(hostKey), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("ssh root@%s (%s): %v", node, addr, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &sshTarget{t: t, c: c, node: node}
}

func realCephDir(t *testing.T) string {
	dir := os.Getenv("PVESIM_REAL_CEPH")
	if dir == "" {
		t.Skip("needs a real Ceph lab: make testlab (PVESIM_REAL_CEPH=<lab dir>)")
	}
	return dir
}

// answer is what one command gave.
type answer struct {
	out, err string
	code     int
}

func (a answer) String() string {
	return fmt.Sprintf("exit %d, stdout %q, stderr %q", a.code, shortText(a.out), shortText(a.err))
}

func shortText(s string) string {
	if len(s) > 400 {
		return s[:400] + "..."
	}
	return s
}

// jsonPaths lists every key path of a JSON document with the kind of its
// value; array elements share the path "[]".
func jsonPaths(v any, prefix string, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		out[prefix] = "object"
		for k, e := range x {
			jsonPaths(e, prefix+"."+k, out)
		}
	case []any:
		out[prefix] = "array"
		for _, e := range x {
			jsonPaths(e, prefix+"[]", out)
		}
	case string:
		out[prefix] = "string"
	case float64:
		out[prefix] = "number"
	case bool:
		out[prefix] = "bool"
	case nil:
		out[prefix] = "null"
	}
}

// shapeDiff reports paths pvesim prints that real Ceph does not, or prints
// with another kind. Real Ceph prints far more than pvesim models; that
// is not a disagreement. Object keys that are names (hosts, check codes)
// are compared under "*".
func shapeDiff(sim, lab string, nameKeys ...string) []string {
	parse := func(s string) (map[string]string, error) {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			return nil, err
		}
		paths := map[string]string{}
		jsonPaths(v, "", paths)
		out := map[string]string{}
		for p, k := range paths {
			for _, n := range nameKeys {
				if i := strings.Index(p, n+"."); i >= 0 {
					rest := p[i+len(n)+1:]
					if j := strings.IndexAny(rest, ".["); j >= 0 {
						rest = "*" + rest[j:]
					} else {
						rest = "*"
					}
					p = p[:i+len(n)+1] + rest
				}
			}
			out[p] = k
		}
		return out, nil
	}
	sp, err := parse(sim)
	if err != nil {
		return []string{"pvesim's output is not JSON: " + err.Error()}
	}
	rp, err := parse(lab)
	if err != nil {
		return []string{"real output is not JSON: " + err.Error()}
	}
	var diffs []string
	for p, k := range sp {
		switch rk, ok := rp[p]; {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("%s (%s) only in pvesim", p, k))
		case rk != k && rk != "null" && k != "null":
			diffs = append(diffs, fmt.Sprintf("%s: pvesim %s, real %s", p, k, rk))
		}
	}
	sort.Strings(diffs)
	return diffs
}

// A case is one command and what must agree. Commands run as root on
// z2g4b, a host with a monitor, a manager and osd.2/osd.3.
type cephConformanceCase struct {
	line string
	// same: "exit" (exit status), "stdout" (+ exit), "stderr" (+ exit),
	// "stderr#" (stderr with numbers masked: PG counts follow each
	// cluster's own CRUSH placement), "shape" (JSON shape + exit),
	// "dump" (the config dump's entries for dumpNames, exactly).
	same     string
	nameKeys []string
	// keys are top-level JSON keys whose values must be equal.
	keys []string
	// ignore are shape paths that differ because this lab runs Pacific and
	// PVE ships Squid; pacific is Pacific's stderr where pvesim keeps
	// Squid's. note says why.
	ignore  []string
	pacific string
	note    string
}

// dumpNames are the options the cases set.
var dumpNames = map[string]bool{"osd_memory_target": true, "bdev_enable_discard": true, "osd_max_backfills": true}

const squidServices = "Squid's options (src/common/options/*.yaml.in) name their services; Pacific's mostly do not"

var cephConformanceCases = []cephConformanceCase{
	{line: "ceph config set osd osd_memory_target 1G", same: "stdout"},
	{line: "ceph config get osd.0 osd_memory_target", same: "stdout"},
	{line: "ceph config set osd bdev_enable_discard 1", same: "stdout"},
	{line: "ceph config set osd.3 osd_max_backfills 3", same: "stdout"},
	{line: "ceph config get osd.3 osd_max_backfills", same: "stdout"},
	{line: "ceph config set osd.3 osd_max_backfills 2K", same: "stdout"},
	{line: "ceph config get osd.3 osd_max_backfills", same: "stdout"},
	{line: "ceph config dump --format json", same: "dump"},
	{line: "ceph config rm osd.3 osd_max_backfills", same: "stdout"},
	{line: "ceph config dump", same: "exit"},
	{line: "ceph config set osd osd_memory_target 536870912", same: "stderr"},
	{line: "ceph config set osd no_such_option 1", same: "stderr"},
	{line: "ceph config set osd osd_max_backfills lots", same: "stderr"},
	{line: "ceph config set osd osd_max_backfills 10B", same: "stderr"},
	{line: "ceph config set osd osd_max_backfills -1", same: "stderr"},
	{line: "ceph config set osd osd_memory_target lots", same: "stderr"},
	{line: "ceph config set osd osd_memory_target 1X", same: "stderr",
		pacific: "Error EINVAL: error parsing value: strict_iecstrtoll: unit prefix not recognized",
		note:    "Ceph after Pacific names the unit (common/strtol.cc)"},
	{line: "ceph config set osd osd_memory_target 1.5G", same: "stderr"},
	{line: "ceph config set osd bdev_enable_discard maybe", same: "stderr"},
	{line: "ceph config set osd osd_recovery_sleep_hdd abc", same: "stderr"},
	{line: "ceph config set osd osd_recovery_sleep_hdd 0.1x", same: "stderr"},
	{line: "ceph config help osd_memory_target --format json", same: "shape",
		keys:   []string{"name", "type", "level", "default", "min", "max", "can_update_at_runtime", "flags"},
		ignore: []string{".services[]"}, note: squidServices},
	{line: "ceph config help bdev_enable_discard --format json", same: "shape",
		keys:   []string{"name", "type", "default", "min", "max", "can_update_at_runtime", "flags"},
		ignore: []string{".services[]", ".desc"}, note: squidServices},
	{line: "ceph config help osd_max_backfills --format json", same: "shape",
		keys:   []string{"name", "type", "default", "min", "max", "can_update_at_runtime", "flags"},
		ignore: []string{".services[]"}, note: squidServices},
	{line: "ceph config help public_network --format json", same: "shape",
		keys: []string{"name", "type", "default", "can_update_at_runtime", "flags", "services"}},
	{line: "ceph config help no_such_option --format json", same: "stderr"},
	{line: "ceph health --format json", same: "shape", nameKeys: []string{"checks"}},
	{line: "ceph status --format json", same: "shape", nameKeys: []string{"checks"}},
	{line: "ceph osd dump --format json", same: "shape", nameKeys: []string{"crush_node_flags"}},
	{line: "ceph quorum_status --format json", same: "shape", keys: []string{"quorum_names"}},
	{line: "ceph mon dump --format json", same: "shape", ignore: []string{".min_mon_release", ".min_mon_release_name"},
		note: "the release is Squid's"},
	{line: "ceph mgr dump --format json", same: "shape", nameKeys: []string{"services", "metadata"}},
	{line: "ceph osd ok-to-stop 2", same: "stderr#"},
	{line: "ceph osd ok-to-stop 2 3", same: "stderr#"},
	{line: "ceph osd ok-to-stop 0 2", same: "stderr#"},
	{line: "ceph osd ok-to-stop 9", same: "stderr"},
	{line: "ceph mon ok-to-stop z2g4a", same: "stderr"},
	{line: "ceph mon ok-to-stop z2g4a z2g4b", same: "stderr"},
	{line: "ceph osd safe-to-destroy 2", same: "stderr#"},
	{line: "ceph osd safe-to-destroy 9", same: "stderr"},
	{line: "ceph osd ok-to-stop 0 2 --format json", same: "shape"},
	{line: "ceph osd destroy 2", same: "stderr#"},
	{line: "ceph osd destroy 2 --yes-i-really-mean-it", same: "stderr"},
	{line: "ceph osd set noout", same: "stderr"},
	{line: "ceph osd unset noout", same: "stderr"},
	{line: "ceph osd set-group noout z2g4b", same: "stderr"},
	{line: "ceph osd dump --format json", same: "shape", nameKeys: []string{"crush_node_flags"}, keys: []string{"crush_node_flags"}},
	{line: "ceph health --format json", same: "shape", nameKeys: []string{"checks"}},
	{line: "ceph osd unset-group noout z2g4b", same: "stderr"},
	// Pacific's manager makes device_health_metrics, Squid's .mgr; the model has neither yet.
	{line: "ceph osd pool ls --format json", same: "exit"},
	{line: "ceph osd pool get rbd size --format json", same: "shape", keys: []string{"pool", "size"}},
	{line: "ceph osd pool get rbd size", same: "stdout"},
	{line: "ceph osd pool set rbd size 11", same: "stderr"},
	{line: "ceph osd pool set rbd min_size 4", same: "stderr"},
	{line: "ceph osd pool set nosuch size 3", same: "stderr"},
	{line: "ceph osd pool get rbd pg_num_min", same: "stderr"},
	{line: "ceph config ls --format json", same: "exit"},
	{line: "ceph no-such-command", same: "exit"},
}

var digitsRE = regexp.MustCompile(`[0-9]+`)

func TestRealCephCLIConformance(t *testing.T) {
	dir := realCephDir(t)
	_, info, _ := cephLab(t)
	sim := sshAs(t, info, "z2g4b", "root")
	lab := realCephTarget(t, dir, "z2g4b")
	// the cases' settings go again; the lab keeps its own in global
	cleanup := func() {
		for _, l := range []string{"ceph osd unset noout", "ceph osd unset-group noout z2g4b", "ceph config rm osd.3 osd_max_backfills",
			"ceph config rm osd bdev_enable_discard", "ceph config rm osd osd_memory_target"} {
			lab.run(l, nil)
		}
	}
	cleanup()
	t.Cleanup(cleanup)
	// the same pool as cephLab's, so that PGs exist on every OSD
	if _, _, code := lab.run("ceph osd pool ls | grep -qx rbd", nil); code != 0 {
		for _, l := range []string{"ceph osd pool create rbd 32", "ceph osd pool application enable rbd rbd"} {
			if _, errs, code := lab.run(l, nil); code != 0 {
				t.Fatalf("%s: %s", l, errs)
			}
		}
		t.Cleanup(func() { lab.run("ceph osd pool rm rbd rbd --yes-i-really-really-mean-it", nil) })
		waitRealClean(t, lab)
	}
	for _, c := range cephConformanceCases {
		var s, r answer
		s.out, s.err, s.code = sim.run(c.line, nil)
		r.out, r.err, r.code = lab.run(c.line, nil)
		if s.code != r.code {
			t.Errorf("%s: exit status differs\npvesim %v\n  real %v", c.line, s, r)
			continue
		}
		for _, d := range conformanceDiffs(c, s, r) {
			t.Errorf("%s: %s", c.line, d)
		}
	}
}

func conformanceDiffs(c cephConformanceCase, s, r answer) []string {
	switch c.same {
	case "stdout":
		if s.out != r.out {
			return []string{fmt.Sprintf("stdout differs\npvesim %v\n  real %v", s, r)}
		}
	case "stderr", "stderr#":
		se, re := strings.TrimSpace(s.err), strings.TrimSpace(r.err)
		if c.same == "stderr#" {
			se, re = digitsRE.ReplaceAllString(se, "N"), digitsRE.ReplaceAllString(re, "N")
		}
		if se != re && (c.pacific == "" || re != c.pacific) {
			return []string{fmt.Sprintf("stderr differs\npvesim %q\n  real %q", s.err, r.err)}
		}
	case "dump":
		pick := func(out string) string {
			var all, keep []map[string]any
			if err := json.Unmarshal([]byte(out), &all); err != nil {
				return "not JSON: " + out
			}
			for _, e := range all {
				// the lab's own osd_memory_target (section global) is not the test's
				if n, _ := e["name"].(string); dumpNames[n] && (n != "osd_memory_target" || e["section"] != "global") {
					keep = append(keep, e)
				}
			}
			b, _ := json.Marshal(keep)
			return string(b)
		}
		if ps, pr := pick(s.out), pick(r.out); ps != pr {
			return []string{fmt.Sprintf("config dump entries differ\npvesim %s\n  real %s", ps, pr)}
		}
	case "shape":
		var diffs []string
		for _, d := range shapeDiff(s.out, r.out, c.nameKeys...) {
			ignored := false
			for _, p := range c.ignore {
				ignored = ignored || strings.HasPrefix(d, p+" ")
			}
			if !ignored {
				diffs = append(diffs, d)
			}
		}
		var sm, rm map[string]any
		_ = json.Unmarshal([]byte(s.out), &sm)
		_ = json.Unmarshal([]byte(r.out), &rm)
		for _, k := range c.keys {
			sv, _ := json.Marshal(sm[k])
			rv, _ := json.Marshal(rm[k])
			if string(sv) != string(rv) {
				diffs = append(diffs, fmt.Sprintf("%s: pvesim %s, real %s", k, sv, rv))
			}
		}
		if len(diffs) > 0 {
			return []string{"JSON differs:\n  " + strings.Join(diffs, "\n  ")}
		}
	}
	return nil
}

// waitRealClean waits (bounded) until every PG of the real cluster is
// active+clean.
func waitRealClean(t *testing.T, lab *sshTarget) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out, _, _ := lab.run("ceph pg stat --format json", nil)
		var st struct {
			PGSummary struct {
				NumPGs  int `json:"num_pgs"`
				ByState []struct {
					Name string `json:"name"`
					Num  int    `json:"num"`
				} `json:"num_pg_by_state"`
			} `json:"pg_summary"`
		}
		if json.Unmarshal([]byte(out), &st) == nil && st.PGSummary.NumPGs > 0 && len(st.PGSummary.ByState) == 1 &&
			st.PGSummary.ByState[0].Name == "active+clean" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("real PGs not active+clean after 2 minutes: %s", out)
		}
		time.Sleep(time.Second)
	}
}
