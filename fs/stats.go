//go:build linux

package fs

import (
	"sync/atomic"
	"time"
)

// statWindow is how long READDIRPLUS keeps sending files' attributes after
// a reader last looked a file up (a variable for tests that count
// requests on a slow machine).
var statWindow = 2 * time.Second

// statWatch tells whether readers of the mount stat the files they list,
// as the kernel's own "readdirplus auto" tells it for one directory, but
// across directories: ls -l, du, a file manager or find -size look up
// every file a listing gave without attributes; find printing names never
// does. A lookup of a file turns the attributes on for
// statWindow; while they are on no lookup follows a listing, so after the
// window a listing goes without them again, and a reader still statting
// turns them back on with the first file of its next directory. Its zero
// value has them off.
type statWatch struct {
	until atomic.Int64 // Unix nanoseconds until which listings carry attributes
}

// saw records a lookup of a file.
func (w *statWatch) saw() {
	w.until.Store(time.Now().Add(statWindow).UnixNano())
}

// on reports whether listings carry files' attributes.
func (w *statWatch) on() bool {
	return time.Now().UnixNano() < w.until.Load()
}
