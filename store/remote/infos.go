package remote

import (
	"context"
	"sync"

	"github.com/zarrfs/zarrfs/store"
)

// Infos keeps what earlier answers of a network store said of its keys
// (size, Last-Modified), so that a Stat after a read needs no request.
// A store that changes keys calls Forget before and after each change; an
// answer to a request that started before a change (Generation) is not
// kept. The zero value is ready to use.
type Infos struct {
	mu  sync.Mutex
	m   map[string]store.Info
	gen uint64
}

// Generation returns the count of changes so far; pass it to Remember.
func (c *Infos) Generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// Remember keeps info for key unless a change was made since gen.
func (c *Infos) Remember(key string, gen uint64, info store.Info) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	if c.m == nil {
		c.m = map[string]store.Info{}
	}
	c.m[key] = info
}

// Forget drops what is known of key and counts a change.
func (c *Infos) Forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	delete(c.m, key)
}

// Stat is a network store's Stat: it checks key and ctx, answers from what
// is known of key, and otherwise asks fetch (which retries as it must) and
// keeps its answer.
func (c *Infos) Stat(ctx context.Context, key string, fetch func(ctx context.Context) (store.Info, error)) (store.Info, error) {
	if err := store.CheckKey(ctx, key); err != nil {
		return store.Info{}, err
	}
	c.mu.Lock()
	info, ok := c.m[key]
	gen := c.gen
	c.mu.Unlock()
	if ok {
		return info, nil
	}
	info, err := fetch(ctx)
	if err != nil {
		return store.Info{}, err
	}
	c.Remember(key, gen, info)
	return info, nil
}
