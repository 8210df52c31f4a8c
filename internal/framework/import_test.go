package framework

import (
	"strings"
	"testing"
)

func TestSplitImportOptions(t *testing.T) {
	allowed := map[string][]string{"apply": {"none", "rolling_restart"}, "restart_units": nil}
	for _, tc := range []struct {
		id, base, err string
		opts          map[string]string
	}{
		{id: "z2g4a/ceph_conf/osd", base: "z2g4a/ceph_conf/osd"},
		{id: "z2g4a/ceph_conf/osd?apply=rolling_restart", base: "z2g4a/ceph_conf/osd", opts: map[string]string{"apply": "rolling_restart"}},
		{id: "n:/etc/x.conf?restart_units=a.timer%2Cb.service", base: "n:/etc/x.conf", opts: map[string]string{"restart_units": "a.timer,b.service"}},
		{id: "x?apply=sometimes", err: `valid values are none, rolling_restart`},
		{id: "x?reboot=true", err: `unknown import option "reboot": valid options are apply, restart_units`},
		{id: "x?apply=none&apply=none", err: "given 2 times"},
	} {
		base, opts, err := SplitImportOptions(tc.id, allowed)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.id, err, tc.err)
			}
			continue
		}
		if err != nil || base != tc.base || len(opts) != len(tc.opts) {
			t.Errorf("%s: got %q %v %v", tc.id, base, opts, err)
		}
		for k, v := range tc.opts {
			if opts[k] != v {
				t.Errorf("%s: option %s = %q, want %q", tc.id, k, opts[k], v)
			}
		}
	}
}
