package zarr

import (
	"context"
	"errors"
	"time"

	"github.com/zarrfs/zarrfs/store"
)

// staleIfError reports whether a live hierarchy's array serves the cached
// chunk key, whose revalidation failed with err, as it was (HTTP's
// stale-if-error): when the store could not answer (down, timed out), not
// when it answered that the chunk is gone, and not when the reader gave up
// (ctx). The first such chunk of an outage is logged (Options.Logf).
func (a *Array) staleIfError(ctx context.Context, key string, err error) bool {
	if err == nil {
		a.cache.revalidated() // changed, and read
	}
	if err == nil || errors.Is(err, store.ErrNotExist) || ctx.Err() != nil {
		return false
	}
	c := a.cache
	c.staleUntil.Store(time.Now().Add(staleRetry).UnixNano())
	if c.stale.CompareAndSwap(false, true) && c.logf != nil {
		c.logf("%v: serving cached chunks as they were (--live) until the store answers again", store.Errorf(a.st, err, "array %q: revalidating chunk %q", "/"+a.path, key))
	}
	return true
}

// revalidated records that a revalidation succeeded: the next failure is
// a new outage, logged again.
func (c *chunkCache) revalidated() {
	c.stale.Store(false)
	c.staleUntil.Store(0)
}

// staleRetry is how long after a failed revalidation cached chunks are
// served without asking the store.
const staleRetry = 5 * time.Second

// servingStale reports whether a revalidation failed less than staleRetry
// ago: the cached chunk is then served without asking the store.
func (c *chunkCache) servingStale() bool {
	until := c.staleUntil.Load()
	return until != 0 && time.Now().UnixNano() < until
}
