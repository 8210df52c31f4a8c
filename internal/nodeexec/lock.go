package nodeexec

import (
	"context"
	"sync"
)

// keyedMutex is one mutex per key, created on demand, whose Lock gives up
// when the context ends.
type keyedMutex struct {
	mu    sync.Mutex
	locks map[string]chan struct{}
}

func newKeyedMutex() *keyedMutex { return &keyedMutex{locks: map[string]chan struct{}{}} }

func (k *keyedMutex) lock(ctx context.Context, key string) (func(), error) {
	k.mu.Lock()
	ch, ok := k.locks[key]
	if !ok {
		ch = make(chan struct{}, 1)
		k.locks[key] = ch
	}
	k.mu.Unlock()
	select {
	case ch <- struct{}{}:
		var once sync.Once
		return func() { once.Do(func() { <-ch }) }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
