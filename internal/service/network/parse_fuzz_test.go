package network

import (
	"strconv"
	"strings"
	"testing"
)

func FuzzSplitDottedVLAN(f *testing.F) {
	for _, s := range []string{"vmbr0.20", "eno1.4094", "bond0.1.2", ".5", "eno1.", "eno1", "a.-1", "a.99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, iface string) {
		parent, id, ok := splitDottedVLAN(iface)
		if ok && (parent == "" || iface != parent+"."+iface[len(parent)+1:]) {
			t.Fatalf("splitDottedVLAN(%q) = %q, %d", iface, parent, id)
		}
		if ok && strings.HasSuffix(iface, "."+strconv.FormatInt(id, 10)) && isDottedVLAN(iface) != ok {
			t.Fatal("isDottedVLAN disagrees")
		}
	})
}

func FuzzNormalizeVIDs(f *testing.F) {
	for _, s := range []string{"2-4094", "10,20;30 40-50", "", "  ", "1;;2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := normalizeVIDs(s)
		if normalizeVIDs(n) != n {
			t.Fatalf("normalizeVIDs(%q) = %q is not stable: %q", s, n, normalizeVIDs(n))
		}
		if strings.Contains(n, "  ") || strings.ContainsAny(n, ",;") || strings.TrimSpace(n) != n {
			t.Fatalf("normalizeVIDs(%q) = %q", s, n)
		}
	})
}
