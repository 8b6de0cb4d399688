//go:build linux

package fs

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/zarrfs/zarrfs/view"
	"github.com/zarrfs/zarrfs/zarr"
)

// entry is one name in a node's directory: a file or a child node.
type entry struct {
	name  string
	file  view.File  // a file; nil for a child node
	child *zarr.Node // a child group or array
}

// dirNode is the directory of a group or an array (the mount's root is one
// too).
type dirNode struct {
	gofs.Inode
	readOnly
	m *mountFS

	mu sync.Mutex
	// l is the directory's listing, nil once dropped (drop); v is the
	// view of the hierarchy it was made from. A large hierarchy has
	// many directories: their nodes hold little else.
	l *listing
	v *snapshot
	// path, kind and mtime (UnixNano, 0 for none) are the node's, kept
	// when the listing is dropped: what attr and a listing made again
	// need. kind is a byte (a zarr.Kind) and read beside it: the node
	// then fits the allocator's 192-byte class, not the 208-byte one (a
	// node per array of a large hierarchy).
	path  string
	mtime int64
	kind  int8
	// read says a reader has read a listing of the directory to its
	// end: listAhead has nothing to do for it.
	read bool
}

// unixNano returns t as dirNode.mtime keeps it.
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// modTime returns the node's modification time (zero when unknown).
func (d *dirNode) modTime() time.Time {
	if d.mtime == 0 {
		return time.Time{}
	}
	return time.Unix(0, d.mtime)
}

// listing is what a directory shows, from one view of the hierarchy.
type listing struct {
	v       *snapshot
	node    *zarr.Node
	entries []entry // nil until listed; listing errors are not remembered
	// index maps names to their place in entries, once they are many
	// (nil: search entries).
	index map[string]int
	// dirents are the entries as READDIRPLUS reports them (made with
	// entries, for every handle the listing is read through).
	dirents []fuse.DirEntry
	// unlisted is the error listing the group's children when the store
	// cannot list (zarr.ErrNotListable): entries then lack the children,
	// readdir fails with it, and Lookup opens a child by its path.
	unlisted error
}

