//go:build linux

package fs

import (
	"context"
	"sync"
	"time"

	"github.com/zarrfs/zarrfs/view"
)

// maxAhead bounds the directories waiting to be listed ahead.
const maxAhead = 4096

// listAhead lists directories in the background, one at a time: a reader
// that lists a group (find, ls -R) lists its arrays next, and their
// listings (the files of each, and their sizes when the reader stats them)
// are then ready, made on a core that would otherwise wait for the
// reader's own work in the kernel. Arrays are listed in the order they
// were made; when none waits, the group such a reader lists next (its
// children's metadata loaded). Its zero value is ready to use.
type listAhead struct {
	mu      sync.Mutex
	queue   []*dirNode
	next    *dirNode // the group a walk lists next, once no array waits
	running bool
}

// walk sets the group a walk of the tree lists next.
func (a *listAhead) walk(d *dirNode) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.next = d
	a.start()
}

// start runs the lister unless it runs. a.mu is held.
func (a *listAhead) start() {
	if !a.running {
		a.running = true
		go a.run()
	}
}

// add queues d to be listed, unless too many wait already.
func (a *listAhead) add(d *dirNode) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.queue) >= maxAhead {
		return
	}
	a.queue = append(a.queue, d)
	a.start()
}

// aheadTimeout bounds the listing of one directory ahead (the sizes of
// documents of a remote store are its stored bytes, fetched).
const aheadTimeout = time.Minute

// run lists the queued directories until none is left.
func (a *listAhead) run() {
	for {
		a.mu.Lock()
		var d *dirNode
		switch {
		case len(a.queue) > 0:
			d = a.queue[0]
			a.queue = a.queue[1:]
		case a.next != nil:
			d, a.next = a.next, nil
		default:
			a.running = false
			a.queue = nil
			a.mu.Unlock()
			return
		}
		a.mu.Unlock()
		if d.wasRead() {
			continue // the reader was first: listing it again would only keep it
		}
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
