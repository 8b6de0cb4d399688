//go:build linux

package fs

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	"github.com/zarrfs/zarrfs/internal/logonce"
	"github.com/zarrfs/zarrfs/zarr"
)

// errorLog is the one place that turns engine errors into errno values. It
// logs each distinct cause once, not once per read.
type errorLog struct {
	once logonce.Log // its Logger nil: log nothing
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
	if e == 0 || e == syscall.ENOENT || e == syscall.EINTR || l.once.Logger == nil {
		return e
	}
	msg := err.Error()
	l.once.Print(msg, fmt.Sprintf("%s (%v)", msg, e))
	return e
}
