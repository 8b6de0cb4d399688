package dir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// beneath opens files below the root with openat2(2) and RESOLVE_BENEATH:
// one system call per open, where os.Root opens and closes every folder on
// the way (a v2 node's three documents, each two folders down, cost nine
// opens). The kernel then decides containment as os.Root does: symbolic
// links are followed while they stay below the root; one leading out of
// it, an absolute one and a ".." that climbs above the root fail (EXDEV).
// Kernels before 5.6 (or sandboxes that refuse openat2) answer ENOSYS or
// EPERM: the store then keeps using os.Root.
type beneath struct {
	off atomic.Bool // openat2 is unavailable: use os.Root

	// mu guards dir against close: an open must never resolve against
	// a closed descriptor whose number the process has given to
	// another directory since.
	mu  sync.RWMutex
	dir int // the root, opened O_PATH; -1 once closed
}

// errEscapes is the error of a key whose resolution leaves the root: not
// ErrNotExist, so that it is reported rather than read as a missing value.
var errEscapes = errors.New("path escapes from the store's directory")

func openBeneath(path string) (*beneath, error) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return &beneath{dir: fd}, nil
}

// open opens name (a valid key, or ".") with flags. ok is false when
// openat2 is unavailable and the caller must use os.Root.
func (b *beneath) open(name string, flags int) (f *os.File, ok bool, err error) {
	if b.off.Load() {
		return nil, false, nil
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.dir < 0 {
		return nil, true, &fs.PathError{Op: "open", Path: name, Err: fs.ErrClosed}
	}
	how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS}
	for {
		fd, err := unix.Openat2(b.dir, name, &how)
		switch err {
		case nil:
			return os.NewFile(uintptr(fd), name), true, nil
		case unix.EINTR, unix.EAGAIN:
			continue // EAGAIN: a rename raced the resolution
		case unix.ENOSYS, unix.EPERM:
			b.off.Store(true)
			return nil, false, nil
		case unix.EXDEV:
			return nil, true, fmt.Errorf("open %s: %w", name, errEscapes)
		default:
			return nil, true, &fs.PathError{Op: "open", Path: name, Err: err}
		}
	}
}

// stat returns the file information of name, following links as open does.
func (b *beneath) stat(name string) (fi fs.FileInfo, ok bool, err error) {
	f, ok, err := b.open(name, unix.O_PATH)
	if !ok || err != nil {
		return nil, ok, err
	}
	defer f.Close()
	fi, err = f.Stat()
	return fi, true, err
}

func (b *beneath) close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dir < 0 {
		return nil
	}
	err := unix.Close(b.dir)
	b.dir = -1
	return err
}

// disable makes the store use os.Root (for tests of the fallback).
func (b *beneath) disable() { b.off.Store(true) }
