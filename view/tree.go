package view

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zarrfs/zarrfs/zarr"
)

// This file is the tree every front end shows (the FUSE mount in package
// fs, the WebDAV and NFS servers in package serve): which names a node's
// directory holds (List), and which generation of the hierarchy answers
// (Tree, renewed on a live store). It is here, below the front ends, so
// that the three cannot show different trees.

// A Snapshot is one generation of the hierarchy a tree shows, with the
// views of its nodes. A store that does not change has one for the tree's
// life; a live tree (NewTree's ttl) opens the hierarchy again when its
// snapshot is older than the TTL.
type Snapshot struct {
	H     *zarr.Hierarchy
	Views *Views // the files of H's nodes
	Gen   uint64 // 0 for the first snapshot, then one more at each renewal
}

// NewSnapshot returns generation gen of the tree of h.
func NewSnapshot(h *zarr.Hierarchy, gen uint64, cfg Config) *Snapshot {
	return &Snapshot{H: h, Views: New(h, cfg), Gen: gen}
}

// An Entry is one name in a node's directory: a file, or a child node.
type Entry struct {
	Name  string
	File  File       // a file; nil for a child node
	Child *zarr.Node // a child group or array
}

// A Listing is what a node's directory shows, from one snapshot.
type Listing struct {
	Node    *zarr.Node
	Entries []Entry
	// index maps names to their place in Entries, once they are many
	// (nil: search Entries).
	index map[string]int
	// Unlisted is the error listing the group's children when the store
	// cannot list (zarr.ErrNotListable): Entries then lack the children,
	// a listing of the directory fails with it, and Lookup opens a child
	// by its path.
	Unlisted error
}

// List returns the entries of node n's directory: its files (Files: its
// documents, then for an array its data files, then info.txt), then for a
// group its children by name. Names beginning with "__", empty names and
// names already taken are not shown. Listing errors are returned, not
// remembered; a store that cannot list gives a Listing with Unlisted set.
func (s *Snapshot) List(ctx context.Context, n *zarr.Node) (Listing, error) {
	l := Listing{Node: n}
	var children []*zarr.Node
	if n.Kind != zarr.KindArray {
		// Also below a group whose own metadata is broken: its
		// info.txt says what is wrong, and its children still show.
		var err error
		children, err = s.H.Children(ctx, n.Path)
		if errors.Is(err, zarr.ErrNotListable) {
			l.Unlisted = err
		} else if err != nil {
			return l, err
		}
	}
	l.Entries, l.index = Entries(s.Views.Files(n, children), children)
	return l, nil
}

// Entries returns the names of a node's directory made of its files (from
// Files) and its children, in the order every front end lists them: the
// files, then the children. Names beginning with "__", empty names and
// names already taken are left out. index maps the names to their place
// once they are many (nil: search the entries).
func Entries(files []File, children []*zarr.Node) (es []Entry, index map[string]int) {
	es = make([]Entry, 0, len(files)+len(children))
	add := func(e Entry) {
		if strings.HasPrefix(e.Name, "__") || e.Name == "" {
			return
		}
		if index == nil && len(es) >= 16 {
			index = make(map[string]int, 2*len(es))
			for i, e := range es {
				index[e.Name] = i
			}
		}
		if index != nil {
			if _, taken := index[e.Name]; taken {
				return
			}
			index[e.Name] = len(es)
		} else if slices.ContainsFunc(es, func(o Entry) bool { return o.Name == e.Name }) {
			return
		}
		es = append(es, e)
	}
	for _, f := range files {
		add(Entry{Name: f.Name(), File: f})
	}
	for _, c := range children {
		add(Entry{Name: c.Name(), Child: c})
	}
	return es, index
}

// Find returns the place of name in the listing's entries, or -1.
func (l *Listing) Find(name string) int {
	if l.index != nil {
		if i, ok := l.index[name]; ok {
			return i
		}
		return -1
	}
	return slices.IndexFunc(l.Entries, func(e Entry) bool { return e.Name == name })
}

