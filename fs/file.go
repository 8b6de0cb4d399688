//go:build linux

package fs

import (
	"context"
	"errors"
	"io"
	"sync"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/zarrfs/zarrfs/view"
	"github.com/zarrfs/zarrfs/zarr"
)

// fileNode is one file of a node's directory: a view.File (a metadata
// document, data, data.npy, data.txt, info.txt …) as an inode. Every such
// file is immutable for the life of the view it was made from, so the
// kernel may keep its pages.
type fileNode struct {
	gofs.Inode
	readOnly
	m     *mountFS
	f     view.File
	mtime time.Time

	xOnce sync.Once
	x     xattrs // the file's, made when first asked for
}

var (
	_ = (gofs.NodeOpener)((*fileNode)(nil))
	_ = (gofs.NodeReader)((*fileNode)(nil))
	_ = (gofs.NodeGetattrer)((*fileNode)(nil))
	_ = (gofs.NodeGetxattrer)((*fileNode)(nil))
	_ = (gofs.NodeListxattrer)((*fileNode)(nil))
	_ = (gofs.NodeSetattrer)((*fileNode)(nil))
	_ = (gofs.NodeSetxattrer)((*fileNode)(nil))
	_ = (gofs.NodeRemovexattrer)((*fileNode)(nil))
	_ = (gofs.NodeStatfser)((*fileNode)(nil))
	_ = (gofs.NodeReleaser)((*fileNode)(nil))
)

// openFile is an open file's handle: its session, which the read-ahead
// its reads start runs in (zarr.WithSession), ends when the kernel
// releases the file (the last descriptor closed, the reader killed).
type openFile struct {
	session context.Context
	end     context.CancelFunc
}

// attr reports the file's size; 0 when it cannot be known (opening the
// file then reports why).
func (n *fileNode) attr(ctx context.Context, out *fuse.Attr) {
	size, _ := n.f.Size(ctx)
	n.m.setAttr(out, fileMode, uint64(size), 1, n.mtime)
	if view.Derived(n.f) {
		out.Blocks = 0 // du counts the decoded bytes once, in data
	}
}

// Getattr reports the file's attributes.
func (n *fileNode) Getattr(ctx context.Context, _ gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	n.attr(ctx, &out.Attr)
	return 0
}

// Open fails when the file cannot be read (an array zarrfs cannot decode,
// elements that cannot be rendered); otherwise it lets the kernel keep the
// file's pages cached, except for a view.Volatile file.
func (n *fileNode) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	if errno := checkReadOnly(flags); errno != 0 {
		return nil, 0, errno
	}
	if err := n.f.Check(ctx); err != nil {
		return nil, 0, n.m.log.errno(err)
	}
	session, end := context.WithCancel(context.Background())
	keep := uint32(fuse.FOPEN_KEEP_CACHE)
	if _, ok := n.f.(view.Volatile); ok {
		keep = fuse.FOPEN_DIRECT_IO // each read asks again (the disk cache's hit rate)
	}
	return &openFile{session: session, end: end}, keep, 0
}

// Release ends the session of the file's reads: read-ahead for it stops.
func (n *fileNode) Release(_ context.Context, fh gofs.FileHandle) syscall.Errno {
	if of, ok := fh.(*openFile); ok {
		of.end()
	}
	return 0
}

// Read replies with the file's bytes at off. Files that can (data,
// data.npy) reply with slices of the decoded chunks, not copied into dest.
func (n *fileNode) Read(ctx context.Context, fh gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if off < 0 {
		return nil, syscall.EINVAL
	}
	ctx, stop := whileCallerLives(ctx)
	defer stop()
	if of, ok := fh.(*openFile); ok {
		ctx = zarr.WithSession(ctx, of.session)
	}
	if sr, ok := n.f.(view.SliceReader); ok {
		vec, size, release, err := sr.ReadSlices(ctx, dest, off)
		if err != nil {
			return nil, n.m.log.errno(err)
		}
		return &slicesResult{vec: vec, size: size, release: release}, 0
	}
	k, err := n.f.ReadAt(ctx, dest, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, n.m.log.errno(err)
	}
	return fuse.ReadResultData(dest[:k]), 0
}

// slicesResult is a read's reply made of slices of decoded chunks (and of
// the request's buffer), written to the kernel with one writev without
// being copied together first; Done lets go of the chunks once it is sent.
type slicesResult struct {
	vec     [][]byte
	size    int
	release func()
	once    sync.Once
}

// Slices returns the reply's slices (go-fuse writes them with writev).
func (r *slicesResult) Slices() ([][]byte, fuse.Status) { return r.vec, fuse.OK }

// Bytes copies the reply into buf (a new buffer when buf is too small):
// go-fuse may call Done before it sends what Bytes returns, so that must
// not be a chunk's memory.
func (r *slicesResult) Bytes(buf []byte) ([]byte, fuse.Status) {
	if len(buf) < r.size {
		buf = make([]byte, r.size)
	}
	n := 0
	for _, s := range r.vec {
		n += copy(buf[n:], s)
	}
	return buf[:n], fuse.OK
}

// Size returns the reply's length.
func (r *slicesResult) Size() int { return r.size }

// Done releases the chunks the slices lie in.
func (r *slicesResult) Done() { r.once.Do(r.release) }

// xattrs returns the file's extended attributes (an array's data files
// carry the array's), made on the first call: listing a directory makes
// its files, few of which are asked for them.
func (n *fileNode) xattrs() xattrs {
	n.xOnce.Do(func() {
		if a, ok := n.f.(view.Attributed); ok {
			n.x = a.Xattrs()
		}
	})
	return n.x
}

// Getxattr reads a user.zarr.* attribute.
func (n *fileNode) Getxattr(_ context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	if !ours(attr) {
		return 0, notOurs(attr)
	}
	return n.xattrs().get(attr, dest)
}

// Listxattr lists the user.zarr.* attributes.
func (n *fileNode) Listxattr(_ context.Context, dest []byte) (uint32, syscall.Errno) {
	return n.xattrs().list(dest)
}
