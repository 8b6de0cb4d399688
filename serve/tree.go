// Package serve shows a Zarr hierarchy over network protocols instead of
// FUSE, for the systems and containers where a FUSE mount is not possible:
// a read-only WebDAV/HTTP server (webdav.go) and a read-only NFSv3 server
// with its MOUNT protocol on the same port (nfs.go). Both show exactly the
// tree the mount (package fs) shows, because all three take it from
// package view (view.Snapshot.List); neither imports fs or go-fuse.
// docs/ARCHITECTURE.md places the package among the others.
package serve

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"
	"sync"
	"time"

	"github.com/zarrfs/zarrfs/internal/logonce"
	"github.com/zarrfs/zarrfs/view"
	"github.com/zarrfs/zarrfs/zarr"
)

// Limits on the paths a client may ask for: longer ones are refused
// (ErrBadPath) before anything is looked up.
const (
	MaxNameLen = 255  // bytes in one name, as on Linux
	MaxPathLen = 4096 // bytes in a whole path, as PATH_MAX
)

// ErrBadPath is a path that cannot name anything in the tree: one with a
// "." or ".." segment, a NUL or backslash, or a name or path over the
// limits.
var ErrBadPath = errors.New("serve: path outside the tree or malformed")

// maxCachedDirs bounds the listings a Tree keeps: past it they are
// dropped and made again when asked for (which reads nothing from the
// store the hierarchy has not kept).
const maxCachedDirs = 8192

// Config configures the tree a server shows.
type Config struct {
	// Views chooses the optional files (previews).
	Views view.Config
	// Live, when positive, is how long the tree may be trusted for a
	// store that changes: after it, the hierarchy is opened again with
	// Reopen. 0: the store never changes.
	Live   time.Duration
	Reopen func(ctx context.Context, prev *zarr.Hierarchy) (*zarr.Hierarchy, error)
	// Logger receives one line per distinct error; nil: log.Default().
	Logger *log.Logger
	// UID and GID own every file (NFS attributes).
	UID, GID uint32
}

// A Tree is the hierarchy as the servers show it: paths resolved to
// entries of the listings package view makes, the listings kept for the
// current snapshot.
type Tree struct {
	t     *view.Tree
	log   errorLog
	start time.Time // the modification time of nodes that have none
	uid   uint32
	gid   uint32

	mu   sync.Mutex
	snap *view.Snapshot           // the snapshot dirs belong to
	dirs map[string]*view.Listing // listings by node path
}

// NewTree returns the tree of h.
func NewTree(h *zarr.Hierarchy, cfg Config) (*Tree, error) {
	if cfg.Live > 0 && cfg.Reopen == nil {
		return nil, errors.New("serve: Config.Live needs Config.Reopen")
	}
	logger := cfg.Logger
	if logger == nil {
		logger = log.Default()
	}
	t := &Tree{log: errorLog{once: logonce.Log{Logger: logger}}, start: time.Now(), uid: cfg.UID, gid: cfg.GID}
	t.t = view.NewTree(h, cfg.Views, cfg.Live, cfg.Reopen, func(err error) { t.log.log(err) })
	return t, nil
}

// A Node is a file or a directory of the tree.
type Node struct {
	Path    string     // slash-separated, no leading slash; "" is the root
	Name    string     // the last segment of Path ("" for the root)
	Dir     *zarr.Node // a directory's Zarr node; nil for a file
	File    view.File  // a file; nil for a directory
	ModTime time.Time
	snap    *view.Snapshot
}

// IsDir reports whether n is a directory.
func (n Node) IsDir() bool { return n.File == nil }

// Size returns a file's length (0 for a directory, and for a file whose
// length cannot be known: reading it then says why).
func (n Node) Size(ctx context.Context) int64 {
	if n.File == nil {
		return 0
	}
	s, err := n.File.Size(ctx)
	if err != nil {
		return 0
	}
	return s
}

// SplitPath checks a client's path and returns its names. Empty segments
// (doubled or trailing slashes) are ignored.
func SplitPath(p string) ([]string, error) {
	if len(p) > MaxPathLen || strings.ContainsAny(p, "\x00\\") {
		return nil, ErrBadPath
	}
	var names []string
	for _, s := range strings.Split(p, "/") {
		switch {
		case s == "":
			continue
		case s == "." || s == "..", len(s) > MaxNameLen:
			return nil, ErrBadPath
		}
		names = append(names, s)
	}
	return names, nil
}