// Lookup returns the entry name of the listing l. Where the store cannot
// list (l.Unlisted), a name that is not one of the node's files is opened
// as a child node by its path. A name that is not there is
// zarr.ErrNotExist.
func (s *Snapshot) Lookup(ctx context.Context, l *Listing, name string) (Entry, error) {
	if i := l.Find(name); i >= 0 {
		return l.Entries[i], nil
	}
	if l.Unlisted == nil || strings.HasPrefix(name, "__") || name == "" || strings.Contains(name, "/") {
		return Entry{}, zarr.ErrNotExist
	}
	c, err := s.H.Node(ctx, joinPath(l.Node.Path, name))
	if err != nil {
		return Entry{}, err
	}
	return Entry{Name: name, Child: c}, nil
}

// A Tree is the current snapshot of a hierarchy. A tree of a store that
// does not change keeps its first snapshot; a live one (ttl > 0) opens the
// hierarchy again once its snapshot is older than the TTL.
type Tree struct {
	ttl    time.Duration // 0: the snapshot never expires
	reopen func(ctx context.Context, prev *zarr.Hierarchy) (*zarr.Hierarchy, error)
	logf   func(error) // told why a renewal failed
	cfg    Config      // the files each snapshot shows

	mu         sync.Mutex
	v          *Snapshot
	at         time.Time     // when v was opened, or its renewal last failed
	refreshing bool          // a renewal is under way
	renewed    chan struct{} // closed when a renewal ends (tests wait on it)
}

// NewTree returns the tree of h. With ttl > 0 the tree is live: reopen
// (required then) opens the hierarchy again, given the one it replaces,
// and logf is told when that fails.
func NewTree(h *zarr.Hierarchy, cfg Config, ttl time.Duration,
	reopen func(ctx context.Context, prev *zarr.Hierarchy) (*zarr.Hierarchy, error), logf func(error)) *Tree {
	if logf == nil {
		logf = func(error) {}
	}
	return &Tree{ttl: ttl, reopen: reopen, logf: logf, cfg: cfg, v: NewSnapshot(h, 0, cfg), at: time.Now()}
}

// TTL returns how long a snapshot of a live tree is trusted (0: forever,
// also for a nil tree).
func (t *Tree) TTL() time.Duration {
	if t == nil {
		return 0
	}
	return t.ttl
}

// refreshTimeout bounds one renewal of a live tree (each request of it is
// bounded by the store's own timeout too).
const refreshTimeout = 5 * time.Minute

// Current returns the snapshot to answer from, at once. On a live tree
// whose snapshot is older than the TTL it starts opening the hierarchy
// again in the background (one renewal at a time), and answers from the
// old snapshot meanwhile (stale-while-revalidate): no stat or listing
// waits for the store. When the renewal fails (the store is down) it logs
// why and keeps the old snapshot for another TTL.
func (t *Tree) Current() *Snapshot {
	if t.ttl <= 0 {
		return t.v // set by NewTree, never changed
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.refreshing && time.Since(t.at) >= t.ttl {
		t.refreshing = true
		t.renewed = make(chan struct{})
		go t.renew(t.renewed)
	}
	return t.v
}

// renew opens the hierarchy again and makes it the current snapshot, then
// closes done.
func (t *Tree) renew(done chan struct{}) {
	defer close(done)
	ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
	defer cancel()
	t.mu.Lock()
	prev := t.v.H
	t.mu.Unlock()
	h, err := t.reopen(ctx, prev)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.refreshing = false
	t.at = time.Now()
	if err != nil {
		t.logf(fmt.Errorf("reading the hierarchy again (--live): %w; showing it as it was read before", err))
		return
	}
	t.v = NewSnapshot(h, t.v.Gen+1, t.cfg)
}
