package icechunk

import (
	"container/list"
	"sync"
)

// Parsed snapshots and manifests are kept in two caches of their own,
// each an LRU bounded by the bytes its entries hold (about: the file's
// decompressed bytes plus a fixed cost per node or chunk reference). The
// bounds are fixed (Options.SnapshotCache, Options.ManifestCache; 64 MiB
// each by default) rather than a share of --cache-size: that bound is
// for decoded chunks, while these are metadata a mount reads once per
// snapshot or manifest; 64 MiB holds hundreds of typical snapshots and
// manifests and keeps a repository with thousands of them (a spec 1
// ancestry walked for info.txt, a --live branch moving for days) from
// holding them all. An evicted snapshot still open in a directory stays
// alive through that directory; it is only read again when asked anew.

// onceCache is a cache of values by id, each loaded once (concurrent
// callers wait for the one load), least recently used dropped first
// when the bytes held pass limit; the newest entry always stays. A load
// that was cancelled is not remembered.
type onceCache[V any] struct {
	limit int

	mu    sync.Mutex
	byID  map[ID]*list.Element // of *onceEntry[V]
	lru   *list.List
	bytes int
}

type onceEntry[V any] struct {
	id   ID
	once sync.Once
	v    V
	err  error
	held int // bytes counted in onceCache.bytes; under its mu
}

func newOnceCache[V any](limit int) *onceCache[V] {
	return &onceCache[V]{limit: limit, byID: map[ID]*list.Element{}, lru: list.New()}
}

// get returns the value of id, calling load (value, bytes held, error)
// when it is not cached.
func (c *onceCache[V]) get(id ID, load func() (V, int, error)) (V, error) {
	c.mu.Lock()
	el := c.byID[id]
	if el == nil {
		el = c.lru.PushFront(&onceEntry[V]{id: id})
		c.byID[id] = el
	} else {
		c.lru.MoveToFront(el)
	}
	e := el.Value.(*onceEntry[V])
	c.mu.Unlock()
	e.once.Do(func() {
		var size int
		e.v, size, e.err = load()
		c.mu.Lock()
		if e.err == nil && c.byID[id] == el { // not evicted while loading
			e.held = size
			c.bytes += size
			c.evict()
		}
		c.mu.Unlock()
	})
	if cancelled(e.err) { // read again next time
		c.mu.Lock()
		if c.byID[id] == el {
			c.lru.Remove(el)
			delete(c.byID, id)
		}
		c.mu.Unlock()
	}
	return e.v, e.err
}

// evict drops the least recently used entries over the bound, keeping
// the newest. c.mu is held.
func (c *onceCache[V]) evict() {
	for c.bytes > c.limit && c.lru.Len() > 1 {
		el := c.lru.Back()
		e := el.Value.(*onceEntry[V])
		c.lru.Remove(el)
		delete(c.byID, e.id)
		c.bytes -= e.held
	}
}

// stats returns the entries and bytes held.
func (c *onceCache[V]) stats() (n, bytes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len(), c.bytes
}
