// Package framework holds the glue every resource shares: the configured
// provider data, per-node locks, the per-run read cache and diagnostics.
package framework

import (
	"context"
	"sync"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// ProviderData is what the provider's Configure hands to every resource and
// data source. One value lives for one Terraform command (plan, apply, ...).
type ProviderData struct {
	Client *pve.Client
	// NodeLocks serialises operations that must not overlap on one node,
	// such as network reloads; different nodes proceed independently.
	NodeLocks *KeyedMutex
	// Reads shares list reads between resources in one command, so that
	// refreshing N interfaces of a node costs one GET, not N.
	Reads *ReadCache
}

// NewProviderData wires a client with fresh locks and an empty cache.
func NewProviderData(c *pve.Client) *ProviderData {
	return &ProviderData{Client: c, NodeLocks: NewKeyedMutex(), Reads: NewReadCache()}
}

// KeyedMutex is a set of mutexes created on demand, one per key.
type KeyedMutex struct {
	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

// NewKeyedMutex returns an empty KeyedMutex.
func NewKeyedMutex() *KeyedMutex { return &KeyedMutex{locks: map[string]*sync.Mutex{}} }

// Lock locks key and returns the function that unlocks it.
func (k *KeyedMutex) Lock(key string) (unlock func()) {
	k.mu.Lock()
	l, ok := k.locks[key]
	if !ok {
		l = &sync.Mutex{}
		k.locks[key] = l
	}
	k.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// ReadCache memoises list reads by key until a write invalidates them.
// Concurrent callers of one key share a single in-flight load.
type ReadCache struct {
	mu      sync.Mutex
	entries map[string]*cacheEntry
}

type cacheEntry struct {
	done  chan struct{}
	value any
	err   error
}

// NewReadCache returns an empty cache.
func NewReadCache() *ReadCache { return &ReadCache{entries: map[string]*cacheEntry{}} }

// Get returns the cached value of key, loading it once if needed. Failed
// loads are not cached, so a later caller retries.
func (c *ReadCache) Get(ctx context.Context, key string, load func(context.Context) (any, error)) (any, error) {
	c.mu.Lock()
	if e, ok := c.entries[key]; ok {
		c.mu.Unlock()
		select {
		case <-e.done:
			return e.value, e.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	e := &cacheEntry{done: make(chan struct{})}
	c.entries[key] = e
	c.mu.Unlock()

	e.value, e.err = load(ctx)
	if e.err != nil {
		c.mu.Lock()
		if c.entries[key] == e {
			delete(c.entries, key)
		}
		c.mu.Unlock()
	}
	close(e.done)
	return e.value, e.err
}

// Invalidate drops key so the next Get loads it again.
func (c *ReadCache) Invalidate(key string) {
	c.mu.Lock()
	delete(c.entries, key)
	c.mu.Unlock()
}
