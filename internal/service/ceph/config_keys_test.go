package ceph

import (
	"reflect"
	"testing"
)

// ConfKeys reads sections and keys with the resource's grammar: comments,
// continuations, dashes and a section opened twice (which merges, as in
// Ceph) are where a line splitter of its own went wrong.
func TestConfKeys(t *testing.T) {
	raw := "# written by pveceph, then by hand\n[global]\n\tfsid = 0a1b\n\tmon_host = 10.0.0.1 \\\n 10.0.0.2\n" +
		"[client]\n\tkeyring = /etc/pve/priv/$cluster.$name.keyring\n\trbd cache = true ; a comment\n" +
		"[osd]\n\tosd-memory-target = 4294967296\n;bluestore_min_alloc_size = 4096\n" +
		"[client]\n\trbd_cache_size = 67108864\n\trbd cache = false\n"
	keys, order := ConfKeys(raw)
	if want := []string{"global", "client", "osd"}; !reflect.DeepEqual(order, want) {
		t.Errorf("order = %q, want %q", order, want)
	}
	want := map[string][]string{
		"global": {"fsid", "mon_host"},
		"client": {"keyring", "rbd_cache", "rbd_cache_size"},
		"osd":    {"osd_memory_target"},
	}
	if !reflect.DeepEqual(keys, want) {
		t.Errorf("keys = %q, want %q", keys, want)
	}
}
