// Package view makes the files a Zarr node's directory shows besides its
// child nodes: its metadata documents, an array's decoded contents (`data`,
// `data.npy`, `data.txt`), the headers that open `data` in the tools of
// other fields (data.hdr, data.nhdr), a group's arrays as one NetCDF file
// (dataset.nc) and the human-readable info.txt, with the extended
// attributes of each. It knows nothing of FUSE: the mount (package
// fs) maps these files to inodes, and the command line (cat, info) writes
// the same bytes, so the two cannot differ. README.md shows the layout;
// docs/ARCHITECTURE.md places the package among the others.
package view

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"

	"github.com/zarrfs/zarrfs/zarr"
)

// A File is one file of a node's directory. Its content is fixed for the
// life of the hierarchy it was made from.
type File interface {
	// Name is the file's name in the node's directory.
	Name() string
	// Size returns the file's exact length. Files whose length is known
	// from metadata decode nothing; a file whose length depends on the
	// elements (data.txt) renders its content on the first call.
	Size(ctx context.Context) (int64, error)
	// Check returns why the file cannot be read, or nil: the mount fails
	// open(2) with it.
	Check(ctx context.Context) error
	// ReadAt reads len(p) bytes at off, as io.ReaderAt does: fewer bytes
	// only with an error, io.EOF at the end.
	ReadAt(ctx context.Context, p []byte, off int64) (int, error)
}

// A SliceReader is a File that can answer a read with slices of decoded
// chunks instead of copying them into p (see zarr.Array.ReadSlices):
// release lets go of the chunks once the slices have been used.
type SliceReader interface {
	File
	ReadSlices(ctx context.Context, p []byte, off int64) (vec [][]byte, n int, release func(), err error)
}

// An Attributed File carries extended attributes (an array's data files
// carry the array's).
type Attributed interface {
	File
	Xattrs() []Xattr
}

// Config chooses the optional files of a directory.
type Config struct {
	// Previews shows preview.png beside numeric arrays' data (preview.go).
	Previews bool
	// PreviewBudget bounds the bytes of decoded chunks one preview reads;
	// 0 means DefaultPreviewBudget.
	PreviewBudget int64
	// RootInfo, when set, gives lines the root's info.txt ends with, as
	// they are when it is made: what the layers below the engine (the
	// disk cache's hit rate) say of the mount, which the views cannot
	// ask them themselves.
	RootInfo func() string
}

// Views makes the files of the nodes of one hierarchy. What its files
// render (data.txt, previews) is kept by the files themselves, for as long
// as the caller keeps them (the mount: an inode's life).
type Views struct {
	h   *zarr.Hierarchy
	cfg Config
	// renders holds a token per preview being rendered: one per core.
	renders chan struct{}
}

// New returns the views of the nodes of h.
func New(h *zarr.Hierarchy, cfg Config) *Views {
	if cfg.PreviewBudget <= 0 {
		cfg.PreviewBudget = DefaultPreviewBudget
	}
	return &Views{h: h, cfg: cfg, renders: make(chan struct{}, runtime.NumCPU())}
}

// Files returns the files of node n's directory other than its child
// nodes, in the order a listing shows them: the metadata documents, then
// for an array its data views and the ENVI and NRRD headers of data, for a
// group with arrays of NetCDF types dataset.nc, then info.txt. children
// are a group's child nodes, as listed (nil for an array, or when the
// store cannot list). Making the files reads nothing from the store.
func (v *Views) Files(n *zarr.Node, children []*zarr.Node) []File {
	var fs []File
	for _, doc := range n.Documents {
		fs = append(fs, &docFile{doc: doc})
	}
	if n.Kind == zarr.KindArray || n.Array != nil { // a draft root may be both
		switch a := n.Array; {
		case a == nil:
			fs = append(fs, &dataFile{name: "data", node: n})
		case a.Variable():
			fs = append(fs, newTextFile(n))
		case !a.DataType().HasNumPyType(): // bfloat16, float8 …: no data.npy
			fs = append(fs, &dataFile{name: "data", node: n})
			fs = append(fs, headerFiles(v.h, n)...)
		default:
			fs = append(fs, &dataFile{name: "data", node: n},
				&dataFile{name: "data.npy", node: n, header: NpyHeader(a.DataType().NumPy, a.Shape())})
			fs = append(fs, headerFiles(v.h, n)...)
		}
	}
	fs = append(fs, v.previews(n)...)
	var left []string
	if n.Kind == zarr.KindGroup {
		var vars []ncVarSpec
		if vars, left = netcdfVariables(children); len(vars) > 0 {
			fs = append(fs, &netcdfFile{node: n, vars: vars})
		}
	}
	summary := ""
	if s, ok := v.h.Store().(summarizer); ok && n.Path == "" {
		summary = s.Summary()
	}
	info := func() []byte { return append(infoText(n, children, left), summary...) }
	if extra := v.cfg.RootInfo; extra != nil && n.Path == "" {
		return append(fs, &statusFile{metaFile: newMetaFile("info.txt", info), line: extra})
	}
	return append(fs, newMetaFile("info.txt", info))
}

