package pvesim

import (
	"net/url"
	"strings"
	"testing"
)

// Parameters checked as PVE::JSONSchema checks them (property strings,
// named formats, enumerations) on routes outside qemu and storage.cfg's
// own formats: each probe sends one value PVE refuses and expects PVE's
// text for that key, and a valid one is accepted.

type propProbe struct {
	method, path string
	params       url.Values
	errs         map[string]string // key -> PVE's text; nil: no 400
}

func (c *client) probe(t *testing.T, p propProbe) resp {
	t.Helper()
	r := c.do(p.method, p.path, p.params)
	if p.errs == nil {
		if r.status == 400 {
			t.Errorf("%s %s %v: refused: %s", p.method, p.path, p.params, r.raw)
		}
		return r
	}
	if r.status != 400 || r.msg() != "Parameter verification failed.\n" {
		t.Errorf("%s %s %v: %d %s, want 400", p.method, p.path, p.params, r.status, r.raw)
		return r
	}
	got := r.errs()
	for k, want := range p.errs {
		if got[k] != want {
			t.Errorf("%s %s %v: %s = %q, want %q", p.method, p.path, p.params, k, got[k], want)
		}
	}
	for k := range got {
		if _, ok := p.errs[k]; !ok {
			t.Errorf("%s %s %v: unexpected error for %s: %q", p.method, p.path, p.params, k, got[k])
		}
	}
	return r
}

// pve-cluster Corosync.pm corosync_link_format on cluster create, join
// and node add: every failing sub-key is reported, inside "format error".
func TestPropsCorosyncLinks(t *testing.T) {
	s, _ := startSim(t, Options{ClusterName: "lab", TaskDuration: -1, NoSSH: true})
	root := rootOn(t, s, "z2g4a")
	both := "invalid format - format error\nlink0.address: invalid format - value does not look like a valid address: bad host!\n\n" +
		"link0.priority: value must have a maximum value of 255\n"
	for _, p := range []propProbe{
		{"POST", "/cluster/config", vals("clustername", "lab2", "link0", "bad host!,priority=256"), map[string]string{"link0": both}},
		{"POST", "/cluster/config", vals("clustername", "lab2", "link1", "bogus=1"),
			map[string]string{"link1": "invalid format - invalid key in comma-separated list property: bogus\n"}},
		{"POST", "/cluster/config", vals("clustername", "lab2", "link1", "priority=1"),
			map[string]string{"link1": "invalid format - format error\nlink1.address: property is missing and it is not optional\n"}},
		{"POST", "/cluster/config/join", vals("hostname", "z2g4b", "password", "x", "fingerprint", strings.Repeat("AA:", 31)+"AA", "link0", "bad host!,priority=256"),
			map[string]string{"link0": both}},
		{"POST", "/cluster/config/nodes/z2g4c", vals("link0", "priority=x"), map[string]string{
			"link0": "invalid format - format error\nlink0.address: property is missing and it is not optional\nlink0.priority: type check ('integer') failed - got 'x'\n"}},
	} {
		root.probe(t, p)
	}
}

// pve-manager NodeConfig.pm: acme, acmedomain[n] and wakeonlan.
func TestPropsNodeConfig(t *testing.T) {
	_, info := startSim(t, Options{TaskDuration: -1, NoSSH: true})
	c := newClient(t, info, "")
	for _, p := range []propProbe{
		{"PUT", "/nodes/z2g4a/config", vals("wakeonlan", "01:00:00:00:00:00"), map[string]string{
			"wakeonlan": "invalid format - format error\nwakeonlan.mac: invalid format - value does not look like a valid unicast MAC address\n\n"}},
		{"PUT", "/nodes/z2g4a/config", vals("wakeonlan", "bc:24:11:00:00:01,broadcast-address=10.0.0.300"), map[string]string{
			"wakeonlan": "invalid format - format error\nwakeonlan.broadcast-address: invalid format - value does not look like a valid IPv4 address\n\n"}},
		{"PUT", "/nodes/z2g4a/config", vals("acme", "domains=a.example.com;bad"), map[string]string{
			"acme": "invalid format - format error\nacme.domains: invalid format - value 'bad' does not look like a valid domain name!\n\n"}},
		{"PUT", "/nodes/z2g4a/config", vals("acmedomain0", "plugin=1x"), map[string]string{
			"acmedomain0": "invalid format - format error\nacmedomain0.domain: property is missing and it is not optional\n" +
				"acmedomain0.plugin: invalid format - invalid configuration ID '1x'\n\n"}},
		{"PUT", "/nodes/z2g4a/config", vals("acmedomain5", "a.example.com,bogus=1"), map[string]string{
			"acmedomain5": "invalid format - invalid key in comma-separated list property: bogus\n"}},
		{"PUT", "/nodes/z2g4a/config", vals("wakeonlan", "bc:24:11:00:00:01,bind-interface=vmbr0", "acme", "domains=a.example.com",
			"acmedomain1", "b.example.com,alias=_x.example.com"), nil},
	} {
		c.probe(t, p)
	}
	cfg := c.ok("GET", "/nodes/z2g4a/config", nil).data().(map[string]any)
	if cfg["wakeonlan"] != "bc:24:11:00:00:01,bind-interface=vmbr0" || cfg["acmedomain1"] != "b.example.com,alias=_x.example.com" {
		t.Fatalf("config %v", cfg)
	}
}