// current returns the snapshot to answer from and drops the listings of
// an older one.
func (t *Tree) current() *view.Snapshot {
	s := t.t.Current()
	t.mu.Lock()
	if s != t.snap {
		t.snap, t.dirs = s, nil
	}
	t.mu.Unlock()
	return s
}

// listing returns the listing of the directory node n of snapshot s.
func (t *Tree) listing(ctx context.Context, s *view.Snapshot, n *zarr.Node) (*view.Listing, error) {
	t.mu.Lock()
	if t.snap == s {
		if l, ok := t.dirs[n.Path]; ok {
			t.mu.Unlock()
			return l, nil
		}
	}
	t.mu.Unlock()
	l, err := s.List(ctx, n)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	if t.snap == s {
		if l0, ok := t.dirs[n.Path]; ok {
			t.mu.Unlock()
			return l0, nil // another request listed it first: share its files
		}
		if t.dirs == nil || len(t.dirs) >= maxCachedDirs {
			t.dirs = make(map[string]*view.Listing)
		}
		t.dirs[n.Path] = &l
	}
	t.mu.Unlock()
	return &l, nil
}

// Resolve returns the node at path p (a client's path: see SplitPath). A
// path that is not in the tree is zarr.ErrNotExist; a malformed one
// ErrBadPath.
func (t *Tree) Resolve(ctx context.Context, p string) (Node, error) {
	names, err := SplitPath(p)
	if err != nil {
		return Node{}, err
	}
	return t.resolve(ctx, names)
}

func (t *Tree) resolve(ctx context.Context, names []string) (Node, error) {
	s := t.current()
	dir, err := s.H.Node(ctx, "")
	if err != nil {
		return Node{}, err
	}
	n := Node{Dir: dir, ModTime: t.mtime(dir), snap: s}
	for i, name := range names {
		l, err := t.listing(ctx, s, n.Dir)
		if err != nil {
			return Node{}, err
		}
		e, err := s.Lookup(ctx, l, name)
		if err != nil {
			return Node{}, err
		}
		if e.File != nil && i < len(names)-1 {
			return Node{}, zarr.ErrNotExist // a file has no children
		}
		n = t.node(s, n, e)
	}
	return n, nil
}

// node returns the node of entry e of the directory parent.
func (t *Tree) node(s *view.Snapshot, parent Node, e view.Entry) Node {
	p := e.Name
	if parent.Path != "" {
		p = parent.Path + "/" + e.Name
	}
	if e.File != nil {
		return Node{Path: p, Name: e.Name, File: e.File, ModTime: parent.ModTime, snap: s}
	}
	return Node{Path: p, Name: e.Name, Dir: e.Child, ModTime: t.mtime(e.Child), snap: s}
}

// mtime is a node's modification time, or the server's start.
func (t *Tree) mtime(n *zarr.Node) time.Time {
	if n.ModTime.IsZero() {
		return t.start
	}
	return n.ModTime
}

// List returns the entries of the directory d, in the mount's order. A
// store that cannot list fails here with zarr.ErrNotListable (its
// children can still be resolved by name).
func (t *Tree) List(ctx context.Context, d Node) ([]Node, error) {
	if d.Dir == nil {
		return nil, fmt.Errorf("%s: not a directory", d.Path)
	}
	s := d.snap
	l, err := t.listing(ctx, s, d.Dir)
	if err != nil {
		return nil, err
	}
	if l.Unlisted != nil {
		return nil, l.Unlisted
	}
	out := make([]Node, len(l.Entries))
	for i, e := range l.Entries {
		out[i] = t.node(s, d, e)
	}
	return out, nil
}

// Gen returns the generation of the snapshot n was resolved in.
func (n Node) Gen() uint64 {
	if n.snap == nil {
		return 0
	}
	return n.snap.Gen
}

// errorLog logs each distinct error once, not once per request, as the
// mount does.
type errorLog struct{ once logonce.Log }

// log logs err the first time its message is seen, unless it is a
// missing node, a bad path or a cancelled request (the client's doing).
func (l *errorLog) log(err error) {
	if err == nil || errors.Is(err, zarr.ErrNotExist) || errors.Is(err, ErrBadPath) || errors.Is(err, context.Canceled) {
		return
	}
	msg := err.Error()
	l.once.Print(msg, msg)
}
