package zarr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/zarrfs/zarrfs/codec"
	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/zarr/meta"
)

// This file holds the hierarchy itself: its nodes, each loaded once (by
// the loader of its format: v1.go, v2.go, v3.go, draft.go), the documents
// they are read from, and node paths. Open (open.go) detects the format;
// list.go lists a group's children; remote.go holds what a remote store
// needs; lineage.go, what the generations of a live hierarchy share.

// Hierarchy is an opened Zarr hierarchy: the store, its root node and the
// nodes loaded so far (metadata never changes under a reader, so each node
// is loaded once). It is safe for concurrent use.
type Hierarchy struct {
	st     store.Store
	format Format
	cache  *chunkCache

	// consolidated holds the documents of consolidated metadata (see
	// consolidated.go); nil when there is none.
	consolidated *consolidatedMeta
	// prefetched holds root documents read while detecting the format;
	// probedMissing, those a remote store said it did not have then.
	prefetched    map[string][]byte
	probedMissing map[string]bool
	// compacted holds the size limit of the root documents holding
	// consolidated metadata that were kept compacted (compactAbove): the
	// root shows them as the store holds them, fetched again when read.
	compacted map[string]int64
	// draft is the layout of a v3 draft hierarchy (nil for other formats).
	draft *meta.Draft

	// remote and workers: Options.Remote and how many nodes Children
	// loads at once.
	remote  bool
	workers int
	// live is Options.Live; lineage, on a live hierarchy, is shared with
	// the hierarchies it replaces and those that replace it.
	live    bool
	lineage *lineage

	mu    sync.Mutex
	nodes map[string]*Node
	// recent holds the arrays loaded last that consolidated metadata
	// describes, which nodes does not keep: such an array is parsed
	// again from its document when asked for after (see keep).
	recent recentNodes
	// ids holds the ids of the arrays of a store without consolidated
	// metadata that are not kept (see arrayID).
	ids     map[string]uint64
	loading map[string]*nodeLoad // loads under way, by path
	names   map[string][]string  // child names of the groups listed, by path
	// naming: the listings of child names under way, by path; closed
	// when done.
	naming map[string]chan struct{}
	ahead  map[string]bool // groups whose children were loaded ahead (remote)
	// listed holds, by key prefix ("" or "g/"), the first page of a
	// listing of every key below a group (remote v2 stores that page
	// their listings: store.PageLister): a document that page passed
	// over is missing, and is not asked for.
	listed map[string]*listedPage
}

// Store returns the store the hierarchy reads.
func (h *Hierarchy) Store() store.Store { return h.st }

// Format returns the format detected at the root.
func (h *Hierarchy) Format() Format { return h.format }

// Node returns the node at path ("" or "/" is the root; "a/b"). A path
// with no node wraps ErrNotExist. Nodes are loaded once.
func (h *Hierarchy) Node(ctx context.Context, path string) (*Node, error) {
	p, err := CleanPath(path)
	if err != nil {
		return nil, store.Errorf(h.st, err, "")
	}
	for {
		h.mu.Lock()
		if n, ok := h.nodes[p]; ok {
			h.mu.Unlock()
			return n, nil
		}
		if n := h.recent.get(p); n != nil {
			h.mu.Unlock()
			return n, nil
		}
		l, waiting := h.loading[p]
		if !waiting {
			l = &nodeLoad{done: make(chan struct{})}
			h.loading[p] = l
		}
		h.mu.Unlock()
		if !waiting {
			// The first caller loads the node itself, under its own
			// context: a load costs no goroutine and no hand-over.
			h.loadNode(ctx, p, l)
			return l.n, l.err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err() // the load goes on for its caller
		case <-l.done:
		}
		// The load ran under the first caller's context: when that
		// caller was cancelled, the others load again.
		if l.err != nil && errors.Is(l.err, context.Canceled) && ctx.Err() == nil {
			continue
		}
		return l.n, l.err
	}
}

// nodeLoad is the load of one node under way: the caller that started it
// fills in n or err, then closes done for the callers waiting for it.
type nodeLoad struct {
	done chan struct{}
	n    *Node
	err  error
}

