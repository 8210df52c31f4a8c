package pvesim

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Every named format pvesim checks, with a value PVE accepts and one it
// refuses, and the text its verifier dies with.
func TestCheckFormatNamedFormats(t *testing.T) {
	cases := []struct {
		format, good, bad, msg string
	}{
		{"pve-storage-path", "/srv/data", "relative/path", "value does not look like a valid absolute path"},
		{"address-list", "1.1.1.1 ns.lab", "1.1.1.1,bad_host", "value does not look like a valid address: bad_host"},
		{"urlencoded", "ssh-ed25519%20AAAA", "a b", "invalid urlencoded string: a b"},
		{"disk-size", "32G", "32GB", "value does not look like a valid disk size: 32GB"},
		{"disk-size", "1.5TiB", "G", "value does not look like a valid disk size: G"},
		{"pve-bridge-id", "vmbr0", "vm/br", "invalid bridge ID 'vm/br'"},
		{"pve-storage-path", "/a;b", "/;x", "value does not look like a valid absolute path"}, // only the start is anchored
		{"pve-storage-id", "local-lvm", "1abc", "storage ID '1abc' contains illegal characters"},
		{"pve-storage-id", "ab", "a", "storage ID 'a' cannot be shorter than 2 characters"},
		{"pve-storage-id-list", "local,nfs.1", "local,x_", "storage ID 'x_' contains illegal characters"},
		{"CIDR", "10.0.0.0/24", "10.0.0.0/7", "value does not look like a valid CIDR network"},
		{"CIDR", "::ffff:10.0.0.1/96", "fe80::/129", "value does not look like a valid CIDR network"},
		{"CIDRv4", "192.168.1.7/32", "192.168.01.0/24", "value does not look like a valid IPv4 CIDR network"},
		{"ipv6", "::ffff:1.2.3.4", "fe80::1%eth0", "value does not look like a valid IPv6 address"},
		{"ipv4mask", "0.0.0.0", "255.0.255.0", "value does not look like a valid IP netmask"},
		{"pve-vlan-id-or-range-list", "2-4094,5-0", "10-5", "VLAN range must go from lower to higher tag '10-5'"},
		{"storage-pair-list", "1", "local:b!", "entry 'local:b!' contains invalid ID - storage ID 'b!' contains illegal characters\n\n"},
		{"storage-pair-list", "local:fast,slow", "x", "entry 'x' contains invalid ID - storage ID 'x' cannot be shorter than 2 characters\n\n"},
		{"pve-storage-vgname", "pve-data.1", "-pve", "lvm name '-pve' contains illegal characters"},
		{"pve-storage-server", "nas.example.com", "nas_1", "value does not look like a valid server name or IP address"},
		{"pve-storage-server", "2001:db8::5", "nas..lab", "value does not look like a valid server name or IP address"},
		{"pve-storage-content", "import", "vm", "invalid content type 'vm'"},
		{"pve-storage-content-list", "images,rootdir;iso none", "images,disk", "invalid content type 'disk'"},
		{"pve-volume-id", "local:iso/x.iso", "local", "unable to parse volume ID 'local'"},
		{"pve-storage-portal-dns-list", "10.0.0.1:6789 [fd00::1]:3300,mon.lab", "mon_1", "value does not look like a valid portal address"},
		{"pve-storage-portal-dns", "fd00::1.6789", "host:port", "value does not look like a valid portal address"},
		{"pve-storage-options", "vers=4.2,soft", "vers=4 soft", "invalid options 'vers=4 soft'"},
		{"pve-dir-override-list", "iso=isos/mine,backup=.dump", "iso=../x", "invalid override 'iso=../x'"},
		{"pve-dir-override", "images=vm", "disks=vm", "invalid content type 'disks'"},
		{"pve-dir-override", "images=a", "images=" + strings.Repeat("x", 255), "invalid override 'images=" + strings.Repeat("x", 255) + "'"},
		{"prune-backups", "keep-last=3,keep-daily=7", "keep-lots=3", "invalid key in comma-separated list property: keep-lots"},
		{"prune-backups", "keep-all=1,keep-last=0", "keep-all=1,keep-last=2", "keep-all cannot be set together with other options."},
		{"prune-backups", "keep-all=yes", "keep-last=-1", "format error\nprune-backups.keep-last: value must have a minimum value of 0"},
		{"pve-startup-order", "order=1,up=30,down=60", "order=abc", "unable to parse startup options"},
		{"pve-startup-order", "3", "0", "unable to parse startup options"},
		{"pve-hotplug-features", "network,disk,usb,cloudinit", "disk,bogus", "invalid hotplug feature 'bogus'"},
		{"pve-hotplug-features", "0", "", ""},
		{"mac-prefix", "BC:24:1", "BD:24:11", "value is not a valid unicast MAC address prefix"},
		{"email-opt", "0", "root@", "value does not look like a valid email address"},
		{"string-list", "/dev/sdb /dev/sdc", "", ""},
		{"dns-name", "vm-1.lab", "vm_1", "value does not look like a valid DNS name"},
		{"pve-vmid", "100", "99", "value does not look like a valid VM ID"},
		{"pve-realm", "pam", "p", "value does not look like a valid realm"},
		{"pve-task-status-type-list", "OK,error", "ok,failed", "invalid status 'failed'"},
	}
	for _, tc := range cases {
		if got := checkFormat(tc.format, tc.good); got != "" {
			t.Errorf("%s %q: refused: %q", tc.format, tc.good, got)
		}
		if tc.bad == "" {
			continue
		}
		if got := checkFormat(tc.format, tc.bad); got != tc.msg {
			t.Errorf("%s %q:\n got %q\nwant %q", tc.format, tc.bad, got, tc.msg)
		}
	}
	for _, rel := range []string{"8.4", "9.1"} {
		r, err := lookupRelease(rel)
		if err != nil {
			t.Fatal(err)
		}
		p := privListParam(r)
		if msg := p.check("VM.Audit,Sys.Audit"); msg != "" {
			t.Errorf("%s privs: %q", rel, msg)
		}
		monitor := p.check("VM.Monitor")
		if r.atLeast9() != (monitor == "invalid format - invalid privilege 'VM.Monitor'\n") {
			t.Errorf("%s VM.Monitor: %q", rel, monitor)
		}
	}
}

