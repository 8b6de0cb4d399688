//go:build linux

package fs

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// callerCheck is how often a long read checks that the process that asked
// for it still exists.
const callerCheck = 100 * time.Millisecond

// errCallerGone is the cause of a read cancelled because its caller exited.
var errCallerGone = errors.New("fs: the reading process has exited")

// whileCallerLives returns ctx cancelled once the process that sent the
// request (the FUSE header's pid) no longer exists, checked every
// callerCheck from the first on. The kernel interrupts a killed reader's
// own reads (FUSE INTERRUPT), but not the read-ahead requests it sent in
// the background for that reader's page cache: those hold the file open
// (so RELEASE waits for them) and, over tiny chunks on a store that
// cannot list, would go on for minutes for nobody. A pid of 0 (one the
// kernel could not name) or one that is not ours to signal counts as
// alive. stop ends the watch.
func whileCallerLives(ctx context.Context) (_ context.Context, stop func()) {
	fc, ok := ctx.(*fuse.Context)
	if !ok || fc.Pid == 0 {
		return ctx, func() {}
	}
	pid := int(fc.Pid)
	ctx, cancel := context.WithCancelCause(ctx)
	var mu sync.Mutex
	stopped := false
	var t *time.Timer
	// The callback takes mu before it reads t: holding mu until t is set
	// keeps a first check that fires at once (a loaded machine) from
	// reading t before AfterFunc has returned it.
	mu.Lock()
	defer mu.Unlock()
	t = time.AfterFunc(callerCheck, func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		if errors.Is(unix.Kill(pid, 0), unix.ESRCH) {
			cancel(errCallerGone)
			return
		}
		t.Reset(callerCheck)
	})
	return ctx, func() {
		mu.Lock()
		stopped = true
		mu.Unlock()
		t.Stop()
		cancel(nil)
	}
}