// summarizer is a store that describes itself in its root's info.txt,
// after the root's own summary: an Icechunk repository (icechunk.Tree)
// lists its branches, tags and latest snapshots there.
type summarizer interface{ Summary() string }

// A Volatile File's content changes while its view lives (its length does
// not): a front end must not keep its pages (the mount opens it with
// direct I/O).
type Volatile interface {
	File
	Volatile()
}

// statusFile is the root's info.txt when Config.RootInfo is set: the
// node's summary, rendered once, and then RootInfo's line as it is at each
// read, padded with spaces to the width it had at the first read plus
// statusSlack (or cut to it), so that the file's size never changes.
type statusFile struct {
	*metaFile
	line func() string

	mu    sync.Mutex
	width int
}

// statusSlack is the room a status line has to grow (its counts).
const statusSlack = 40

func (f *statusFile) Volatile() {}

// content returns the summary and the status line as they are now.
func (f *statusFile) content(ctx context.Context) ([]byte, error) {
	text, err := f.render(ctx)
	if err != nil {
		return nil, err
	}
	line := strings.ReplaceAll(strings.TrimRight(f.line(), "\n"), "\n", " ")
	f.mu.Lock()
	if f.width == 0 {
		f.width = len(line) + statusSlack
	}
	w := f.width
	f.mu.Unlock()
	if len(line) > w {
		line = line[:w]
	}
	b := make([]byte, 0, len(text)+w+1)
	b = append(append(b, text...), line...)
	for range w - len(line) {
		b = append(b, ' ')
	}
	return append(b, '\n'), nil
}

func (f *statusFile) Size(ctx context.Context) (int64, error) {
	b, err := f.content(ctx)
	return int64(len(b)), err
}

func (f *statusFile) ReadAt(ctx context.Context, p []byte, off int64) (int, error) {
	b, err := f.content(ctx)
	if err != nil {
		return 0, err
	}
	return readBytes(b, p, off)
}

// SizeDecodes reports whether f's Size decodes the array's elements
// (data.txt, whose length depends on them): a caller making sizes ahead
// of a reader leaves those to the reader.
func SizeDecodes(f File) bool {
	_, ok := f.(*textFile)
	return ok
}

// Derived reports whether f is another view of bytes a sibling file
// already shows (data.npy of data, a group's dataset.nc of its arrays'
// data, preview.png): the mount reports no disk blocks for those (st_blocks
// 0, as /proc and sysfs do), so that du counts each array's decoded bytes
// once, in data.
func Derived(f File) bool {
	switch f := f.(type) {
	case *dataFile:
		return f.header != nil
	case *netcdfFile, *previewFile:
		return true
	}
	return false
}

// Find returns the file of files named name, or nil.
func Find(files []File, name string) File {
	for _, f := range files {
		if f.Name() == name {
			return f
		}
	}
	return nil
}

// copyBufSize is the size of the reads Copy makes: one FUSE reply's worth.
const copyBufSize = 1 << 20

// Copy writes the whole of f to w, streaming: it holds one buffer, not the
// file.
func Copy(ctx context.Context, w io.Writer, f File) error {
	if err := f.Check(ctx); err != nil {
		return err
	}
	size, err := f.Size(ctx)
	if err != nil {
		return err
	}
	buf := make([]byte, min(size, copyBufSize))
	for off := int64(0); off < size; {
		n, err := f.ReadAt(ctx, buf[:min(int64(len(buf)), size-off)], off)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
		}
		off += int64(n)
		if err != nil && !(errors.Is(err, io.EOF) && off == size) {
			return err
		}
	}
	return nil
}

// readBytes is ReadAt over content held in memory.
func readBytes(data, p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("read at %d: negative offset", off)
	}
	if off >= int64(len(data)) {
		return 0, io.EOF
	}
	n := copy(p, data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// docFile is a metadata document: the bytes the store holds, which for a
// document known from consolidated metadata are fetched at the first stat
// or read (zarr.Document.Bytes).
type docFile struct{ doc zarr.Document }

func (f *docFile) Name() string { return f.doc.Name }
func (f *docFile) Size(ctx context.Context) (int64, error) {
	b, err := f.doc.Bytes(ctx)
	return int64(len(b)), err
}
func (f *docFile) Check(ctx context.Context) error {
	_, err := f.doc.Bytes(ctx)
	return err
}
func (f *docFile) ReadAt(ctx context.Context, p []byte, off int64) (int, error) {
	b, err := f.doc.Bytes(ctx)
	if err != nil {
		return 0, err
	}
	return readBytes(b, p, off)
}

// metaFile is a file made from metadata alone (info.txt, data.nhdr), at
// its first use: a listing, which makes every file of a directory, makes
// none of their contents.
type metaFile struct {
	name string
	rendered
}

// newMetaFile returns the file name whose content is content().
func newMetaFile(name string, content func() []byte) *metaFile {
	return &metaFile{name: name, rendered: rendered{build: func(context.Context) ([]byte, error) { return content(), nil }}}
}

func (f *metaFile) Name() string { return f.name }