// loadNode loads the node at p for l, and remembers it when it loaded.
func (h *Hierarchy) loadNode(ctx context.Context, p string, l *nodeLoad) {
	defer func() {
		h.mu.Lock()
		switch {
		case l.err != nil || l.n == nil:
		case h.keep(l.n):
			h.nodes[p] = l.n
		default:
			h.recent.add(p, l.n)
		}
		delete(h.loading, p)
		h.mu.Unlock()
		close(l.done)
	}()
	l.n, l.err = h.load(ctx, p)
	if l.err != nil {
		l.n = nil
	}
}

// load reads the node at p.
func (h *Hierarchy) load(ctx context.Context, p string) (*Node, error) {
	var n *Node
	var err error
	switch h.format {
	case FormatV3:
		n, err = h.loadV3(ctx, p)
	case FormatV2:
		n, err = h.loadV2(ctx, p)
	case FormatV1:
		n, err = h.loadV1(ctx, p)
	case FormatV3Draft2019, FormatV3Draft2022:
		n, err = h.loadDraft(ctx, p)
	default:
		err = codec.Unsupportedf("format %d", h.format)
	}
	if errors.Is(err, ErrInvalidMetadata) {
		// A document too large to read: the node exists but is broken.
		n, err = &Node{Path: p, Kind: KindUnknown, Format: h.format, Err: err}, nil
	}
	if err != nil {
		return nil, store.Errorf(h.st, err, "node %q", "/"+p)
	}
	if n.Err != nil {
		n.Err = store.Errorf(h.st, n.Err, "node %q", "/"+p)
	}
	if n.Attributes == nil {
		n.Attributes = json.RawMessage("{}")
	}
	if n.Array != nil {
		n.Array.bind(h.st, p, h.cache)
		if !h.keep(n) {
			n.Array.id = h.arrayID(p, n.Array)
		}
		n.Array.live = h.live
		if n.Array.Err != nil {
			n.Array.Err = store.Errorf(h.st, n.Array.Err, "array %q", "/"+p)
		}
		// Last: the lineage hands the array to other hierarchies' loads.
		if h.lineage != nil {
			n.Array.prevIDs = h.lineage.takeOver(p, n.Array)
		}
	}
	return n, nil
}

// document returns the document key of the node, from consolidated
// metadata (re-serialised with indent), from the root documents read by
// Open, or from the store. found is false for a missing document; modTime
// is the document's modification time when the store told it with the
// read (see setModTime).
func (h *Hierarchy) document(ctx context.Context, key string, indent string) (doc []byte, modTime time.Time, fromConsolidated, found bool, err error) {
	if raw, ok, err := h.consolidatedDoc(ctx, key); err != nil {
		return nil, time.Time{}, true, true, err
	} else if ok {
		b, err := meta.ConsolidatedDocument(raw, indent)
		if err != nil {
			return nil, time.Time{}, true, true, fmt.Errorf("%w: consolidated %s: %v", ErrInvalidMetadata, key, err)
		}
		return b, time.Time{}, true, true, nil
	}
	if b, ok := h.prefetched[key]; ok {
		return b, time.Time{}, false, true, nil
	}
	if h.probedMissing[key] || h.consolidatedNode(key) || h.listedMissing(key) {
		// Consolidated metadata holds every document of the nodes it
		// knows; a listing, every document of the keys it passed.
		return nil, time.Time{}, false, false, nil
	}
	b, mt, err := getDocument(ctx, h.st, key)
	if errors.Is(err, store.ErrNotExist) {
		return nil, time.Time{}, false, false, nil
	}
	if err != nil {
		return nil, time.Time{}, false, false, err
	}
	return b, mt, false, true, nil
}

// newDocument returns the document name of a node, stored under key, whose
// bytes document returned: for a document read from consolidated
// metadata, what the store holds under key is fetched at its first use
// (Document.Bytes).
func (h *Hierarchy) newDocument(name, key string, data []byte, fromConsolidated bool) Document {
	d := Document{Name: name, Data: data}
	if fromConsolidated {
		d.stored = &storedDocument{st: h.st, key: key}
	}
	return d
}

// consolidatedDoc returns the document key from consolidated metadata,
// and whether it has it.
func (h *Hierarchy) consolidatedDoc(ctx context.Context, key string) ([]byte, bool, error) {
	if h.consolidated == nil {
		return nil, false, nil
	}
	return h.consolidated.doc(ctx, key)
}

