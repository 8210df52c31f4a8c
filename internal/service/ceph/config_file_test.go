package ceph

import (
	"reflect"
	"testing"
)

// PVE's ceph.conf as pveceph init writes it, with a hand-made comment and
// a key in Ceph's spaced spelling.
const pveConf = `# lab ceph.conf
[global]
	auth_client_required = cephx
	fsid = 5a1c0ffe-0000-4000-8000-000000000001
	mon_host = 172.27.2.10 172.27.2.11 172.27.2.12
	public_network = 172.27.2.0/24

[client]
	keyring = /etc/pve/priv/$cluster.$name.keyring
	rbd cache = false ; set by hand

[mon.z2g4a]
	public_addr = 172.27.2.10
`

func TestConfFileReadsLikePVE(t *testing.T) {
	f := parseConfFile(pveConf)
	client, ok := f.section("client")
	want := map[string]string{"keyring": "/etc/pve/priv/$cluster.$name.keyring", "rbd_cache": "false"}
	if !ok || !reflect.DeepEqual(client, want) {
		t.Errorf("client %v", client)
	}
	if _, ok := f.section("osd"); ok {
		t.Error("found a section that is not there")
	}
	if f.String() != pveConf {
		t.Errorf("parse and print changed the file:\n%s", f.String())
	}
	for line, want := range map[string][2]string{
		`a = "quoted; value"`:    {"", ""}, // comment characters end quoted text too
		`a = ' spaced '`:         {"a", " spaced "},
		`a = b \# not a comment`: {"a", "b # not a comment"},
		`a   b = c # comment`:    {"a_b", "c"},
		`a-b = c`:                {"a_b", "c"},
		`= c`:                    {"", ""},
		`a =`:                    {"", ""},
	} {
		k, v, _ := parseConfKV(line)
		if k != want[0] || v != want[1] {
			t.Errorf("%q: %q = %q, want %q", line, k, v, want)
		}
	}
}

// Edits change only the managed lines: the comment, the other keys and
// sections stay; a new section is appended; values with comment
// characters are escaped as PVE's writer does.
func TestConfFileEdits(t *testing.T) {
	f := parseConfFile(pveConf)
	f.set("client", "rbd_cache", "true")
	f.set("client", "rbd_cache_writethrough_until_flush", "true")
	f.set("osd", "bdev_enable_discard", "true")
	f.set("global", "log_file", "/var/log/a;b#c")
	want := `# lab ceph.conf
[global]
	auth_client_required = cephx
	fsid = 5a1c0ffe-0000-4000-8000-000000000001
	mon_host = 172.27.2.10 172.27.2.11 172.27.2.12
	public_network = 172.27.2.0/24
	log_file = /var/log/a\;b\#c

[client]
	keyring = /etc/pve/priv/$cluster.$name.keyring
	rbd_cache = true
	rbd_cache_writethrough_until_flush = true

[mon.z2g4a]
	public_addr = 172.27.2.10

[osd]
	bdev_enable_discard = true
`
	if got := f.String(); got != want {
		t.Errorf("edited:\n%s\nwant:\n%s", got, want)
	}
	g := parseConfFile(f.String())
	if global, _ := g.section("global"); global["log_file"] != "/var/log/a;b#c" {
		t.Errorf("escaped value reads back as %q", global["log_file"])
	}
	f.remove("client", "rbd_cache")
	f.remove("osd", "bdev_enable_discard")
	if client, _ := f.section("client"); len(client) != 2 || client["rbd_cache"] != "" {
		t.Errorf("client after remove %v", client)
	}
	if osd, ok := f.section("osd"); !ok || len(osd) != 0 {
		t.Errorf("osd after remove %v %v", osd, ok)
	}
}

func TestCephValues(t *testing.T) {
	for _, c := range []struct {
		want, stored string
		same         bool
	}{
		{"8G", "8589934592", true},
		{"8589934592", "8589934592", true},
		{"8GiB", "8589934592", true},
		{"4G", "8589934592", false},
		{"1", "true", true},
		{"TRUE", "true", true},
		{"0", "true", false},
		{"0.1", "0.100000", true},
		{"writeback", "writeback", true},
		{"writeback", "writethrough", false},
	} {
		if got := sameCephValue(c.want, c.stored); got != c.same {
			t.Errorf("sameCephValue(%q, %q) = %v", c.want, c.stored, got)
		}
	}
	for k, v := range map[string]string{"osd_memory_target": "896M", "bdev_enable_discard": "0", "osd_max_backfills": "2", "osd_recovery_sleep_hdd": "0.05", "rgw_thing": "x"} {
		if why := checkKnownValue(k, v); why != "" {
			t.Errorf("%s = %s refused: %s", k, v, why)
		}
	}
	for k, v := range map[string]string{"osd_memory_target": "512M", "bdev_enable_discard": "yes", "osd_max_backfills": "-1", "osd_recovery_sleep": "fast"} {
		if why := checkKnownValue(k, v); why == "" {
			t.Errorf("%s = %s accepted", k, v)
		}
	}
}