// pve-common's bwlimit format on storage create and update, and the
// properties of plugins pvesim does not model, which PVE's API declares
// for every storage type.
func TestPropsStorage(t *testing.T) {
	for _, rel := range []string{"9.1", "8.4"} {
		t.Run(rel, func(t *testing.T) {
			_, info := startSim(t, Options{PVERelease: rel, TaskDuration: -1, NoSSH: true})
			c := newClient(t, info, "")
			probes := []propProbe{
				{"POST", "/storage", vals("storage", "d1", "type", "dir", "path", "/srv/d1", "bwlimit", "clone=-1,move=x"), map[string]string{
					"bwlimit": "invalid format - format error\nbwlimit.clone: value must have a minimum value of 0\nbwlimit.move: type check ('number') failed - got 'x'\n"}},
				{"PUT", "/storage/local", vals("bwlimit", "bogus=1"), map[string]string{
					"bwlimit": "invalid format - invalid key in comma-separated list property: bogus\n"}},
				{"POST", "/storage", vals("storage", "s1", "type", "cifs", "port", "0", "smbversion", "1.0", "fingerprint", "AA:BB", "domain", strings.Repeat("d", 257)),
					map[string]string{
						"port":        "value must have a minimum value of 1",
						"smbversion":  "value '1.0' does not have a value in the enumeration 'default, 2.0, 2.1, 3, 3.0, 3.11'",
						"fingerprint": "value does not match the regex pattern",
						"domain":      "value may only be 256 characters long",
					}},
				{"PUT", "/storage/local", vals("bwlimit", "default=100,restore=1.5"), nil},
			}
			for _, p := range probes {
				c.probe(t, p)
			}
			// Valid values pass verification; the types are not simulated.
			r := c.probe(t, propProbe{"POST", "/storage", vals("storage", "s1", "type", "cifs", "server", "10.0.0.5", "share", "x",
				"domain", "LAB", "password", "pw", "smbversion", "3.11", "nocow", "1", "nowritecache", "1", "port", "8007",
				"skip-cert-verification", "1", "fingerprint", strings.Repeat("aa:", 31)+"aa"), nil})
			if r.status != 400 && r.status != 501 {
				t.Errorf("cifs create: %d %s", r.status, r.raw)
			}
			// A modelled type refuses another plugin's property as check_config does.
			r = c.do("PUT", "/storage/local", vals("domain", "LAB"))
			if r.status != 500 || !strings.Contains(r.msg(), "unexpected property 'domain'") {
				t.Errorf("dir with domain: %d %s", r.status, r.raw)
			}
			step := c.do("PUT", "/storage/local", vals("saferemove-stepsize", "3"))
			if rel == "9.1" {
				if step.errs()["saferemove-stepsize"] != "value '3' does not have a value in the enumeration '1, 2, 4, 8, 16, 32'" {
					t.Errorf("stepsize 3: %s", step.raw)
				}
			} else if step.errs()["saferemove-stepsize"] != unknownParamMsg {
				t.Errorf("8.4 stepsize: %s", step.raw)
			}
		})
	}
}

// pve-storage API2/Disks/ZFS.pm draid-config: data and spares are both
// required.
func TestPropsZFSDraidConfig(t *testing.T) {
	_, info := startSim(t, Options{TaskDuration: -1, NoSSH: true})
	c := newClient(t, info, "")
	c.probe(t, propProbe{"POST", "/nodes/z2g4a/disks/zfs", vals("name", "tank", "raidlevel", "draid", "devices", "/dev/sdb", "draid-config", "data=0"),
		map[string]string{"draid-config": "invalid format - format error\ndraid-config.data: value must have a minimum value of 1\n" +
			"draid-config.spares: property is missing and it is not optional\n"}})
	r := c.do("POST", "/nodes/z2g4a/disks/zfs", vals("name", "tank", "raidlevel", "raidz", "devices", "/dev/sdb", "draid-config", "data=2,spares=1"))
	if r.status != 500 || r.msg() != "draid-config set without using dRAID level\n" {
		t.Errorf("raidz with draid-config: %d %s", r.status, r.raw)
	}
}

