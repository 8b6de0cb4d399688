//go:build linux

package fs

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/zarrfs/zarrfs/view"
	"github.com/zarrfs/zarrfs/zarr"
)

// snapshot is one generation of the hierarchy a mount shows. A mount of a
// store that does not change has one view for its whole life; a live
// mount (Config.Live) opens the hierarchy again when its view is older
// than the TTL, and every node then answers from the new view.
type snapshot struct {
	h     *zarr.Hierarchy
	views *view.Views // the files of h's nodes
	gen   uint64      // 0 for the first view; the inodes' StableAttr.Gen
}

func newSnapshot(h *zarr.Hierarchy, gen uint64, cfg view.Config) *snapshot {
	return &snapshot{h: h, views: view.New(h, cfg), gen: gen}
}

// snapshots holds the current snapshot of a mount and renews it on a live one.
type snapshots struct {
	ttl    time.Duration // 0: the view never expires
	reopen func(ctx context.Context, prev *zarr.Hierarchy) (*zarr.Hierarchy, error)
	log    *errorLog
	views  view.Config // the files each snapshot shows

	mu         sync.Mutex
	v          *snapshot
	at         time.Time     // when v was opened, or its renewal last failed
	refreshing bool          // a renewal is under way
	renewed    chan struct{} // closed when a renewal ends (tests wait on it)
}

// refreshTimeout bounds one renewal of a live mount's view (each request
// of it is bounded by the store's own timeout too).
const refreshTimeout = 5 * time.Minute

// current returns the view to answer from, at once. On a live mount whose
// view is older than the TTL it starts opening the hierarchy again in the
// background (one renewal at a time), and answers from the old view
// meanwhile (stale-while-revalidate): no stat or ls waits for the store.
// When the renewal fails (the store is down) it logs why and keeps the old
// view for another TTL.
func (vs *snapshots) current(context.Context) *snapshot {
	if vs.ttl <= 0 {
		return vs.v // set before the mount, never changed
	}
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if !vs.refreshing && time.Since(vs.at) >= vs.ttl {
		vs.refreshing = true
		vs.renewed = make(chan struct{})
		go vs.renew(vs.renewed)
	}
	return vs.v
}

// renew opens the hierarchy again and makes it the current view, then
// closes done.
func (vs *snapshots) renew(done chan struct{}) {
	defer close(done)
	ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
	defer cancel()
	vs.mu.Lock()
	prev := vs.v.h
	vs.mu.Unlock()
	h, err := vs.reopen(ctx, prev)
	vs.mu.Lock()
	defer vs.mu.Unlock()
	vs.refreshing = false
	vs.at = time.Now()
	if err != nil {
		vs.log.errno(fmt.Errorf("reading the hierarchy again (--live): %w; showing it as it was read before", err))
		return
	}
	vs.v = newSnapshot(h, vs.v.gen+1, vs.views)
}