func newDirNode(m *mountFS, v *snapshot, n *zarr.Node) *dirNode {
	return &dirNode{m: m, l: &listing{v: v, node: n}, v: v, path: n.Path, kind: int8(n.Kind), mtime: unixNano(n.ModTime)}
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

// current returns the directory's node, from the mount's current view.
// On a live mount whose view has changed, the node is read again (a node
// gone from the store is zarr.ErrNotExist), its listing is dropped, and so
// are the child inodes other than directories, whose contents may have
// changed: their next lookup makes new inodes (open files keep reading
// the old ones). Child directories stay and renew themselves.
func (d *dirNode) current(ctx context.Context) (listing, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.currentLocked(ctx)
}

func (d *dirNode) currentLocked(ctx context.Context) (listing, error) {
	v := d.m.snaps.Current()
	if d.l != nil && v == d.l.v && d.l.node != nil {
		return *d.l, nil
	}
	n, err := v.H.Node(ctx, d.path)
	if err != nil {
		return listing{}, err
	}
	d.kind, d.mtime = int8(n.Kind), unixNano(n.ModTime)
	if v == d.v {
		// The listing was dropped: the node is parsed again (zarr's
		// Hierarchy keeps few of the arrays consolidated metadata
		// describes), the child inodes stay.
		l := &listing{v: v, node: n}
		if d.l != nil {
			l.dirents = d.l.dirents
		}
		d.l = l
		return *l, nil
	}
	d.v, d.l = v, &listing{v: v, node: n}
	for name, ch := range d.Children() {
		if _, dir := ch.Operations().(*dirNode); !dir {
			d.RmChild(name)
		}
	}
	return *d.l, nil
}

// list returns the node's directory entries: its files (view.Files: its documents, then for an
// array its data files, then info.txt, then for a group its children by
// name. Names beginning with "__" and children whose name is already taken
// are not shown.
func (d *dirNode) list(ctx context.Context) (listing, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	l, err := d.currentLocked(ctx)
	if err != nil || l.entries != nil {
		return l, err
	}
	node := l.node
	var children []*zarr.Node
	if node.Kind != zarr.KindArray {
		// Also below a group whose own metadata is broken: its
		// info.txt says what is wrong, and its children still show.
		children, err = l.v.H.Children(ctx, node.Path)
		if errors.Is(err, zarr.ErrNotListable) {
			l.unlisted = err
		} else if err != nil {
			return l, err
		}
		if d.m.stats.on() {
			// Readers stat what they list (ls -l): the sizes of the
			// children's documents are asked for next.
			l.v.H.FetchStored(ctx, children)
		}
	}
	// Which names, in which order: view.Entries, as the served trees.
	ves, index := view.Entries(l.v.Views.Files(node, children), children)
	es := make([]entry, len(ves))
	for i, e := range ves {
		es[i] = entry{name: e.Name, file: e.File, child: e.Child}
	}
	l.entries, l.index = es, index
	l.dirents = make([]fuse.DirEntry, len(es))
	for i, e := range es {
		l.dirents[i] = fuse.DirEntry{Name: e.name, Mode: entryMode(e), Ino: ino(node.Path, e.name), Off: uint64(i + 1)}
	}
	d.l = &l
	return l, nil
}

// drop forgets the listing l, which a reader has read to its end, unless
// the directory lists something else since: the kernel keeps what it
// read (noOpendir), and a large hierarchy's listings, with the view
// files and the parsed metadata they hold, would otherwise stay for the
// mount's life (walkNext asks the hierarchy for a group's child names
// again). The next lookup or listing makes it again. Live mounts keep
// their listings (their views change under them).
func (d *dirNode) drop(l listing) {
	if d.m.snaps.TTL() > 0 || len(l.dirents) == 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.read = true
	if d.l == nil || d.l.v != l.v || len(d.l.dirents) == 0 || &d.l.dirents[0] != &l.dirents[0] || d.l.entries == nil {
		return
	}
	d.l = nil
}

// find returns the place of name in the listing's entries, or -1.
func (l *listing) find(name string) int {
	if l.index != nil {
		if i, ok := l.index[name]; ok {
			return i
		}
		return -1
	}
	return slices.IndexFunc(l.entries, func(e entry) bool { return e.name == name })
}

// newChild builds the node of entry e of listing l.
func (d *dirNode) newChild(l listing, e entry) attrNode {
	if e.file != nil {
		return &fileNode{m: d.m, f: e.file, mtime: d.modTime()}
	}
	return newDirNode(d.m, l.v, e.child)
}

func entryMode(e entry) uint32 {
	if e.file == nil {
		return dirMode
	}
	return fileMode
}

// Lookup answers the kernel's LOOKUP of name. A file looked up this way
// was listed without its attributes, or not listed at all: the reader
// stats files, and listings carry them for a while (statWatch).
func (d *dirNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	ch, errno := d.lookup(ctx, name, out)
	if errno == 0 && !ch.IsDir() {
		d.m.stats.saw()
	}
	return ch, errno
}

// lookup finds name among the directory's entries.
func (d *dirNode) lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	l, err := d.current(ctx)
	if err != nil {
		return nil, d.m.log.errno(err)
	}
	if ch := d.GetChild(name); ch != nil {
		if sub, ok := ch.Operations().(*dirNode); ok && d.m.snaps.TTL() > 0 {
			if _, err := sub.current(ctx); errors.Is(err, zarr.ErrNotExist) {
				d.RmChild(name) // gone from a live store
				return nil, syscall.ENOENT
			} else if err != nil {
				return nil, d.m.log.errno(err)
			}
		}
		ch.Operations().(attrNode).attr(ctx, &out.Attr)
		return ch, 0
	}
	if l, err = d.list(ctx); err != nil {
		return nil, d.m.log.errno(err)
	}
	path := l.node.Path
	stable := func(mode uint32) gofs.StableAttr {
		return gofs.StableAttr{Mode: mode, Ino: ino(path, name), Gen: l.v.Gen}
	}
	if i := l.find(name); i >= 0 {
		e := l.entries[i]
		n := d.newChild(l, e)
		n.attr(ctx, &out.Attr)
		return d.NewInode(ctx, n, stable(entryMode(e))), 0
	}
	if l.unlisted != nil && !strings.HasPrefix(name, "__") {
		// The store cannot list: open the child by its path.
		c, err := l.v.H.Node(ctx, path+"/"+name)
		if errors.Is(err, zarr.ErrNotExist) {
			return nil, syscall.ENOENT
		}
		if err != nil {
			return nil, d.m.log.errno(err)
		}
		n := d.newChild(l, entry{name: name, child: c})
		n.attr(ctx, &out.Attr)
		return d.NewInode(ctx, n, stable(dirMode)), 0
	}
	return nil, syscall.ENOENT
}

