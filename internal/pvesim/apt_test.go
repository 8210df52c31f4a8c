package pvesim

import (
	"reflect"
	"strings"
	"testing"
)

func aptStatus(t *testing.T, c *client, node string) (map[string]any, map[string]any) {
	t.Helper()
	d := c.ok("GET", "/nodes/"+node+"/apt/repositories", nil).data().(map[string]any)
	st := map[string]any{}
	for _, e := range d["standard-repos"].([]any) {
		m := e.(map[string]any)
		st[m["handle"].(string)] = m["status"]
	}
	return d, st
}

func aptFileByPath(d map[string]any, path string) map[string]any {
	for _, f := range d["files"].([]any) {
		if m := f.(map[string]any); m["path"] == path {
			return m
		}
	}
	return nil
}

func TestAPTFreshNode91(t *testing.T) {
	_, info := startSim(t, Options{})
	c := newClient(t, info, "")
	d, st := aptStatus(t, c, "z2g4a")
	var paths []string
	for _, f := range d["files"].([]any) {
		m := f.(map[string]any)
		paths = append(paths, m["path"].(string))
		if m["file-type"] != "sources" || len(m["digest"].([]any)) != 32 {
			t.Errorf("file %v", m)
		}
	}
	if want := []string{"/etc/apt/sources.list.d/ceph.sources", "/etc/apt/sources.list.d/debian.sources", "/etc/apt/sources.list.d/pve-enterprise.sources"}; !reflect.DeepEqual(paths, want) {
		t.Fatalf("files %v", paths)
	}
	want := map[string]any{"enterprise": float64(1), "no-subscription": nil, "test": nil,
		"ceph-squid-enterprise": float64(1), "ceph-squid-no-subscription": nil, "ceph-squid-test": nil}
	if !reflect.DeepEqual(st, want) {
		t.Fatalf("standard repos %v", st)
	}
	if dg, _ := d["digest"].(string); len(dg) != 64 {
		t.Fatalf("digest %q", d["digest"])
	}
	ent := aptFileByPath(d, "/etc/apt/sources.list.d/pve-enterprise.sources")["repositories"].([]any)[0].(map[string]any)
	if !reflect.DeepEqual(ent["URIs"], []any{"https://enterprise.proxmox.com/debian/pve"}) || ent["Enabled"] != float64(1) ||
		ent["FileType"] != "sources" || !reflect.DeepEqual(ent["Components"], []any{"pve-enterprise"}) {
		t.Fatalf("enterprise entry %v", ent)
	}
}

// The reference lab: no-subscription on, enterprise off, Ceph Squid
// no-subscription on, Ceph Squid enterprise off.
func TestAPTReferenceLabChanges(t *testing.T) {
	s, info := startSim(t, Options{})
	c := newClient(t, info, "")
	d, _ := aptStatus(t, c, "z2g4a")
	digest := d["digest"].(string)

	c.ok("PUT", "/nodes/z2g4a/apt/repositories", vals("handle", "no-subscription", "digest", digest))
	// The old digest no longer matches.
	r := c.do("PUT", "/nodes/z2g4a/apt/repositories", vals("handle", "ceph-squid-no-subscription", "digest", digest))
	if r.status != 500 || r.msg() != "detected modified configuration - file changed by other user? Try again.\n" {
		t.Fatalf("stale digest: %d %q", r.status, r.msg())
	}
	c.ok("PUT", "/nodes/z2g4a/apt/repositories", vals("handle", "ceph-squid-no-subscription"))
	c.ok("POST", "/nodes/z2g4a/apt/repositories", vals("path", "/etc/apt/sources.list.d/pve-enterprise.sources", "index", "0", "enabled", "0"))
	c.ok("POST", "/nodes/z2g4a/apt/repositories", vals("path", "/etc/apt/sources.list.d/ceph.sources", "index", "0", "enabled", "0"))

	d, st := aptStatus(t, c, "z2g4a")
	want := map[string]any{"enterprise": float64(0), "no-subscription": float64(1), "test": nil,
		"ceph-squid-enterprise": float64(0), "ceph-squid-no-subscription": float64(1), "ceph-squid-test": nil}
	if !reflect.DeepEqual(st, want) {
		t.Fatalf("standard repos %v", st)
	}
	// PVE 9 adds no-subscription to proxmox.sources, Ceph to ceph.sources.
	pm := aptFileByPath(d, "/etc/apt/sources.list.d/proxmox.sources")
	if pm == nil {
		t.Fatal("no proxmox.sources")
	}
	ns := pm["repositories"].([]any)[0].(map[string]any)
	if !reflect.DeepEqual(ns["Components"], []any{"pve-no-subscription"}) || !reflect.DeepEqual(ns["Suites"], []any{"trixie"}) ||
		!reflect.DeepEqual(ns["URIs"], []any{"http://download.proxmox.com/debian/pve"}) {
		t.Fatalf("no-subscription entry %v", ns)
	}
	ceph := aptFileByPath(d, "/etc/apt/sources.list.d/ceph.sources")["repositories"].([]any)
	if len(ceph) != 2 {
		t.Fatalf("ceph.sources %v", ceph)
	}
	// deb822 keeps the disabled state as an Enabled option.
	opts := ceph[0].(map[string]any)["Options"].([]any)
	if last := opts[len(opts)-1].(map[string]any); last["Key"] != "Enabled" || !reflect.DeepEqual(last["Values"], []any{"false"}) {
		t.Fatalf("options %v", opts)
	}

	// Adding a configured but disabled handle enables it instead of adding
	// a second entry.
	c.ok("PUT", "/nodes/z2g4a/apt/repositories", vals("handle", "enterprise"))
	d, st = aptStatus(t, c, "z2g4a")
	if st["enterprise"] != float64(1) || len(aptFileByPath(d, "/etc/apt/sources.list.d/pve-enterprise.sources")["repositories"].([]any)) != 1 {
		t.Fatalf("re-add enterprise: %v", st)
	}
	// Repositories are per node.
	if _, st := aptStatus(t, tokenOn(t, s, "z2g4b"), "z2g4b"); st["no-subscription"] != nil {
		t.Fatalf("z2g4b changed too: %v", st)
	}
}