func TestPropsDraidVdev(t *testing.T) {
	for _, tc := range []struct {
		level, cfg, vdev string
		need             int
	}{
		{"draid", "", "draid", 1},
		{"draid2", "data=4,spares=1", "draid2:4d:1s", 7},
		{"draid3", "data=2,spares=0", "draid3:2d", 5},
		{"raidz", "", "raidz", 0},
	} {
		if vdev, need := draidVdev(tc.level, tc.cfg); vdev != tc.vdev || need != tc.need {
			t.Errorf("%s %q: %q %d, want %q %d", tc.level, tc.cfg, vdev, need, tc.vdev, tc.need)
		}
	}
}

// pve-access-control: pve-priv-list (the release's privileges) and
// pve-realm on POST /access/ticket.
func TestPropsTicketPrivsRealm(t *testing.T) {
	for _, rel := range []string{"9.1", "8.4"} {
		t.Run(rel, func(t *testing.T) {
			_, info := startSim(t, Options{PVERelease: rel, TaskDuration: -1, NoSSH: true})
			c := newClient(t, info, "")
			c.token = ""
			base := func(kv ...string) url.Values {
				return vals(append([]string{"username", "root@pam", "password", info.RootPassword}, kv...)...)
			}
			c.probe(t, propProbe{"POST", "/access/ticket", base("realm", "1bad"), map[string]string{
				"realm": "invalid format - value does not look like a valid realm\n"}})
			c.probe(t, propProbe{"POST", "/access/ticket", base("path", "/", "privs", "Sys.Audit,Bogus.Priv"), map[string]string{
				"privs": "invalid format - invalid privilege 'Bogus.Priv'\n"}})
			gone, kept := "VM.Monitor", "VM.GuestAgent.Audit"
			if rel == "8.4" {
				gone, kept = kept, gone
			}
			c.probe(t, propProbe{"POST", "/access/ticket", base("path", "/vms/100", "privs", gone), map[string]string{
				"privs": "invalid format - invalid privilege '" + gone + "'\n"}})
			c.probe(t, propProbe{"POST", "/access/ticket", base("path", "/vms/100", "privs", kept+";VM.Audit"), nil})
		})
	}
}

// pve-manager API2/Nodes.pm verify_command_batch.
func TestPropsExecuteCommands(t *testing.T) {
	_, info := startSim(t, Options{TaskDuration: -1, NoSSH: true})
	root := rootTicketClient(t, info)
	for _, p := range []propProbe{
		{"POST", "/nodes/z2g4a/execute", vals("commands", `[{"path":"version"},{"path":"x","method":"PATCH","args":[]}]`), map[string]string{
			"commands": "invalid format - commands is not a valid array of commands: Parameter verification failed.\n" +
				"[0].method: property is missing and it is not optional\n[1].args: type check ('object') failed\n" +
				"[1].method: value does not match the regex pattern\n"}},
		{"POST", "/nodes/z2g4a/execute", vals("commands", `{"path":"version"}`), map[string]string{
			"commands": "invalid format - commands is not a valid array of commands: Parameter verification failed.\n_root: type check ('array') failed\n"}},
	} {
		root.probe(t, p)
	}
	r := root.do("POST", "/nodes/z2g4a/execute", vals("commands", "not json"))
	if msg, _ := r.errs()["commands"].(string); !strings.HasPrefix(msg, "invalid format - commands param did not contain valid JSON: ") {
		t.Errorf("not json: %s", r.raw)
	}
	root.probe(t, propProbe{"POST", "/nodes/z2g4a/execute", vals("commands", `[{"path":"version","method":"GET"}]`), nil})
}

// pve-common verify_task_status_type, as a list, on the task list.
func TestPropsTaskStatusFilter(t *testing.T) {
	_, info := startSim(t, Options{TaskDuration: -1, NoSSH: true})
	c := newClient(t, info, "")
	c.probe(t, propProbe{"GET", "/nodes/z2g4a/tasks", vals("statusfilter", "ok,bogus"), map[string]string{
		"statusfilter": "invalid format - invalid status 'bogus'\n"}})
	c.probe(t, propProbe{"GET", "/nodes/z2g4a/tasks", vals("statusfilter", "OK,error;Warning unknown"), nil})
}

