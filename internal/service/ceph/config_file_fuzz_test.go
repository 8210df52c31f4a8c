package ceph

import (
	"regexp"
	"strings"
	"testing"
)

// Fuzz targets for the ceph.conf editor and Ceph's value syntaxes. The
// editor's promise: what it does not manage stays byte for byte, and a
// key it sets reads back as set.

const fuzzConfSeed = "# written by hand\n[global]\n\t auth_client_required = cephx\n\tpublic network = 169.254.50.0/24 ; the storage network\n" +
	"  cluster_network=\"10.0.0.0/24\"\n\tfsid = 0a1b\\\n  2c3d\norphan\n[client]\n\tkeyring = /etc/pve/priv/$cluster.$name.keyring\n" +
	"\tcomment = a\\;b\n[mon.z2g4a]\n\tpublic_addr = 169.254.50.10\n"

var fuzzSectionRE = regexp.MustCompile(`^[a-z][a-z0-9_.-]*$`)

func FuzzConfFile(f *testing.F) {
	for _, s := range []string{fuzzConfSeed, "", "\n", "[global]", "[global]\nk = v\\", "[a]\n[a]\nk=1\n", "[global]\r\nk=v\r\n", "[x] # c\nk='a;b'\n"} {
		f.Add(s, "global", "osd_pool_default_size", "3")
		f.Add(s, "mon.z2g4a", "public_addr", "10.0.0.1")
	}
	f.Fuzz(func(t *testing.T, raw, section, key, value string) {
		cf := parseConfFile(raw)
		if got := cf.String(); got != raw && raw != "\n" {
			t.Fatalf("parseConfFile(%q).String() = %q: the file changed without an edit", raw, got)
		}
		before := map[string]map[string]string{}
		for _, l := range cf.lines {
			if l.header {
				before[l.section], _ = cf.section(l.section)
			}
		}
		if !fuzzSectionRE.MatchString(section) || !configKeyRE.MatchString(key) || normalizeConfKey(key) != key || checkConfValue(value) != nil {
			return // the resource refuses these at plan
		}
		cf.set(section, key, value)
		again := parseConfFile(cf.String())
		got, ok := again.section(section)
		if !ok || got[key] != value {
			t.Fatalf("set(%q, %q, %q) on %q wrote %q, which reads [%s] %s = %q", section, key, value, raw, cf.String(), section, key, got[key])
		}
		for sec, kv := range before {
			now, _ := again.section(sec)
			for k, v := range kv {
				if (sec == section && k == key) || strings.HasSuffix(v, `\`) {
					// A value ending in a backslash at the end of the file
					// loses it: the line is continued by the next one.
					continue
				}
				if now[k] != v {
					t.Fatalf("set(%q, %q, %q) on %q wrote %q: [%s] %s was %q, is %q", section, key, value, raw, cf.String(), sec, k, v, now[k])
				}
			}
		}
		again.remove(section, key)
		if got, _ := parseConfFile(again.String()).section(section); got[key] != "" {
			t.Fatalf("remove(%q, %q) left %q", section, key, got[key])
		}
	})
}

func FuzzParseIECSize(f *testing.F) {
	for _, s := range []string{"1G", "1GiB", "1Gi", "512", "", "8E", "7E", "-1", "1.5G", "KiB", "1B"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if n, ok := parseIECSize(s); ok && n < 0 {
			t.Fatalf("parseIECSize(%q) = %d", s, n)
		}
		_, _ = parseCephBool(s)
	})
}

func FuzzParseTargetSize(f *testing.F) {
	for _, s := range []string{"0", "100G", "1.5T", "512K", "99999999999999999999T", "1e3", ".5G", "G"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := parseTargetSize(s)
		if !ok {
			return
		}
		if n < 0 {
			t.Fatalf("parseTargetSize(%q) = %d", s, n)
		}
		if back, ok := parseTargetSize(formatTargetSize(n)); !ok || back != n {
			t.Fatalf("formatTargetSize(%d) = %q reads as %d, %v", n, formatTargetSize(n), back, ok)
		}
	})
}