// check_prop checks the format before the range: a VM ID below 100 fails
// as a VM ID, not as a minimum.
func TestParamCheckOrderFormatBeforeRange(t *testing.T) {
	if got := vmidParam().check("99"); got != "invalid format - value does not look like a valid VM ID\n" {
		t.Fatalf("vmid 99: %q", got)
	}
	p := pFmt("pve-storage-id").maxLen(3)
	if got := p.check("1abcd"); got != "invalid format - storage ID '1abcd' contains illegal characters\n" {
		t.Fatalf("format before maxLength: %q", got)
	}
}

func TestNamedFormatsOverHTTP(t *testing.T) {
	_, info := startSim(t, Options{NoSSH: true})
	c := newClient(t, info, "")
	node := info.Nodes[0].Name
	probes := []struct {
		method, path string
		params       url.Values
		key, msg     string
	}{
		{"PUT", "/nodes/" + node + "/qemu/100/config", vals("hotplug", "disk,bogus"), "hotplug", "invalid format - invalid hotplug feature 'bogus'\n"},
		{"PUT", "/nodes/" + node + "/qemu/100/config", vals("startup", "order=abc"), "startup", "invalid format - unable to parse startup options\n"},
		{"POST", "/storage", vals("type", "dir", "storage", "x1", "path", "relative/path"), "path", "invalid format - value does not look like a valid absolute path\n"},
		{"POST", "/storage", vals("type", "dir", "storage", "x", "path", "/srv"), "storage", "invalid format - storage ID 'x' cannot be shorter than 2 characters\n"},
		{"POST", "/storage", vals("type", "dir", "storage", "bk", "path", "/srv", "prune-backups", "keep-lots=3"), "prune-backups", "invalid format - invalid key in comma-separated list property: keep-lots\n"},
		{"PUT", "/storage/local", vals("prune-backups", "keep-lots=3"), "prune-backups", "invalid format - invalid key in comma-separated list property: keep-lots\n"},
		{"PUT", "/storage/local", vals("bwlimit", "fast=1"), "bwlimit", "invalid format - invalid key in comma-separated list property: fast\n"},
		{"PUT", "/cluster/options", vals("mac_prefix", "01:00"), "mac_prefix", "invalid format - value is not a valid unicast MAC address prefix\n"},
		{"PUT", "/cluster/options", vals("migration", "secure,network=10.0.0.0/33"), "migration", "invalid format - format error\nmigration.network: invalid format - value does not look like a valid CIDR network\n\n"},
		{"POST", "/nodes/" + node + "/qemu/100/migrate", vals("target", node, "migration_network", "10.0.0.0"), "migration_network", "invalid format - value does not look like a valid CIDR network\n"},
		{"GET", "/nodes/" + node + "/tasks", vals("vmid", "99"), "vmid", "invalid format - value does not look like a valid VM ID\n"},
	}
	for _, p := range probes {
		r := c.do(p.method, p.path, p.params)
		if r.status != 400 || r.msg() != "Parameter verification failed.\n" || len(r.errs()) != 1 || r.errs()[p.key] != p.msg {
			t.Errorf("%s %s %v: %d %s", p.method, p.path, p.params, r.status, r.raw)
		}
	}
}

// rawDo sends a body as it is, with the sim's API token.
func rawDo(t *testing.T, c *client, method, path, rawQuery, contentType, body string) resp {
	t.Helper()
	u := c.base + path
	if rawQuery != "" {
		u += "?" + rawQuery
	}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Authorization", "PVEAPIToken="+c.token)
	res, err := c.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	r := resp{status: res.StatusCode, raw: raw}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &r.env); err != nil {
			t.Fatalf("bad JSON %q", raw)
		}
	}
	return r
}

