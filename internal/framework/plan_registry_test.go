package framework

import (
	"fmt"
	"sync"
	"testing"
)

// A pair rule (unsafe when both a and b are recorded) is seen by whichever
// records last, in both orders.
func TestPlanRegistry_lastRecordSeesTheSet(t *testing.T) {
	a := PlannedChange{Kind: "k", ID: "a", Action: PlanDestroy}
	b := PlannedChange{Kind: "k", ID: "b", Action: PlanDestroy}
	for _, order := range [][]PlannedChange{{a, b}, {b, a}} {
		r := NewPlanRegistry()
		first := r.Record("c1", order[0])
		if len(first) != 1 {
			t.Fatalf("first record sees %v", first)
		}
		second := r.Record("c1", order[1])
		if len(second) != 2 || second[0].ID != "a" || second[1].ID != "b" {
			t.Fatalf("second record sees %v, want a and b sorted", second)
		}
	}
}

func TestPlanRegistry_scopesAndReplace(t *testing.T) {
	r := NewPlanRegistry()
	r.Record("c1", PlannedChange{Kind: "k", ID: "a", Action: PlanKeep})
	if got := r.Record("c2", PlannedChange{Kind: "k", ID: "a", Action: PlanDestroy}); len(got) != 1 {
		t.Fatalf("another cluster's records leak: %v", got)
	}
	got := r.Record("c1", PlannedChange{Kind: "k", ID: "a", Action: PlanDestroy})
	if len(got) != 1 || got[0].Action != PlanDestroy {
		t.Fatalf("a second record of one resource replaces the first: %v", got)
	}
	if n := len(Changes(got, "k", PlanKeep)); n != 0 {
		t.Fatalf("Changes keep = %d", n)
	}
	if n := len(Changes(got, "k", PlanDestroy)); n != 1 {
		t.Fatalf("Changes destroy = %d", n)
	}
}

// Concurrent records: for a monotone rule ("unsafe when at least 3
// destroys") exactly the resources recording the 3rd and later records
// refuse, whatever the interleaving, and at least one always does.
func TestPlanRegistry_concurrentMonotoneRule(t *testing.T) {
	for round := 0; round < 50; round++ {
		r := NewPlanRegistry()
		var wg sync.WaitGroup
		var mu sync.Mutex
		refused := 0
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				seen := r.Record("c", PlannedChange{Kind: "k", ID: fmt.Sprint(i), Action: PlanDestroy})
				if len(Changes(seen, "k", PlanDestroy)) >= 3 {
					mu.Lock()
					refused++
					mu.Unlock()
				}
			}(i)
		}
		wg.Wait()
		if refused != 6 {
			t.Fatalf("round %d: %d resources refused, want 6 (records 3 to 8)", round, refused)
		}
	}
}

func TestProviderData_RecordPlanWithoutRegistry(t *testing.T) {
	var pd *ProviderData
	if got := pd.RecordPlan(PlannedChange{Kind: "k", ID: "a"}); len(got) != 1 {
		t.Fatalf("nil provider data: %v", got)
	}
	pd = NewProviderData(nil, nil)
	pd.RecordPlan(PlannedChange{Kind: "k", ID: "a"})
	if got := pd.RecordPlan(PlannedChange{Kind: "k", ID: "b"}); len(got) != 2 {
		t.Fatalf("provider data registry: %v", got)
	}
}

type keptOn []string

func (k keptOn) KeptVolumeStorages() []string { return k }

func TestPlanRegistry_keptOnStorage(t *testing.T) {
	r := NewPlanRegistry()
	r.Record("c", PlannedChange{Kind: "disk", ID: "100/scsi0", Facts: keptOn{"local-lvm"}})
	r.Record("c", PlannedChange{Kind: "disk", ID: "100/scsi1", Facts: keptOn{"ceph", "nfs"}})
	all := r.Record("c", PlannedChange{Kind: KindStorage, ID: "nfs", Action: PlanDestroy})
	got := KeptOnStorage(all, "nfs")
	if len(got) != 1 || got[0].ID != "100/scsi1" {
		t.Fatalf("KeptOnStorage(nfs) = %v", got)
	}
	if got := KeptOnStorage(all, "dir"); len(got) != 0 {
		t.Fatalf("KeptOnStorage(dir) = %v", got)
	}
}
