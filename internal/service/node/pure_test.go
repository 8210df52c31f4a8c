package node

import (
	"strings"
	"testing"
)

func TestParseRings(t *testing.T) {
	// ethtool 6.1 (bookworm) and 6.14 (trixie) layouts of a BCM5720.
	for name, out := range map[string]string{
		"6.1": "Ring parameters for bcm5720p0:\nPre-set maximums:\nRX:\t\t2047\nRX Mini:\tn/a\nRX Jumbo:\t1023\nTX:\t\t511\n" +
			"Current hardware settings:\nRX:\t\t200\nRX Mini:\tn/a\nRX Jumbo:\t0\nTX:\t\t511\n",
		"6.14": "Ring parameters for bcm5720p0:\nPre-set maximums:\nRX:\t\t\t2047\nRX Mini:\t\tn/a\nRX Jumbo:\t\t1023\nTX:\t\t\t511\nTX push buff len:\tn/a\n" +
			"Current hardware settings:\nRX:\t\t\t200\nRX Mini:\t\tn/a\nRX Jumbo:\t\t0\nTX:\t\t\t511\nRX Buf Len:\t\tn/a\n",
	} {
		got, err := parseRings(nicInfo{driver: "tg3"}, out)
		if err != nil || got != (nicInfo{driver: "tg3", rxMax: 2047, txMax: 511, rx: 200, tx: 511}) {
			t.Errorf("%s: %+v, %v", name, got, err)
		}
	}
	if _, err := parseRings(nicInfo{}, "Ring parameters for x:\nPre-set maximums:\nRX:\tn/a\n"); err == nil {
		t.Error("incomplete output accepted")
	}
}

func TestCheckRing(t *testing.T) {
	mlx := nicInfo{driver: "mlx4_en", rxMax: 8192, txMax: 8192}
	e1000 := nicInfo{driver: "e1000e", rxMax: 4096, txMax: 4096}
	tg3 := nicInfo{driver: "tg3", rxMax: 2047, txMax: 511}
	other := nicInfo{driver: "ixgbe", rxMax: 4096, txMax: 4096}
	for _, c := range []struct {
		info nicInfo
		attr string
		v    int
		want string // "" = accepted
	}{
		{mlx, "rx", 2048, ""},
		{mlx, "rx", 8192, ""},
		{mlx, "rx", 3000, "Use rx = 2048 or rx = 4096."},
		{mlx, "tx", 8000, "Use tx = 4096 or tx = 8192."},
		{mlx, "rx", 8193, "exceeds the maximum of cx on this node: ethtool -g reports 8192 (driver mlx4_en). Use rx = 8192 or less."},
		{mlx, "rx", 200, "below the minimum 256"},
		{mlx, "tx", 64, ""},
		{e1000, "rx", 1000, ""},
		{e1000, "rx", 4095, "Use rx = 4088 or rx = 4096."},
		{e1000, "tx", 63, "below the minimum 64"},
		{tg3, "tx", 511, ""},
		{tg3, "tx", 17, "Use tx = 18 or more."},
		{tg3, "rx", 2047, ""},
		{tg3, "rx", 1, ""},
		{other, "rx", 3001, ""}, // checked by readback
		{other, "rx", 4097, "exceeds the maximum"},
	} {
		got := checkRing(c.info, "cx", c.attr, c.v)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s %s = %d: %q, want %q", c.info.driver, c.attr, c.v, got, c.want)
		}
	}
}

func TestRingUnitRoundTrip(t *testing.T) {
	two, five := 2048, 511
	for _, c := range []struct{ rx, tx *int }{{&two, &two}, {&two, nil}, {nil, &five}} {
		content := ringUnit("bcm5720-p0", c.rx, c.tx)
		rx, tx, ok := parseRingUnit("bcm5720-p0", content)
		if !ok || (rx == nil) != (c.rx == nil) || (tx == nil) != (c.tx == nil) || (rx != nil && *rx != *c.rx) || (tx != nil && *tx != *c.tx) {
			t.Errorf("round trip of %v/%v: %v %v %v", c.rx, c.tx, rx, tx, ok)
		}
		if !strings.Contains(content, `BindsTo=sys-subsystem-net-devices-bcm5720\x2dp0.device`) {
			t.Errorf("device unit not escaped:\n%s", content)
		}
		// An edited file is not the resource's.
		if _, _, ok := parseRingUnit("bcm5720-p0", strings.Replace(content, "Before=network-pre.target", "Before=network.target", 1)); ok {
			t.Error("an edited unit was accepted")
		}
	}
}

func TestCheckFilePath(t *testing.T) {
	for p, want := range map[string]string{
		"/etc/systemd/journal-upload.conf":                                   "",
		"/etc/systemd/system/systemd-journal-upload.service.d/override.conf": "",
		"/usr/local/bin/backup.sh":                                           "",
		"/etc/default/pveproxy":                                              "",
		"/etc/pve":                                                           "cluster file system",
		"/etc/pve/ceph.conf":                                                 "cluster file system",
		"/etc/pve/priv/authkey.key":                                          "cluster file system",
		"/etc/pvefoo.conf":                                                   "",
		"/etc/sudoers.d":                                                     "controls sudo",
		"/etc/sudoers.d/x":                                                   "controls sudo",
		"/etc/ssh/ssh_host_rsa_key.pub":                                      "host key",
		"/etc/ssh/sshd_config.d/hardening.conf":                              "",
		"/etc/systemd/system/pve-nic-ring-cx354ap1.service":                  "pve_node_nic_ring",
		"/etc":                       "outside",
		"/etc/":                      "clean path",
		"/root/.ssh/authorized_keys": "outside",
		"/etc/./shadow":              "clean path",
		"/etc/a\nb":                  "control character",
		"etc/x":                      "absolute",
	} {
		got := checkFilePath(p)
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("checkFilePath(%q) = %q, want %q", p, got, want)
		}
	}
}
