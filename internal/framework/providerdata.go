// Package framework holds the glue every resource shares: the configured
// provider data, per-node locks, the per-run read cache and diagnostics.
package framework

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// ProviderData is what the provider's Configure hands to every resource and
// data source. One value lives for one Terraform command (plan, apply, ...).
type ProviderData struct {
	// Client talks to the provider's endpoint: the whole cluster once one
	// exists, else that one standalone node.
	Client *pve.Client
	// NodeLocks serialises operations that must not overlap on one node,
	// such as network reloads; different nodes proceed independently.
	NodeLocks *KeyedMutex
	// Reads shares list reads between resources in one command, so that
	// refreshing N interfaces of a node costs one GET, not N.
	Reads *ReadCache
	// NodeExec runs commands on nodes over SSH (the provider's ssh block);
	// nil when SSH is not configured, with NodeExecUnavailable saying why.
	// Resources check it with RequireNodeExec.
	NodeExec            *nodeexec.Pool
	NodeExecUnavailable string
	// NodeExecDeferred is set when SSH settings are not known until apply:
	// plans go ahead, applies report NodeExecUnavailable.
	NodeExecDeferred bool
	// Plan collects what every resource of the current plan changes, for
	// the checks of changes that are unsafe only together
	// (plan_registry.go).
	Plan *PlanRegistry

	// notes are what this command's plan creates, for the reference checks
	// of the resources planned after it (PlanNote, refs_plan_notes.go).
	notes planNotes

	// standalone holds clients for nodes that are not (yet) members of the
	// endpoint's cluster, reached through their own API.
	standalone map[string]*pve.Client
}

// NewProviderData wires a client with fresh locks and an empty cache.
// standalone maps node names to clients of their own endpoints.
func NewProviderData(c *pve.Client, standalone map[string]*pve.Client) *ProviderData {
	return &ProviderData{Client: c, NodeLocks: NewKeyedMutex(), Reads: NewReadCache(), Plan: NewPlanRegistry(), standalone: standalone}
}

// SharedReadsPrefix starts the cache keys of SharedRead: reads the
// refreshes of many resources share (a node's VM list, a VM's pending
// config, the cluster's status). Every write drops them, since a write
// anywhere (a VM's, its HA resource's, a join) may change what they hold.
const SharedReadsPrefix = "shared/"

// SharedRead is CachedRead under SharedReadsPrefix+key: loaded once per
// command and dropped by every write. fresh loads it anew (and shares
// that): a read-back after a write, which must not take a value another
// resource loaded while the write's task still ran.
func SharedRead[T any](ctx context.Context, pd *ProviderData, fresh bool, key string, load func(context.Context) (T, error)) (T, error) {
	key = SharedReadsPrefix + key
	if fresh {
		pd.Reads.Invalidate(key)
	}
	return CachedRead(ctx, pd.Reads, key, load)
}

// AfterWrite is the clients' write hook (pve.Config.AfterWrite).
func (pd *ProviderData) AfterWrite(method, path string) {
	pd.Reads.InvalidatePrefix(SharedReadsPrefix)
	if writesStorageConfig(path) {
		pd.Reads.Invalidate(storageKey)
	}
}

// NodeClient returns the client that reaches node. A node the endpoint
// lists in GET /nodes is reached through the endpoint (PVE forwards
// /nodes/{node}/... inside a cluster); a node configured in
// standalone_nodes that the endpoint does not list is reached through its
// own endpoint, as before it joins the cluster. Any other node goes to the
// endpoint, which then answers PVE's own error.
func (pd *ProviderData) NodeClient(ctx context.Context, node string) (*pve.Client, error) {
	own, ok := pd.standalone[node]
	if !ok {
		return pd.Client, nil
	}
	members, err := pd.members(ctx)
	if err != nil {
		return nil, fmt.Errorf("list the nodes of %s to decide how to reach node %s: %w", pd.Client.Endpoint(), node, err)
	}
	if members[node] {
		return pd.Client, nil
	}
	return own, nil
}

// StandaloneClient is the client of node's own endpoint from
// standalone_nodes, whether or not the cluster lists the node.
func (pd *ProviderData) StandaloneClient(node string) (*pve.Client, bool) {
	c, ok := pd.standalone[node]
	return c, ok
}

// IsStandalone reports whether node is configured in standalone_nodes.
func (pd *ProviderData) IsStandalone(node string) bool {
	_, ok := pd.standalone[node]
	return ok
}

// Members are the nodes the endpoint lists (GET /nodes, read once per
// command and shared with NodeClient), sorted.
func (pd *ProviderData) Members(ctx context.Context) ([]string, error) {
	members, err := pd.members(ctx)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(members))
	for n := range members {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

func (pd *ProviderData) members(ctx context.Context) (map[string]bool, error) {
	nodes, err := pd.Nodes(ctx)
	if err != nil {
		return nil, err
	}
	m := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		m[n.Node] = true
	}
	return m, nil
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

// Put stores v under key as a completed load, replacing what is there.
func (c *ReadCache) Put(key string, v any) {
	e := &cacheEntry{done: make(chan struct{}), value: v}
	close(e.done)
	c.mu.Lock()
	c.entries[key] = e
	c.mu.Unlock()
}

// Peek returns key's value when a load of it completed without error,
// without loading or waiting.
func (c *ReadCache) Peek(key string) (any, bool) {
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if !ok {
		return nil, false
	}
	select {
	case <-e.done:
		return e.value, e.err == nil
	default:
		return nil, false
	}
}

// Invalidate drops key so the next Get loads it again.
func (c *ReadCache) Invalidate(key string) {
	c.mu.Lock()
	delete(c.entries, key)
	c.mu.Unlock()
}

// InvalidatePrefix drops every key that starts with prefix.
func (c *ReadCache) InvalidatePrefix(prefix string) {
	c.mu.Lock()
	for k := range c.entries {
		if strings.HasPrefix(k, prefix) {
			delete(c.entries, k)
		}
	}
	c.mu.Unlock()
}

// CachedRead is ReadCache.Get for one type: it loads key with load once per
// command and returns the value as T. A different type under key is a
// provider bug (two callers sharing a key with different loads).
func CachedRead[T any](ctx context.Context, c *ReadCache, key string, load func(context.Context) (T, error)) (T, error) {
	v, err := c.Get(ctx, key, func(ctx context.Context) (any, error) { return load(ctx) })
	if err != nil {
		var zero T
		return zero, err
	}
	t, ok := v.(T)
	if !ok {
		var zero T
		return zero, fmt.Errorf("read cache holds %T under %q, not %T (provider bug)", v, key, zero)
	}
	return t, nil
}
