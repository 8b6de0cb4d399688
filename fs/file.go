package fs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/zarrfs/zarrfs/zarr"
)

// bytesFile is a file whose content is known when it is looked up: a
// metadata document or info.txt.
type bytesFile struct {
	gofs.Inode
	readOnly
	m     *mountFS
	data  []byte
	mtime time.Time
}

var (
	_ = (gofs.NodeOpener)((*bytesFile)(nil))
	_ = (gofs.NodeReader)((*bytesFile)(nil))
	_ = (gofs.NodeGetattrer)((*bytesFile)(nil))
	_ = (gofs.NodeSetattrer)((*bytesFile)(nil))
	_ = (gofs.NodeSetxattrer)((*bytesFile)(nil))
	_ = (gofs.NodeRemovexattrer)((*bytesFile)(nil))
	_ = (gofs.NodeStatfser)((*bytesFile)(nil))
)

func (f *bytesFile) attr(_ context.Context, out *fuse.Attr) {
	f.m.setAttr(out, fileMode, uint64(len(f.data)), 1, f.mtime)
}

// Getattr reports the file's attributes.
func (f *bytesFile) Getattr(ctx context.Context, _ gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	f.attr(ctx, &out.Attr)
	return 0
}

// Open lets the kernel keep the file's pages cached: it never changes.
func (f *bytesFile) Open(_ context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	if errno := checkReadOnly(flags); errno != 0 {
		return nil, 0, errno
	}
	return nil, fuse.FOPEN_KEEP_CACHE, 0
}

// Read copies from the file's content.
func (f *bytesFile) Read(_ context.Context, _ gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if off < 0 {
		return nil, syscall.EINVAL
	}
	if off >= int64(len(f.data)) {
		return fuse.ReadResultData(nil), 0
	}
	return fuse.ReadResultData(f.data[off:min(int64(len(f.data)), off+int64(len(dest)))]), 0
}

// dataFile is an array's `data` (the decoded contents) or `data.npy` (the
// same behind a NumPy header).
type dataFile struct {
	gofs.Inode
	readOnly
	m      *mountFS
	node   *zarr.Node
	header []byte // the .npy header; nil for data

	xOnce sync.Once
	x     xattrs // the array's, made when first asked for (xattrs)
}

var (
	_ = (gofs.NodeOpener)((*dataFile)(nil))
	_ = (gofs.NodeReader)((*dataFile)(nil))
	_ = (gofs.NodeGetattrer)((*dataFile)(nil))
	_ = (gofs.NodeGetxattrer)((*dataFile)(nil))
	_ = (gofs.NodeListxattrer)((*dataFile)(nil))
	_ = (gofs.NodeSetattrer)((*dataFile)(nil))
	_ = (gofs.NodeSetxattrer)((*dataFile)(nil))
	_ = (gofs.NodeRemovexattrer)((*dataFile)(nil))
	_ = (gofs.NodeStatfser)((*dataFile)(nil))
)

func newDataFile(m *mountFS, n *zarr.Node, npy bool) *dataFile {
	f := &dataFile{m: m, node: n}
	if a := n.Array; a != nil && npy {
		f.header = NpyHeader(a.DataType.NumPy, a.Shape)
	}
	return f
}

// xattrs returns the file's extended attributes, made on the first call:
// listing a directory makes its files, few of which are asked for them.
func (f *dataFile) xattrs() xattrs {
	f.xOnce.Do(func() {
		if a := f.node.Array; a != nil {
			f.x = arrayXattrs(a, f.node.Format)
		}
	})
	return f.x
}

// size is the file's size: the header and the array's contents.
func (f *dataFile) size() int64 {
	if f.node.Array == nil {
		return 0
	}
	return int64(len(f.header)) + f.node.Array.Size()
}

// readable returns why the contents cannot be read, or nil.
func (f *dataFile) readable() error {
	switch {
	case f.node.Err != nil:
		return f.node.Err
	case f.node.Array == nil:
		return fmt.Errorf("array %q: %w", f.node.Path, zarr.ErrUnsupported)
	default:
		return f.node.Array.Err
	}
}

func (f *dataFile) attr(_ context.Context, out *fuse.Attr) {
	f.m.setAttr(out, fileMode, uint64(f.size()), 1, f.node.ModTime)
}

// Getattr reports the file's attributes.
func (f *dataFile) Getattr(ctx context.Context, _ gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	f.attr(ctx, &out.Attr)
	return 0
}

// Open fails when the array cannot be decoded; otherwise it lets the
// kernel keep the file's pages cached.
func (f *dataFile) Open(_ context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	if errno := checkReadOnly(flags); errno != 0 {
		return nil, 0, errno
	}
	if err := f.readable(); err != nil {
		return nil, 0, f.m.log.errno(err)
	}
	return nil, fuse.FOPEN_KEEP_CACHE, 0
}

