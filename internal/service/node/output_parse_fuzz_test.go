package node

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// Fuzz targets for the parsers of node command output (ethtool, systemctl,
// stat, tuned-adm) and of the unit files this package writes. Seeds are
// the outputs pvesim's commands print (internal/pvesim/cli_*.go).

const ethtoolRingsSeed = "Ring parameters for eno1:\nPre-set maximums:\nRX:\t\t\t4096\nRX Mini:\t\tn/a\nRX Jumbo:\t\tn/a\nTX:\t\t\t4096\n" +
	"TX push buff len:\tn/a\nCurrent hardware settings:\nRX:\t\t\t512\nRX Mini:\t\tn/a\nRX Jumbo:\t\tn/a\nTX:\t\t\t512\n"

func FuzzParseRings(f *testing.F) {
	for _, s := range []string{
		ethtoolRingsSeed,
		"Ring parameters for lo:\nPre-set maximums:\nRX:\t\t0\nRX Mini:\tn/a\nRX Jumbo:\tn/a\nTX:\t\t0\nCurrent hardware settings:\nRX:\t\t0\nTX:\t\tn/a\n",
		"", "RX: 1\nTX: 2\n", "Pre-set maximums:\nRX:-1\nTX:99999999999999999999\nCurrent hardware settings:\nRX:1\nTX:1\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		info, err := parseRings(nicInfo{driver: "e1000e"}, s)
		if err == nil && info.driver != "e1000e" {
			t.Fatalf("parseRings(%q) lost the driver", s)
		}
		if err != nil && !strings.Contains(err.Error(), "ethtool -g") {
			t.Fatalf("parseRings(%q): the error does not name the command: %v", s, err)
		}
	})
}

func FuzzParseEthtoolDriver(f *testing.F) {
	for _, s := range []string{
		"driver: e1000e\nversion: 6.8.12-4-pve\nfirmware-version: 0.13-4\nexpansion-rom-version: \nbus-info: 0000:00:1f.6\n",
		"driver: \n", "", "driver:bond\n", "driver: virtio_net\r\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d := parseEthtoolDriver(s)
		if d != strings.TrimSpace(d) || strings.Contains(d, "\n") {
			t.Fatalf("parseEthtoolDriver(%q) = %q", s, d)
		}
	})
}

func FuzzParseRingUnit(f *testing.F) {
	rx, tx := 1024, 2048
	f.Add("eno1", 1024, 2048, true, true, ringUnit("eno1", &rx, &tx))
	f.Add("enp1s0-x", 0, 256, false, true, ringUnit("enp1s0-x", nil, &tx))
	f.Add("eno1", 1, 1, true, false, "ExecStart=/usr/sbin/ethtool -G eno1 rx 1 tx\n")
	f.Add("eno1", 1, 1, true, false, "ExecStart=/usr/sbin/ethtool -G eno1 mini 1\n")
	f.Fuzz(func(t *testing.T, iface string, rx, tx int, hasRx, hasTx bool, content string) {
		gotRx, gotTx, ok := parseRingUnit(iface, content)
		if ok && ringUnit(iface, gotRx, gotTx) != content {
			t.Fatalf("parseRingUnit(%q, %q) accepted a file ringUnit does not write", iface, content)
		}
		if iface == "" || strings.ContainsAny(iface, " \t\n\r\v\f\u0085\u00a0") || (!hasRx && !hasTx) {
			return // not an interface name, or no unit
		}
		var prx, ptx *int
		if hasRx {
			prx = &rx
		}
		if hasTx {
			ptx = &tx
		}
		gotRx, gotTx, ok = parseRingUnit(iface, ringUnit(iface, prx, ptx))
		if !ok || fmt.Sprint(deref(gotRx), deref(gotTx)) != fmt.Sprint(deref(prx), deref(ptx)) {
			t.Fatalf("ringUnit(%q, %v, %v) reads back as %v, %v, %v", iface, deref(prx), deref(ptx), deref(gotRx), deref(gotTx), ok)
		}
	})
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

func FuzzParseSystemctlShow(f *testing.F) {
	for _, s := range []string{
		"LoadState=loaded\nUnitFileState=enabled\nActiveState=active\nNeedDaemonReload=no\n",
		"LoadState=not-found\nUnitFileState=\nActiveState=inactive\nNeedDaemonReload=no\n", "", "=\n==\nExecStart={ path=/bin/x ; argv[]=/bin/x a=b }\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for k, v := range parseSystemctlShow(s) {
			if strings.Contains(k, "=") || strings.Contains(k+v, "\n") {
				t.Fatalf("parseSystemctlShow(%q): %q=%q", s, k, v)
			}
		}
	})
}

func FuzzParseStat(f *testing.F) {
	for _, s := range []string{
		"644|root|root|regular file\n", "777|root|root|symbolic link\n", "4755|root|www-data|regular empty file\n",
		"1777|root|root|directory\n", "|||\n", "9|a|b|c", "37777777777|r|r|regular file\n", "644|a|b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		nf, ok := parseStat(s)
		if !ok {
			return
		}
		// stat's %a is the permission bits with setuid, setgid and sticky.
		if nf.mode > 0o7777 {
			t.Fatalf("parseStat(%q): mode %o has more than the 12 permission bits", s, uint32(nf.mode))
		}
	})
}

func FuzzParseMode(f *testing.F) {
	for _, s := range []string{"0644", "644", "4755", "0", "8", "-1", "+7", "0o644", "37777777777", "07777", "10000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, ok := parseMode(s)
		if ok && m > 0o7777 {
			t.Fatalf("parseMode(%q) = %o: more than the 12 permission bits", s, uint32(m))
		}
	})
}

func FuzzParseTunedActive(f *testing.F) {
	for _, s := range []string{
		"Current active profile: virtual-host\n", "No current active profile.\n",
		"It seems that tuned daemon is not running, preset profile is not activated.\nPreset profile: throughput-performance\n",
		"", "Current active profile: \n", "Current active profile: balanced powersave\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, ok := parseTunedActive(s)
		if ok && a.profile == "" && a.preset == "" && !strings.Contains(s, "No current active profile.") {
			t.Fatalf("parseTunedActive(%q) accepted an answer without a profile", s)
		}
		if a.profile != strings.TrimSpace(a.profile) || a.preset != strings.TrimSpace(a.preset) {
			t.Fatalf("parseTunedActive(%q) = %+v", s, a)
		}
	})
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"4k", "4K", "1m", "1G", "0", "512", "9223372036854775807", "8589934592g", "4096m", "-1k"} {
		f.Add(s)
	}
	res := []*regexp.Regexp{blockSizeRE, fileSizeRE}
	f.Fuzz(func(t *testing.T, s string) {
		for _, re := range res {
			if n, ok := parseSize(re, s); ok && n < 0 {
				t.Fatalf("parseSize(%s, %q) = %d", re, s, n)
			}
		}
	})
}
