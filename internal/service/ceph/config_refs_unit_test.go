package ceph

import (
	"reflect"
	"testing"
)

func TestClosestOptions(t *testing.T) {
	known := map[string]bool{"osd_memory_target": true, "osd_memory_base": true, "osd_max_backfills": true, "rbd_cache": true, "rbd_cache_size": true}
	for k, want := range map[string][]string{
		"osd_memory_targt":  {"osd_memory_target"},
		"osd_memorytarget":  {"osd_memory_target"},
		"osd_max_backfill":  {"osd_max_backfills"},
		"rbd_cach":          {"rbd_cache"},
		"completely_absent": nil,
	} {
		if got := closestOptions(k, known, 3); !reflect.DeepEqual(got, want) {
			t.Errorf("closestOptions(%q) = %v, want %v", k, got, want)
		}
	}
	if d := editDistance("kitten", "sitting"); d != 3 {
		t.Errorf("editDistance(kitten, sitting) = %d, want 3", d)
	}
}
