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
	reopen func(context.Context) (*zarr.Hierarchy, error)
	log    *errorLog
	views  view.Config // the files each snapshot shows

	mu sync.Mutex
	v  *snapshot
	at time.Time // when v was opened, or its renewal last failed
}

// current returns the view to answer from. On a live mount whose view is
// older than the TTL it opens the hierarchy again first; when that fails
// (the store is down) it logs why and keeps the old view for another TTL,
// so that stat and ls keep answering from what was read before.
func (vs *snapshots) current(ctx context.Context) *snapshot {
	if vs.ttl <= 0 {
		return vs.v // set before the mount, never changed
	}
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if time.Since(vs.at) < vs.ttl {
		return vs.v
	}
	h, err := vs.reopen(ctx)
	switch {
	case err != nil && ctx.Err() != nil:
		// The request was interrupted, not the store: try again next time.
	case err != nil:
		vs.at = time.Now()
		vs.log.errno(fmt.Errorf("reading the hierarchy again (--live): %w; showing it as it was read before", err))
	default:
		vs.at = time.Now()
		vs.v = newSnapshot(h, vs.v.gen+1, vs.views)
	}
	return vs.v
}