// consolidatedNode reports whether consolidated metadata knows the node
// whose document key is.
func (h *Hierarchy) consolidatedNode(key string) bool {
	if h.consolidated == nil {
		return false
	}
	p := ""
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		p = key[:i]
	}
	return h.consolidated.HasNode(p)
}

// setModTime sets n.ModTime to modTime, the time document returned for
// key, or when that is zero asks the store, when it can say.
func (h *Hierarchy) setModTime(ctx context.Context, n *Node, key string, modTime time.Time) {
	if !modTime.IsZero() {
		n.ModTime = modTime
		return
	}
	if st, ok := h.st.(store.Stater); ok {
		if info, err := st.Stat(ctx, key); err == nil {
			n.ModTime = info.ModTime
		}
	}
}

// keep reports whether the hierarchy keeps the node n for its life. It
// keeps groups, the root and broken arrays, and every node of a live
// hierarchy, but not the arrays consolidated metadata describes, nor
// those of a store close by (not Options.Remote): arrays are most of a
// large hierarchy's nodes, and their parsed metadata is many times the
// size of their documents, which the consolidated metadata holds or the
// store gives again at the cost of a file's read. Such an array is
// loaded again when asked for after leaving recent, and takes the same
// id (arrayID), so that its decoded chunks in the cache are still its
// own. A remote store's documents would cost a round trip each.
func (h *Hierarchy) keep(n *Node) bool {
	if h.live || n.Kind != KindArray || n.Path == "" || n.Array == nil {
		return true
	}
	if h.consolidated != nil {
		return len(n.Documents) == 0 || n.Documents[0].stored == nil
	}
	return h.remote
}

// arrayID returns the id of the array a at p, which the hierarchy does
// not keep (keep): the same whenever it is loaded.
func (h *Hierarchy) arrayID(p string, a *Array) uint64 {
	if h.consolidated != nil {
		return h.consolidated.arrayID(p)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if id, ok := h.ids[p]; ok {
		return id
	}
	if h.ids == nil {
		h.ids = map[string]uint64{}
	}
	h.ids[p] = a.id
	return a.id
}

// recentNodes holds the last recentSize nodes added, by path.
type recentNodes struct {
	m     map[string]*Node
	paths []string // a ring: the next added replaces paths[next]
	next  int
}

// recentSize is how many arrays described by consolidated metadata a
// hierarchy keeps beyond those it keeps for its life: a directory's
// worth of listing and the reads of its arrays do not parse any twice.
const recentSize = 1024

func (r *recentNodes) get(p string) *Node { return r.m[p] }

func (r *recentNodes) add(p string, n *Node) {
	if r.m == nil {
		r.m = make(map[string]*Node, recentSize)
		r.paths = make([]string, recentSize)
	}
	if _, ok := r.m[p]; ok {
		r.m[p] = n
		return
	}
	if len(r.m) == recentSize { // full: paths[next] is the oldest
		delete(r.m, r.paths[r.next])
	}
	r.paths[r.next] = p
	r.m[p] = n
	r.next = (r.next + 1) % recentSize
}

// cleanPath reports whether p, not empty, is a node path already ("a/b"):
// CleanPath would join its segments back into p.
func cleanPath(p string) bool {
	for seg := range strings.SplitSeq(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// Name returns the last segment of the node's path, "" for the root.
func (n *Node) Name() string {
	if i := strings.LastIndexByte(n.Path, '/'); i >= 0 {
		return n.Path[i+1:]
	}
	return n.Path
}

// CleanPath turns a user path ("/a/b/", "a//b") into a node path ("a/b"),
// refusing a ".." segment or a path that is not a valid store key.
func CleanPath(p string) (string, error) {
	if p == "" {
		return "", nil
	}
	if cleanPath(p) {
		if err := store.ValidateKey(p); err != nil {
			return "", fmt.Errorf("node path %q: %w", p, err)
		}
		return p, nil
	}
	var segs []string
	for s := range strings.SplitSeq(p, "/") {
		switch s {
		case "", ".":
			continue
		case "..":
			return "", fmt.Errorf("node path %q: %w", p, errors.New(`".." segment`))
		}
		segs = append(segs, s)
	}
	q := strings.Join(segs, "/")
	if q != "" {
		if err := store.ValidateKey(q); err != nil {
			return "", fmt.Errorf("node path %q: %w", p, err)
		}
	}
	return q, nil
}