// pve-manager API2/Ceph/Pool.pm ec_format: checked with the parameters;
// a named profile must exist, and an EC pool is not simulated.
func TestPropsCephErasureCoding(t *testing.T) {
	_, info := startSim(t, Options{ClusterName: "lab", TaskDuration: -1, CephTimeScale: -1, NoSSH: true})
	c := newClient(t, info, "")
	c.ok("POST", "/nodes/z2g4a/ceph/init", vals("network", "172.27.2.0/24"))
	c.waitTask("z2g4a", c.ok("POST", "/nodes/z2g4a/ceph/mon/z2g4a", nil).data().(string))
	c.probe(t, propProbe{"POST", "/nodes/z2g4a/ceph/pool", vals("name", "ec", "erasure-coding", "k=1"), map[string]string{
		"erasure-coding": "invalid format - format error\nerasure-coding.k: value must have a minimum value of 2\n" +
			"erasure-coding.m: property is missing and it is not optional\n"}})
	r := c.do("POST", "/nodes/z2g4a/ceph/pool", vals("name", "ec", "erasure-coding", "k=2,m=1,profile=mine"))
	if r.status != 500 || r.msg() != "Erasure code profile 'mine' does not exist.\n" {
		t.Errorf("profile: %d %s", r.status, r.raw)
	}
	r = c.do("POST", "/nodes/z2g4a/ceph/pool", vals("name", "ec", "erasure-coding", "k=2,m=1,failure-domain=osd"))
	if r.status != 500 || !strings.Contains(r.msg(), "pvesim does not simulate erasure-coded pools") {
		t.Errorf("ec pool: %d %s", r.status, r.raw)
	}
}

// The ACME plugin `api` enumeration is the release's list of DNS APIs.
func TestPropsACMEPluginAPI(t *testing.T) {
	for _, rel := range []string{"9.1", "8.4"} {
		t.Run(rel, func(t *testing.T) {
			_, info := startSim(t, Options{PVERelease: rel, TaskDuration: -1, NoSSH: true})
			c := newClient(t, info, "")
			r9, err := lookupRelease(rel)
			if err != nil {
				t.Fatal(err)
			}
			apis := acmeDNSAPIs(r9)
			enum := "value 'bogus' does not have a value in the enumeration '" + strings.Join(apis, ", ") + "'"
			c.probe(t, propProbe{"POST", "/cluster/acme/plugins", vals("id", "p1", "type", "dns", "api", "bogus"), map[string]string{"api": enum}})
			c.probe(t, propProbe{"PUT", "/cluster/acme/plugins/p1", vals("api", "bogus"), map[string]string{"api": enum}})
			r := c.do("POST", "/cluster/acme/plugins", vals("id", "p1", "type", "dns", "api", "hetznercloud"))
			if rel == "9.1" && r.status != 200 {
				t.Errorf("9.1 hetznercloud: %d %s", r.status, r.raw)
			}
			if rel == "8.4" && !strings.HasPrefix(r.errs()["api"].(string), "value 'hetznercloud' does not have a value in the enumeration '1984hosting, acmedns,") {
				t.Errorf("8.4 hetznercloud: %s", r.raw)
			}
			c.probe(t, propProbe{"POST", "/cluster/acme/plugins", vals("id", "p2", "type", "dns", "api", "pdns"), nil})
		})
	}
}

// JSON::XS's texts for what decode_json refuses in verify_command_batch.
func TestPropsCommandBatchJSONErrors(t *testing.T) {
	const at = " at /usr/share/perl5/PVE/API2/Nodes.pm line 99."
	for in, want := range map[string]string{
		"not json":                     `'null' expected, at character offset 0 (before "not json")`,
		"":                             `malformed JSON string, neither tag, array, object, number, string or atom, at character offset 0 (before "(end of string)")`,
		`[1,]`:                         `malformed JSON string, neither tag, array, object, number, string or atom, at character offset 3 (before "]")`,
		`[1 2]`:                        `, or ] expected while parsing array, at character offset 3 (before "2]")`,
		`{"a" 1}`:                      `':' expected, at character offset 5 (before "1}")`,
		`[{"path":"x"}] [] `:           `garbage after JSON object, at character offset 15 (before "[] ")`,
		`["abcdefghijklmnopqrstuvwxyz`: `unexpected end of string while parsing JSON string, at character offset 28 (before "(end of string)")`,
		`[-x]`:                         `malformed number (no digits after initial minus), at character offset 2 (before "x]")`,
		`xyzxyzxyzxyzxyzxyzxyzxyz`:     `malformed JSON string, neither tag, array, object, number, string or atom, at character offset 0 (before "xyzxyzxyzxyzxyzxyzxy...")`,
	} {
		if got := verifyCommandBatch(in); got != "commands param did not contain valid JSON: "+want+at {
			t.Errorf("%q: %q", in, got)
		}
	}
}
