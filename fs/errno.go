//go:build linux

package fs

import (
	"context"
	"errors"
	"log"
	"sync"
	"syscall"

	"github.com/zarrfs/zarrfs/zarr"
)

// maxLoggedCauses bounds the memory spent remembering which causes were
// logged; past it the memory is cleared and causes may be logged again.
const maxLoggedCauses = 4096

// errorLog is the one place that turns engine errors into errno values. It
// logs each distinct cause once, not once per read.
type errorLog struct {
	logger *log.Logger // nil: log nothing

	mu   sync.Mutex
	seen map[string]struct{}
}

// errnoOf maps an engine error to the errno a FUSE reply carries:
// ErrNotExist is ENOENT, ErrUnsupported EOPNOTSUPP, a cancelled request
// EINTR, anything else EIO.
func errnoOf(err error) syscall.Errno {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, zarr.ErrNotExist):
		return syscall.ENOENT
	case errors.Is(err, zarr.ErrUnsupported):
		return syscall.EOPNOTSUPP
	case errors.Is(err, context.Canceled):
		return syscall.EINTR
	default:
		return syscall.EIO
	}
}

// errno returns errnoOf(err) and logs err the first time its message is
// seen, unless it is a plain ENOENT or an interrupted request.
func (l *errorLog) errno(err error) syscall.Errno {
	e := errnoOf(err)
	if e == 0 || e == syscall.ENOENT || e == syscall.EINTR || l.logger == nil {
		return e
	}
	msg := err.Error()
	l.mu.Lock()
	_, dup := l.seen[msg]
	if !dup {
		if l.seen == nil || len(l.seen) >= maxLoggedCauses {
			l.seen = make(map[string]struct{})
		}
		l.seen[msg] = struct{}{}
	}
	l.mu.Unlock()
	if !dup {
		l.logger.Printf("%s (%v)", msg, e)
	}
	return e
}
