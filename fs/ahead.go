package fs

import (
	"context"
	"sync"
	"time"

	"github.com/zarrfs/zarrfs/view"
)

// maxAhead bounds the directories waiting to be listed ahead.
const maxAhead = 4096

// listAhead lists directories in the background, one at a time, in the
// order they were made: a reader that lists a group (find, ls -R) lists
// its arrays next, and their listings (the files of each, and their sizes
// when the reader stats them) are then ready,
// made on a core that would otherwise wait for the reader's own work in
// the kernel. Its zero value is ready to use.
type listAhead struct {
	mu      sync.Mutex
	queue   []*dirNode
	running bool
}

// add queues d to be listed, unless too many wait already.
func (a *listAhead) add(d *dirNode) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.queue) >= maxAhead {
		return
	}
	a.queue = append(a.queue, d)
	if !a.running {
		a.running = true
		go a.run()
	}
}

// aheadTimeout bounds the listing of one directory ahead (the sizes of
// documents of a remote store are its stored bytes, fetched).
const aheadTimeout = time.Minute

// run lists the queued directories until none is left.
func (a *listAhead) run() {
	for {
		a.mu.Lock()
		if len(a.queue) == 0 {
			a.running = false
			a.queue = nil
			a.mu.Unlock()
			return
		}
		d := a.queue[0]
		a.queue = a.queue[1:]
		a.mu.Unlock()
		// The sizes too (data.hdr renders) when listings carry them,
		// but none that decodes the array (data.txt): that is for a
		// reader of the array itself.
		ctx, cancel := context.WithTimeout(context.Background(), aheadTimeout)
		if l, err := d.list(ctx); err == nil && d.m.stats.on() {
			for _, e := range l.entries {
				if e.file != nil && !view.SizeDecodes(e.file) {
					e.file.Size(ctx)
				}
			}
		}
		cancel()
	}
}
