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

// Notes are per provider instance (one command), with their value.
func TestPlanNotesArePerCommand(t *testing.T) {
	a, b := &ProviderData{}, &ProviderData{}
	a.PlanNote("vm", "100", "z2g4a")
	if v, ok := a.PlanNoted("vm", "100"); !ok || v != "z2g4a" {
		t.Errorf("noted VM: %q %v", v, ok)
	}
	if _, ok := b.PlanNoted("vm", "100"); ok {
		t.Error("a note of one command seen by another")
	}
	if _, ok := a.PlanNoted("storage", "100"); ok {
		t.Error("kinds are not separate")
	}
	var none *ProviderData
	none.PlanNote("vm", "1", "")
	if _, ok := none.PlanNoted("vm", "1"); ok {
		t.Error("nil provider data noted something")
	}
}
