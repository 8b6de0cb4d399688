package dir

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

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
var errEscapes = errors.New("dir: path escapes from the store's directory")

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
	fd, ok, err := b.openFd(name, flags)
	if !ok || err != nil {
		return nil, ok, err
	}
	return os.NewFile(uintptr(fd), name), true, nil
}

// openFd is open returning the descriptor.
func (b *beneath) openFd(name string, flags int) (fd int, ok bool, err error) {
	if b.off.Load() {
		return -1, false, nil
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.dir < 0 {
		return -1, true, &fs.PathError{Op: "open", Path: name, Err: fs.ErrClosed}
	}
	how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS}
	for {
		fd, err := unix.Openat2(b.dir, name, &how)
		switch err {
		case nil:
			return fd, true, nil
		case unix.EINTR, unix.EAGAIN:
			continue // EAGAIN: a rename raced the resolution
		case unix.ENOSYS, unix.EPERM:
			b.off.Store(true)
			return -1, false, nil
		case unix.EXDEV:
			return -1, true, fmt.Errorf("open %s: %w", name, errEscapes)
		default:
			return -1, true, &fs.PathError{Op: "open", Path: name, Err: err}
		}
	}
}

// openRead opens name for reading and returns it with its file
// information. The file is the bare descriptor, read with pread(2): an
// *os.File would cost two more system calls to open (its poller's
// fcntl and epoll_ctl) and one more fstat, on every chunk and document.
func (b *beneath) openRead(name string, flags int) (f readFile, fi fs.FileInfo, ok bool, err error) {
	fd, ok, err := b.openFd(name, flags)
	if !ok || err != nil {
		return nil, nil, ok, err
	}
	fi, err = fstat(fd, name)
	if err != nil {
		unix.Close(fd)
		return nil, nil, true, err
	}
	return fdFile{fd: fd, name: name}, fi, true, nil
}

// fdFile is a file open for reading by its descriptor.
type fdFile struct {
	fd   int
	name string
}

// ReadAt implements io.ReaderAt as os.File does: it reads until p is
// full, failing with io.EOF at the end of the file.
func (f fdFile) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		m, err := unix.Pread(f.fd, p[n:], off+int64(n))
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return n, &fs.PathError{Op: "read", Path: f.name, Err: err}
		case m == 0:
			return n, io.EOF
		}
		n += m
	}
	return n, nil
}

// Close implements io.Closer.
func (f fdFile) Close() error { return unix.Close(f.fd) }

// fstat returns the file information of the open descriptor fd.
func fstat(fd int, name string) (fs.FileInfo, error) {
	var st syscall.Stat_t
	for {
		err := syscall.Fstat(fd, &st)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
		}
		return fileInfo{name: path.Base(name), st: st}, nil
	}
}

// fileInfo is the fs.FileInfo of a stat(2) result; Sys returns the
// *syscall.Stat_t, as package os's does.
type fileInfo struct {
	name string
	st   syscall.Stat_t
}

func (fi fileInfo) Name() string       { return fi.name }
func (fi fileInfo) Size() int64        { return fi.st.Size }
func (fi fileInfo) ModTime() time.Time { return time.Unix(fi.st.Mtim.Unix()) }
func (fi fileInfo) IsDir() bool        { return fi.Mode().IsDir() }
func (fi fileInfo) Sys() any           { return &fi.st }

// sameFile reports whether a and b, from fstat or package os, describe the
// same file (os.SameFile knows only its own).
func sameFile(a, b fs.FileInfo) bool {
	sa, okA := a.Sys().(*syscall.Stat_t)
	sb, okB := b.Sys().(*syscall.Stat_t)
	if okA && okB {
		return sa.Dev == sb.Dev && sa.Ino == sb.Ino
	}
	return os.SameFile(a, b)
}

// Mode converts the stat mode as package os does.
func (fi fileInfo) Mode() fs.FileMode {
	m := fs.FileMode(fi.st.Mode & 0o777)
	switch fi.st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	}
	if fi.st.Mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if fi.st.Mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if fi.st.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// stat returns the file information of name, following links as open does.
func (b *beneath) stat(name string) (fi fs.FileInfo, ok bool, err error) {
	fd, ok, err := b.openFd(name, unix.O_PATH)
	if !ok || err != nil {
		return nil, ok, err
	}
	defer unix.Close(fd)
	fi, err = fstat(fd, name)
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
