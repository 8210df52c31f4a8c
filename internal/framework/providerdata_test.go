package framework

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

func TestReadCacheSharesOneLoad(t *testing.T) {
	c := NewReadCache()
	var loads atomic.Int32
	release := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := c.Get(context.Background(), "k", func(context.Context) (any, error) {
				loads.Add(1)
				<-release
				return 42, nil
			})
			if err != nil || v.(int) != 42 {
				t.Errorf("got %v, %v", v, err)
			}
		}()
	}
	close(release)
	wg.Wait()
	if n := loads.Load(); n != 1 {
		t.Errorf("concurrent readers of one key loaded %d times, want 1", n)
	}
	c.Invalidate("k")
	if _, err := c.Get(context.Background(), "k", func(context.Context) (any, error) { loads.Add(1); return 1, nil }); err != nil {
		t.Fatal(err)
	}
	if n := loads.Load(); n != 2 {
		t.Errorf("after Invalidate the key must load again; loads = %d", n)
	}
}

func TestReadCacheDoesNotKeepErrors(t *testing.T) {
	c := NewReadCache()
	boom := errors.New("boom")
	if _, err := c.Get(context.Background(), "k", func(context.Context) (any, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	v, err := c.Get(context.Background(), "k", func(context.Context) (any, error) { return "ok", nil })
	if err != nil || v != "ok" {
		t.Errorf("a failed load was cached: %v, %v", v, err)
	}
}

func TestKeyedMutexSerialisesOneKeyOnly(t *testing.T) {
	k := NewKeyedMutex()
	var inside, maxInside atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				unlock := k.Lock("node-a")
				n := inside.Add(1)
				if n > maxInside.Load() {
					maxInside.Store(n)
				}
				runtime.Gosched()
				inside.Add(-1)
				unlock()
			}
		}()
	}
	wg.Wait()
	if m := maxInside.Load(); m != 1 {
		t.Errorf("%d holders of one key at once, want 1", m)
	}
	// Another key is independent: locking it while a is held must not block.
	unlockA := k.Lock("node-a")
	unlockB := k.Lock("node-b")
	unlockB()
	unlockA()
}

// storage.cfg stays read while an apply writes guests, and is read again
// after any write that may change it.
func TestAfterWriteDropsStorageConfigOnlyOnStorageWrites(t *testing.T) {
	cases := []struct {
		method, path string
		drops        bool
	}{
		{"POST", "/nodes/pve1/qemu", false},
		{"POST", "/nodes/pve1/qemu/100/config", false},
		{"PUT", "/nodes/pve1/network/vmbr1", false},
		{"POST", "/cluster/ha/resources", false},
		{"POST", "/storage", true},
		{"PUT", "/storage/ceph", true},
		{"DELETE", "/storage/ceph", true},
		{"POST", "/nodes/pve1/ceph/pool", true},
		{"DELETE", "/nodes/pve1/ceph/pool/rbd", true},
		{"POST", "/nodes/pve1/ceph/fs/cephfs", true},
		{"POST", "/nodes/pve1/disks/lvmthin", true},
		{"DELETE", "/nodes/pve1/disks/zfs/tank", true},
		{"POST", "/cluster/config/join", true},
	}
	for _, c := range cases {
		pd := &ProviderData{Reads: NewReadCache()}
		loads := 0
		load := func(context.Context) (any, error) { loads++; return loads, nil }
		_, _ = pd.Reads.Get(context.Background(), storageKey, load)
		pd.AfterWrite(c.method, c.path)
		_, _ = pd.Reads.Get(context.Background(), storageKey, load)
		if dropped := loads == 2; dropped != c.drops {
			t.Errorf("%s %s: storage.cfg read again = %v, want %v", c.method, c.path, dropped, c.drops)
		}
	}
}