func TestAPTErrors(t *testing.T) {
	_, info := startSim(t, Options{})
	c := newClient(t, info, "")
	for _, tc := range []struct {
		method string
		params []string
		status int
		want   string
	}{
		{"POST", []string{"path", "/etc/apt/sources.list.d/nope.sources", "index", "0", "enabled", "1"}, 500, "invalid path - /etc/apt/sources.list.d/nope.sources\n"},
		{"POST", []string{"path", "/etc/apt/sources.list.d/ceph.sources", "index", "3", "enabled", "1"}, 500, "invalid index - 3\n"},
		{"POST", []string{"path", "/etc/apt/sources.list.d/ceph.sources", "enabled", "1"}, 400, "Parameter verification failed.\n"},
		{"POST", []string{"path", "/etc/apt/sources.list.d/ceph.sources", "index", "0", "enabled", "true"}, 400, "Parameter verification failed.\n"},
		{"PUT", []string{}, 400, "Parameter verification failed.\n"},
	} {
		r := c.do(tc.method, "/nodes/z2g4a/apt/repositories", vals(tc.params...))
		if r.status != tc.status || r.msg() != tc.want {
			t.Errorf("%s %v: %d %q", tc.method, tc.params, r.status, r.msg())
		}
	}
	r := c.do("PUT", "/nodes/z2g4a/apt/repositories", vals("handle", "ceph-tentacle-no-subscription"))
	if r.status != 500 || !strings.Contains(r.msg(), "ceph-tentacle-no-subscription") || !strings.Contains(r.msg(), "`ceph-squid-no-subscription`") {
		t.Fatalf("unknown handle: %d %q", r.status, r.msg())
	}
}

func TestAPTFreshNode84(t *testing.T) {
	_, info := startSim(t, Options{PVERelease: "8.4"})
	c := newClient(t, info, "")
	d, st := aptStatus(t, c, "z2g4a")
	if len(st) != 12 || st["ceph-quincy-no-subscription"] != nil || st["ceph-reef-test"] != nil || st["enterprise"] != float64(1) || st["ceph-squid-enterprise"] != float64(1) {
		t.Fatalf("standard repos %v", st)
	}
	if f := aptFileByPath(d, "/etc/apt/sources.list"); f == nil || f["file-type"] != "list" || len(f["repositories"].([]any)) != 3 {
		t.Fatalf("sources.list %v", f)
	}
	c.ok("PUT", "/nodes/z2g4a/apt/repositories", vals("handle", "no-subscription"))
	c.ok("POST", "/nodes/z2g4a/apt/repositories", vals("path", "/etc/apt/sources.list.d/pve-enterprise.list", "index", "0", "enabled", "0"))
	d, st = aptStatus(t, c, "z2g4a")
	repos := aptFileByPath(d, "/etc/apt/sources.list")["repositories"].([]any)
	last := repos[len(repos)-1].(map[string]any)
	if len(repos) != 4 || !reflect.DeepEqual(last["Components"], []any{"pve-no-subscription"}) || last["Options"] != nil || st["no-subscription"] != float64(1) || st["enterprise"] != float64(0) {
		t.Fatalf("after changes: %v %v", repos, st)
	}
}
