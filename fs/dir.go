package fs

import (
	"context"
	"errors"
	"strings"
	"sync"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/zarrfs/zarrfs/zarr"
)

// entryKind tells what a directory entry shows.
type entryKind int

const (
	entryDocument entryKind = iota // a metadata document, byte for byte
	entryInfo                      // info.txt
	entryData                      // data: the decoded contents
	entryNpy                       // data.npy: the contents behind a .npy header
	entryText                      // data.txt: variable-length elements, one per line
	entryChild                     // a child group or array
)

// entry is one name in a node's directory.
type entry struct {
	name  string
	kind  entryKind
	doc   []byte     // entryDocument
	child *zarr.Node // entryChild
}

// dirNode is the directory of a group or an array (the mount's root is one
// too).
type dirNode struct {
	gofs.Inode
	readOnly
	m    *mountFS
	node *zarr.Node

	mu      sync.Mutex
	entries []entry // nil until listed; listing errors are not remembered
	// unlisted is the error listing the group's children when the store
	// cannot list (zarr.ErrNotListable): entries then lack the children,
	// readdir fails with it, and Lookup opens a child by its path.
	unlisted error
}

var (
	_ = (gofs.NodeLookuper)((*dirNode)(nil))
	_ = (gofs.NodeOpendirHandler)((*dirNode)(nil))
	_ = (gofs.NodeGetattrer)((*dirNode)(nil))
	_ = (gofs.NodeGetxattrer)((*dirNode)(nil))
	_ = (gofs.NodeListxattrer)((*dirNode)(nil))
	_ = (gofs.NodeSetxattrer)((*dirNode)(nil))
	_ = (gofs.NodeRemovexattrer)((*dirNode)(nil))
	_ = (gofs.NodeSetattrer)((*dirNode)(nil))
	_ = (gofs.NodeMkdirer)((*dirNode)(nil))
	_ = (gofs.NodeMknoder)((*dirNode)(nil))
	_ = (gofs.NodeCreater)((*dirNode)(nil))
	_ = (gofs.NodeSymlinker)((*dirNode)(nil))
	_ = (gofs.NodeLinker)((*dirNode)(nil))
	_ = (gofs.NodeUnlinker)((*dirNode)(nil))
	_ = (gofs.NodeRmdirer)((*dirNode)(nil))
	_ = (gofs.NodeRenamer)((*dirNode)(nil))
	_ = (gofs.NodeStatfser)((*dirNode)(nil))
)

// list returns the node's directory entries: its documents, then for an
// array its data files, then info.txt, then for a group its children by
// name. Names beginning with "__" and children whose name is already taken
// are not shown.
func (d *dirNode) list(ctx context.Context) ([]entry, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.entries != nil {
		return d.entries, nil
	}
	var es []entry
	taken := map[string]bool{}
	add := func(e entry) {
		if taken[e.name] || strings.HasPrefix(e.name, "__") || e.name == "" {
			return
		}
		taken[e.name] = true
		es = append(es, e)
	}
	for _, doc := range d.node.Documents {
		add(entry{name: doc.Name, kind: entryDocument, doc: doc.Data})
	}
	if d.node.Kind == zarr.KindArray {
		switch a := d.node.Array; {
		case a == nil:
			add(entry{name: "data", kind: entryData})
		case a.Variable():
			add(entry{name: "data.txt", kind: entryText})
		default:
			add(entry{name: "data", kind: entryData})
			add(entry{name: "data.npy", kind: entryNpy})
		}
	}
	add(entry{name: "info.txt", kind: entryInfo})
	if d.node.Kind == zarr.KindGroup && d.node.Err == nil {
		children, err := d.m.h.Children(ctx, d.node.Path)
		if errors.Is(err, zarr.ErrNotListable) {
			d.unlisted = err
		} else if err != nil {
			return nil, err
		}
		for _, c := range children {
			add(entry{name: c.Name(), kind: entryChild, child: c})
		}
	}
	d.entries = es
	return es, nil
}

// listingError returns why the group's children could not be listed
// (nil when they were, or when not listed yet).
func (d *dirNode) listingError() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.unlisted
}

// newChild builds the node of entry e.
func (d *dirNode) newChild(e entry) attrNode {
	switch e.kind {
	case entryDocument:
		return &bytesFile{m: d.m, data: e.doc, mtime: d.node.ModTime}
	case entryInfo:
		return &bytesFile{m: d.m, data: []byte(InfoText(d.node)), mtime: d.node.ModTime}
	case entryData, entryNpy:
		return newDataFile(d.m, d.node, e.kind == entryNpy)
	case entryText:
		return &textFile{m: d.m, node: d.node}
	default:
		return &dirNode{m: d.m, node: e.child}
	}
}