// OpendirHandle lists the directory's entries into a handle. The kernel
// may cache the listing unless the mount is live. A group whose metadata
// is broken lists as any other: its documents, its info.txt (which says
// what is wrong) and its children.
func (d *dirNode) OpendirHandle(ctx context.Context, _ uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	l, err := d.list(ctx)
	if err == nil && l.unlisted != nil {
		err = l.unlisted
	}
	if err != nil {
		return nil, 0, d.m.log.errno(err)
	}
	if l.node.Kind != zarr.KindArray {
		if next := d.walkNext(ctx, l); next != nil {
			d.m.ahead.walk(next)
		}
	}
	h := &dirHandle{d: d, l: l}
	if d.m.snaps.TTL() > 0 {
		return h, 0, 0
	}
	return h, fuse.FOPEN_CACHE_DIR | fuse.FOPEN_KEEP_CACHE, 0
}

// walkScan bounds the entries walkNext looks through for a group: it runs
// for every READDIRPLUS of a group, which may have many children.
const walkScan = 64

// walkNext returns the group directory that a walk of the tree in the
// order of its listings (find, ls -R, du) lists after the group d, listed
// as l: d's first child group, else the next group after d in its parent's
// listing, each among the walkScan entries where it would be. It is nil
// when there is none, or its node is not made yet.
func (d *dirNode) walkNext(ctx context.Context, l listing) *dirNode {
	for _, e := range l.entries[:min(len(l.entries), walkScan)] {
		if e.child != nil && e.child.Kind != zarr.KindArray {
			return childDir(&d.Inode, e.name)
		}
	}
	// The parent's children by name, as the hierarchy lists them (it
	// keeps them, or finds them in its consolidated metadata's index;
	// the parent's listing is dropped once read): the next group is one
	// whose node is made and is not an array.
	name, parent := d.Parent()
	if parent == nil {
		return nil
	}
	pd, ok := parent.Operations().(*dirNode)
	if !ok {
		return nil
	}
	names, err := l.v.H.ChildNames(ctx, pd.path)
	if err != nil {
		return nil
	}
	i, ok := slices.BinarySearch(names, name)
	if !ok {
		return nil
	}
	for _, n := range names[i+1 : min(len(names), i+1+walkScan)] {
		if sub := childDir(parent, n); sub != nil && sub.nodeKind() != zarr.KindArray {
			return sub
		}
	}
	return nil
}

// wasRead reports whether a reader has read a listing of d to its end.
func (d *dirNode) wasRead() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.read
}

// nodeKind returns the kind of d's node.
func (d *dirNode) nodeKind() zarr.Kind {
	d.mu.Lock()
	defer d.mu.Unlock()
	return zarr.Kind(d.kind)
}

// childDir returns the directory node of p's child name, or nil.
func childDir(p *gofs.Inode, name string) *dirNode {
	if ch := p.GetChild(name); ch != nil {
		d, _ := ch.Operations().(*dirNode)
		return d
	}
	return nil
}

// dirHandle is an open directory of d: the listing it reads, the offset
// of entry i being i+1, and the index of the next one to read.
type dirHandle struct {
	d    *dirNode
	l    listing
	next int
	// returned says an entry was read through the handle; ends counts
	// the reads that found the end.
	returned bool
	ends     int
}

var (
	_ = (gofs.FileReaddirenter)((*dirHandle)(nil))
	_ = (gofs.FileSeekdirer)((*dirHandle)(nil))
	_ = (gofs.FileLookuper)((*dirHandle)(nil))
)

// Readdirent returns the next entry, or nil at the end.
func (h *dirHandle) Readdirent(context.Context) (*fuse.DirEntry, syscall.Errno) {
	if h.next >= len(h.l.dirents) {
		// The reader has read the listing when a request finds nothing
		// left: the one after the request that read the last entries
		// (find's, ls's), through this handle or a new one (noOpendir).
		if h.ends++; h.ends > 1 || !h.returned {
			h.d.drop(h.l)
		}
		return nil, 0
	}
	h.returned = true
	h.next++
	return &h.l.dirents[h.next-1], 0 // go-fuse changes no entry whose Off is set
}