// Read replies with the header's bytes, then the array's contents through
// Array.ReadSlices: slices of the decoded chunks, not copied into dest.
func (f *dataFile) Read(ctx context.Context, _ gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if off < 0 {
		return nil, syscall.EINVAL
	}
	if err := f.readable(); err != nil {
		return nil, f.m.log.errno(err)
	}
	n := 0
	if off < int64(len(f.header)) {
		n = copy(dest, f.header[off:])
	}
	if n == len(dest) {
		return fuse.ReadResultData(dest[:n]), 0
	}
	dataOff := off + int64(n) - int64(len(f.header))
	vec, m, release, err := f.node.Array.ReadSlices(ctx, dest[n:], dataOff)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, f.m.log.errno(err)
	}
	if n > 0 {
		vec = append([][]byte{dest[:n]}, vec...)
	}
	return &slicesResult{vec: vec, size: n + m, release: release}, 0
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

// Getxattr reads a user.zarr.* attribute of the array.
func (f *dataFile) Getxattr(_ context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	if !ours(attr) {
		return 0, syscall.ENODATA
	}
	return f.xattrs().get(attr, dest)
}

// Listxattr lists the user.zarr.* attributes of the array.
func (f *dataFile) Listxattr(_ context.Context, dest []byte) (uint32, syscall.Errno) {
	return f.xattrs().list(dest)
}

// textFile is the data.txt of an array of variable-length elements. Its
// content is rendered once, when it is first needed.
type textFile struct {
	gofs.Inode
	readOnly
	m    *mountFS
	node *zarr.Node

	mu   sync.Mutex
	text []byte // nil until rendered
}

var (
	_ = (gofs.NodeOpener)((*textFile)(nil))
	_ = (gofs.NodeReader)((*textFile)(nil))
	_ = (gofs.NodeGetattrer)((*textFile)(nil))
	_ = (gofs.NodeGetxattrer)((*textFile)(nil))
	_ = (gofs.NodeListxattrer)((*textFile)(nil))
	_ = (gofs.NodeSetattrer)((*textFile)(nil))
	_ = (gofs.NodeSetxattrer)((*textFile)(nil))
	_ = (gofs.NodeRemovexattrer)((*textFile)(nil))
	_ = (gofs.NodeStatfser)((*textFile)(nil))
)

// render returns the file's content, rendering it on first use; a failed
// rendering is retried next time.
func (f *textFile) render(ctx context.Context) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.text != nil {
		return f.text, nil
	}
	if f.node.Err != nil {
		return nil, f.node.Err
	}
	var b bytes.Buffer
	if err := WriteText(ctx, &b, f.node.Array); err != nil {
		return nil, err
	}
	f.text = append([]byte{}, b.Bytes()...) // not nil, even when empty
	return f.text, nil
}

// attr reports the size of the rendered text; 0 when it cannot be
// rendered (opening the file then reports why).
func (f *textFile) attr(ctx context.Context, out *fuse.Attr) {
	text, _ := f.render(ctx)
	f.m.setAttr(out, fileMode, uint64(len(text)), 1, f.node.ModTime)
}

// Getattr reports the file's attributes.
func (f *textFile) Getattr(ctx context.Context, _ gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	f.attr(ctx, &out.Attr)
	return 0
}

// Open fails when the elements cannot be read.
func (f *textFile) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	if errno := checkReadOnly(flags); errno != 0 {
		return nil, 0, errno
	}
	if _, err := f.render(ctx); err != nil {
		return nil, 0, f.m.log.errno(err)
	}
	return nil, fuse.FOPEN_KEEP_CACHE, 0
}

// Read copies from the rendered text.
func (f *textFile) Read(ctx context.Context, _ gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if off < 0 {
		return nil, syscall.EINVAL
	}
	text, err := f.render(ctx)
	if err != nil {
		return nil, f.m.log.errno(err)
	}
	if off >= int64(len(text)) {
		return fuse.ReadResultData(nil), 0
	}
	return fuse.ReadResultData(text[off:min(int64(len(text)), off+int64(len(dest)))]), 0
}

// Getxattr reads a user.zarr.* attribute of the array.
func (f *textFile) Getxattr(_ context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	if !ours(attr) {
		return 0, syscall.ENODATA
	}
	return arrayXattrs(f.node.Array, f.node.Format).get(attr, dest)
}

// Listxattr lists the user.zarr.* attributes of the array.
func (f *textFile) Listxattr(_ context.Context, dest []byte) (uint32, syscall.Errno) {
	return arrayXattrs(f.node.Array, f.node.Format).list(dest)
}