func entryMode(k entryKind) uint32 {
	if k == entryChild {
		return dirMode
	}
	return fileMode
}

// Lookup finds name among the directory's entries.
func (d *dirNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	if ch := d.GetChild(name); ch != nil {
		ch.Operations().(attrNode).attr(ctx, &out.Attr)
		return ch, 0
	}
	es, err := d.list(ctx)
	if err != nil {
		return nil, d.m.log.errno(err)
	}
	for _, e := range es {
		if e.name != name {
			continue
		}
		n := d.newChild(e)
		n.attr(ctx, &out.Attr)
		return d.NewInode(ctx, n, gofs.StableAttr{Mode: entryMode(e.kind), Ino: ino(d.node.Path, name)}), 0
	}
	if d.listingError() != nil && !strings.HasPrefix(name, "__") {
		// The store cannot list: open the child by its path.
		c, err := d.m.h.Node(ctx, d.node.Path+"/"+name)
		if errors.Is(err, zarr.ErrNotExist) {
			return nil, syscall.ENOENT
		}
		if err != nil {
			return nil, d.m.log.errno(err)
		}
		n := d.newChild(entry{name: name, kind: entryChild, child: c})
		n.attr(ctx, &out.Attr)
		return d.NewInode(ctx, n, gofs.StableAttr{Mode: dirMode, Ino: ino(d.node.Path, name)}), 0
	}
	return nil, syscall.ENOENT
}

// OpendirHandle lists the directory's entries into a handle and lets the
// kernel cache the listing: it never changes.
func (d *dirNode) OpendirHandle(ctx context.Context, _ uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	es, err := d.list(ctx)
	if err == nil {
		err = d.listingError()
	}
	if err != nil {
		return nil, 0, d.m.log.errno(err)
	}
	h := &dirHandle{entries: make([]fuse.DirEntry, len(es))}
	for i, e := range es {
		h.entries[i] = fuse.DirEntry{Name: e.name, Mode: entryMode(e.kind), Ino: ino(d.node.Path, e.name), Off: uint64(i + 1)}
	}
	return h, fuse.FOPEN_CACHE_DIR | fuse.FOPEN_KEEP_CACHE, 0
}

// dirHandle is an open directory: its entries, the offset of entry i being
// i+1, and the index of the next one to read.
type dirHandle struct {
	entries []fuse.DirEntry
	next    int
}

var (
	_ = (gofs.FileReaddirenter)((*dirHandle)(nil))
	_ = (gofs.FileSeekdirer)((*dirHandle)(nil))
)

// Readdirent returns the next entry, or nil at the end.
func (h *dirHandle) Readdirent(context.Context) (*fuse.DirEntry, syscall.Errno) {
	if h.next >= len(h.entries) {
		return nil, 0
	}
	e := h.entries[h.next]
	h.next++
	return &e, 0
}

// Seekdir moves to the entry after the one at offset off (0: the start).
func (h *dirHandle) Seekdir(_ context.Context, off uint64) syscall.Errno {
	if off > uint64(len(h.entries)) {
		return syscall.EINVAL
	}
	h.next = int(off)
	return 0
}

// attr reports a directory. An array's directory has no subdirectories,
// so its link count is 2; a group's is 1, "unknown", as on btrfs: counting
// its subdirectories would mean listing every child group whenever its
// parent is listed, and find(1) reads 1 as "do not count on it".
func (d *dirNode) attr(_ context.Context, out *fuse.Attr) {
	nlink := uint32(1)
	if d.node.Kind == zarr.KindArray {
		nlink = 2
	}
	d.m.setAttr(out, dirMode, 0, nlink, d.node.ModTime)
}

// Getattr reports the directory's attributes.
func (d *dirNode) Getattr(ctx context.Context, _ gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	d.attr(ctx, &out.Attr)
	return 0
}

// xattrs returns the directory's extended attributes: those of its array,
// or the format of a group.
func (d *dirNode) xattrs() xattrs {
	if d.node.Kind == zarr.KindArray && d.node.Array != nil {
		return arrayXattrs(d.node.Array, d.node.Format)
	}
	return groupXattrs(d.node.Format)
}

// Getxattr reads a user.zarr.* attribute.
func (d *dirNode) Getxattr(_ context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	return d.xattrs().get(attr, dest)
}

// Listxattr lists the user.zarr.* attributes.
func (d *dirNode) Listxattr(_ context.Context, dest []byte) (uint32, syscall.Errno) {
	return d.xattrs().list(dest)
}

// InfoText is the content of a node's info.txt, which `zarrfs info` prints
// too: the engine's summary, ending in a newline.
func InfoText(n *zarr.Node) string {
	text := n.Info().Text()
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return text
}