// Seekdir moves to the entry after the one at offset off (0: the start).
func (h *dirHandle) Seekdir(_ context.Context, off uint64) syscall.Errno {
	if off > uint64(len(h.l.dirents)) {
		return syscall.EINVAL
	}
	h.next = int(off)
	return 0
}

// Lookup answers READDIRPLUS for name, the entry Readdirent returned
// last. A file's entry goes without its attributes unless readers stat
// what they list (statWatch): Lookup fails, and go-fuse then sends the
// entry with node id 0, which the kernel reads as a name whose attributes
// the file system did not give (fuse_direntplus_link). find(1), which
// needs only the names and types of files, then costs the kernel no inode
// and no dentry for each, nor the daemon their sizes. A reader that stats
// them looks each up (one LOOKUP), which turns the attributes on.
//
// A new child's node is made from the entry of the listing at hand (the
// directory's lookup would take its lock and search the listing again,
// for each of the many entries a listing of a large hierarchy reports). A
// child the directory already has goes through lookup, and so does every
// entry of a live mount, whose view may have changed since the handle was
// opened.
func (h *dirHandle) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	i := h.next - 1
	if i >= 0 && i < len(h.l.entries) && h.l.entries[i].file != nil && !h.d.m.stats.on() {
		return nil, syscall.ENOENT
	}
	if h.d.m.snaps.TTL() > 0 || i < 0 || i >= len(h.l.entries) || h.l.entries[i].name != name || h.d.GetChild(name) != nil {
		return h.d.lookup(ctx, name, out)
	}
	e := h.l.entries[i]
	n := h.d.newChild(h.l, e)
	n.attr(ctx, &out.Attr)
	if sub, ok := n.(*dirNode); ok && e.child.Kind == zarr.KindArray {
		h.d.m.ahead.add(sub)
	}
	return h.d.NewInode(ctx, n, gofs.StableAttr{Mode: entryMode(e), Ino: h.l.dirents[i].Ino, Gen: h.l.v.Gen}), 0
}

// attr reports a directory. An array's directory has no subdirectories,
// so its link count is 2; a group's is 1, "unknown", as on btrfs: counting
// its subdirectories would mean listing every child group whenever its
// parent is listed, and find(1) reads 1 as "do not count on it".
func (d *dirNode) attr(_ context.Context, out *fuse.Attr) {
	d.mu.Lock()
	kind, mtime := zarr.Kind(d.kind), d.modTime()
	d.mu.Unlock()
	nlink := uint32(1)
	if kind == zarr.KindArray {
		nlink = 2
	}
	d.m.setAttr(out, dirMode, 0, nlink, mtime)
}

// Getattr reports the directory's attributes.
func (d *dirNode) Getattr(ctx context.Context, _ gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	// Only a live mount's view changes; on any other, a directory whose
	// listing was dropped answers without loading its node again.
	if d.m.snaps.TTL() > 0 {
		if _, err := d.current(ctx); err != nil {
			return d.m.log.errno(err)
		}
	}
	d.attr(ctx, &out.Attr)
	return 0
}

// xattrs returns the directory's extended attributes: those of its array,
// or the format of a group.
func (d *dirNode) xattrs(ctx context.Context) (xattrs, error) {
	l, err := d.current(ctx)
	if err != nil {
		return nil, err
	}
	return view.Xattrs(l.node), nil
}

// Getxattr reads a user.zarr.* attribute. Other names (ls -l asks for
// security.selinux and system.posix_acl_* of every entry) are answered at
// once by notOurs, with no lookup of the node, even in a live mount.
func (d *dirNode) Getxattr(ctx context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	if !ours(attr) {
		return 0, notOurs(attr)
	}
	x, err := d.xattrs(ctx)
	if err != nil {
		return 0, d.m.log.errno(err)
	}
	return x.get(attr, dest)
}

// Listxattr lists the user.zarr.* attributes.
func (d *dirNode) Listxattr(ctx context.Context, dest []byte) (uint32, syscall.Errno) {
	x, err := d.xattrs(ctx)
	if err != nil {
		return 0, d.m.log.errno(err)
	}
	return x.list(dest)
}
