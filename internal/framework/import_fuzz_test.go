package framework

import (
	"strings"
	"testing"
)

func FuzzSplitImportOptions(f *testing.F) {
	for _, s := range []string{
		"pve1:/etc/x", "pve1:/etc/x?restart_units=a.service,b.service", "global/mon_max_pg_per_osd?restart=rolling",
		"x?", "x?a=1&a=2", "x?%zz", "x?restart=bogus", "x?=1", "x?restart=rolling?y", "?restart=none",
	} {
		f.Add(s)
	}
	allowed := map[string][]string{"restart": {"none", "rolling"}, "restart_units": nil}
	f.Fuzz(func(t *testing.T, id string) {
		base, opts, err := SplitImportOptions(id, allowed)
		if err != nil {
			return
		}
		if !strings.Contains(id, "?") {
			if base != id || opts != nil {
				t.Fatalf("SplitImportOptions(%q) = %q, %v without options", id, base, opts)
			}
			return
		}
		if strings.Contains(base, "?") || !strings.HasPrefix(id, base+"?") {
			t.Fatalf("SplitImportOptions(%q): base %q", id, base)
		}
		for k, v := range opts {
			valid, ok := allowed[k]
			if !ok || (valid != nil && !contains(valid, v)) {
				t.Fatalf("SplitImportOptions(%q) let %s=%q through", id, k, v)
			}
		}
	})
}