// decode_urlencoded turns a repeated key into an array, which check_type
// refuses for a string parameter; a key without value is undefined, which
// is checked only for being required.
func TestRepeatedFormKeyIsAnArray(t *testing.T) {
	_, info := startSim(t, Options{NoSSH: true})
	c := newClient(t, info, "")
	form := "application/x-www-form-urlencoded"
	r := rawDo(t, c, "PUT", "/cluster/options", "", form, "delete=keyboard&delete=console")
	if r.status != 400 || r.errs()["delete"] != "type check ('string') failed - got ARRAY" || len(r.errs()) != 1 {
		t.Fatalf("repeated delete: %d %s", r.status, r.raw)
	}
	r = rawDo(t, c, "PUT", "/cluster/options", "max_workers=2", "", "")
	if r.status != 200 {
		t.Fatalf("query only: %d %s", r.status, r.raw)
	}
	// ';' separates pairs too; the query replaces a body key, array or not.
	r = rawDo(t, c, "PUT", "/cluster/options", "max_workers=3", form, "max_workers=x&max_workers=y;keyboard=de")
	if r.status != 200 {
		t.Fatalf("query over a body array: %d %s", r.status, r.raw)
	}
	got := c.ok("GET", "/cluster/options", nil).data().(map[string]any)
	if got["max_workers"] != "3" || got["keyboard"] != "de" {
		t.Fatalf("options: %v", got)
	}
	r = rawDo(t, c, "PUT", "/cluster/options", "", form, "max_workers=1&max_workers=2")
	if r.status != 400 || r.errs()["max_workers"] != "type check ('integer') failed - got ARRAY" {
		t.Fatalf("repeated integer: %d %s", r.status, r.raw)
	}
	// "mac_prefix=" is undefined, not an empty string that fails the format.
	r = rawDo(t, c, "PUT", "/cluster/options", "", form, "mac_prefix=&keyboard=de")
	if r.status != 200 {
		t.Fatalf("undefined value: %d %s", r.status, r.raw)
	}
	node := info.Nodes[0].Name
	r = rawDo(t, c, "PUT", "/nodes/"+node+"/network/vmbr0", "", form, "type")
	if r.status != 400 || r.errs()["type"] != "property is missing and it is not optional" {
		t.Fatalf("undefined required value: %d %s", r.status, r.raw)
	}
	r = rawDo(t, c, "GET", "/nodes/"+node+"/tasks", "node="+node+"&node=x", "", "")
	if r.status != 400 || r.errs()["node"] != "duplicate parameter (already defined in URI) with conflicting values!" {
		t.Fatalf("array against the URI: %d %s", r.status, r.raw)
	}
}

// A JSON true is a JSON::PP::Boolean object: a boolean parameter takes it,
// any other type refuses it by its class.
func TestJSONBooleanForInteger(t *testing.T) {
	_, info := startSim(t, Options{NoSSH: true})
	c := newClient(t, info, "")
	node := info.Nodes[0].Name
	r := rawDo(t, c, "PUT", "/nodes/"+node+"/qemu/100/config", "", "application/json", `{"cores": true}`)
	if r.status != 400 || r.errs()["cores"] != "type check ('integer') failed - got JSON::PP::Boolean" || len(r.errs()) != 1 {
		t.Fatalf("cores true: %d %s", r.status, r.raw)
	}
	r = rawDo(t, c, "PUT", "/cluster/options", "", "application/json", `{"keyboard": false, "delete": ["a"], "max_workers": {"n": 1}}`)
	want := map[string]any{
		"keyboard":    "type check ('string') failed - got JSON::PP::Boolean",
		"delete":      "type check ('string') failed - got ARRAY",
		"max_workers": "type check ('integer') failed - got HASH",
	}
	if r.status != 400 || len(r.errs()) != len(want) {
		t.Fatalf("JSON references: %d %s", r.status, r.raw)
	}
	for k, v := range want {
		if r.errs()[k] != v {
			t.Errorf("%s: %v", k, r.errs()[k])
		}
	}
	// A boolean takes JSON true; JSON::XS makes 2.0 the number 2.
	r = rawDo(t, c, "PUT", "/cluster/options", "", "application/json", `{"migration_unsecure": true, "max_workers": 2.0}`)
	if r.status != 200 {
		t.Fatalf("JSON boolean and float: %d %s", r.status, r.raw)
	}
	if got := c.ok("GET", "/cluster/options", nil).data().(map[string]any); got["max_workers"] != "2" {
		t.Fatalf("max_workers: %v", got["max_workers"])
	}
}

func TestDraidConfigPropertyString(t *testing.T) {
	p := draidConfigParam()
	if msg := p.check("data=2,spares=0"); msg != "" {
		t.Fatalf("valid: %q", msg)
	}
	want := "invalid format - format error\ndraid-config.data: value must have a minimum value of 1\ndraid-config.spares: property is missing and it is not optional\n"
	if msg := p.check("data=0"); msg != want {
		t.Fatalf("invalid:\n got %q\nwant %q", msg, want)
	}
}
