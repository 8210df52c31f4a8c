package framework

import (
	"context"
	"testing"
)

// A miss reads again once, so an object created since the cached read
// (by an earlier resource of the same apply) is found; a hit costs no
// second read.
func TestCachedLookupReadsAgainOnMiss(t *testing.T) {
	c := NewReadCache()
	var loads int
	list := []string{"a"}
	load := func(context.Context) ([]string, error) {
		loads++
		return append([]string(nil), list...), nil
	}
	has := func(name string) func([]string) bool {
		return func(l []string) bool {
			for _, s := range l {
				if s == name {
					return true
				}
			}
			return false
		}
	}
	if _, ok, err := CachedLookup(context.Background(), c, "k", load, has("a")); !ok || err != nil || loads != 1 {
		t.Fatalf("hit: ok=%v err=%v loads=%d", ok, err, loads)
	}
	list = append(list, "b") // created after the cached read
	if _, ok, _ := CachedLookup(context.Background(), c, "k", load, has("b")); !ok || loads != 2 {
		t.Fatalf("created object: ok=%v loads=%d, want found after one more read", ok, loads)
	}
	if _, ok, _ := CachedLookup(context.Background(), c, "k", load, has("zz")); ok || loads != 3 {
		t.Fatalf("missing object: ok=%v loads=%d, want not found after exactly one more read", ok, loads)
	}
}

// Notes are per provider instance (one command), with their value, and
// list per kind.
func TestPlanNotesArePerCommand(t *testing.T) {
	a, b := &ProviderData{}, &ProviderData{}
	a.PlanNote(PlannedVMs, "100", "z2g4a")
	if v, ok := a.PlanNoted(PlannedVMs, "100"); !ok || v != "z2g4a" {
		t.Errorf("noted VM: %q %v", v, ok)
	}
	if _, ok := b.PlanNoted(PlannedVMs, "100"); ok {
		t.Error("a note of one command seen by another")
	}
	if _, ok := a.PlanNoted(PlannedStorages, "100"); ok {
		t.Error("kinds are not separate")
	}
	a.PlanNote(PlannedVMs, "99", "")
	a.PlanNote(PlannedStorages, "ceph", "")
	if got := a.PlanNotedKeys(PlannedVMs); len(got) != 2 || got[0] != "100" || got[1] != "99" {
		t.Errorf("noted VM ids %v, want [100 99]", got)
	}
	var none *ProviderData
	none.PlanNote(PlannedVMs, "1", "")
	if _, ok := none.PlanNoted(PlannedVMs, "1"); ok || len(none.PlanNotedKeys(PlannedVMs)) != 0 {
		t.Error("nil provider data noted something")
	}
}
