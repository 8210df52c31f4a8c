package pve

import (
	"reflect"
	"testing"
)

func TestParseCephConfig(t *testing.T) {
	raw := "# written by hand\n" +
		"[global]\n" +
		"\t auth_client_required = cephx\n" +
		"\tpublic network = 169.254.50.0/24 ; the storage network\n" +
		"  cluster_network=\"10.0.0.0/24\"\n" +
		"\tfsid = 0a1b\\\n" +
		"  2c3d\n" +
		"orphan\n" +
		"[client]\n" +
		"\tkeyring = /etc/pve/priv/$cluster.$name.keyring\n" +
		"\tcomment = a\\;b\n" +
		"[mon.z2g4a]\n" +
		"\tpublic_addr = 169.254.50.10\n"
	got := ParseCephConfig(raw)
	want := CephConfig{
		"global":    {"auth_client_required": "cephx", "public_network": "169.254.50.0/24", "cluster_network": "10.0.0.0/24", "fsid": "0a1b2c3d"},
		"client":    {"keyring": "/etc/pve/priv/$cluster.$name.keyring", "comment": "a;b"},
		"mon.z2g4a": {"public_addr": "169.254.50.10"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	if got.Get("global", "public_network") != "169.254.50.0/24" || got.Get("osd", "x") != "" {
		t.Fatal("Get")
	}
}

func TestCephMonitorIPs(t *testing.T) {
	for in, want := range map[string][]string{
		"172.27.2.10:6789/0": {"172.27.2.10"},
		"[v2:169.254.50.10:3300/0,v1:169.254.50.10:6789/0]": {"169.254.50.10"},
		"[fd00::1]:6789/0":                          {"fd00::1"},
		"169.254.50.11":                             {"169.254.50.11"},
		"10.0.0.1 10.0.0.2:6789":                    {"10.0.0.1", "10.0.0.2"},
		"[v2:[fd00::2]:3300/0,v1:[fd00::2]:6789/0]": {"fd00::2"},
		"mon.example.com:6789/0, x":                 nil,
	} {
		got := CephMonitorIPs(in)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q: got %v want %v", in, got, want)
		}
	}
}
