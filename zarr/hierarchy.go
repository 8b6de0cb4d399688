package zarr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/zarrfs/zarrfs/codec"
	"github.com/zarrfs/zarrfs/internal/cores"
	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/zarr/meta"
)

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

// listedPage is the first page of the keys below a prefix, sorted.
type listedPage struct {
	keys     []string
	complete bool // the page holds every key below the prefix
}

// missing reports whether key, below the page's prefix, is known to be
// missing: the page does not hold it but holds a key sorting after it (a
// listing is in key order), or holds every key.
func (pg *listedPage) missing(key string) bool {
	i, found := slices.BinarySearch(pg.keys, key)
	return !found && (pg.complete || i < len(pg.keys))
}

// listedMissing reports whether a page listed below one of key's parents
// shows that key is missing.
func (h *Hierarchy) listedMissing(key string) bool {
	if !h.remote {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.listed) == 0 {
		return false
	}
	for i := len(key) - 1; i >= -1; i-- {
		if i >= 0 && key[i] != '/' {
			continue
		}
		if pg, ok := h.listed[key[:i+1]]; ok && pg.missing(key) {
			return true
		}
	}
	return false
}

// listPage lists the first page of every key below the group at p, for
// listedMissing, when the store pages its listings and the hierarchy is a
// remote v2 one without consolidated metadata: its nodes' documents
// (.zarray, .zattrs, .zgroup) sort before their chunks, so one page tells
// which documents the first children have, sparing a request for each
// missing one. A failed listing only leaves them to be asked for.
func (h *Hierarchy) listPage(ctx context.Context, p string) {
	pl, ok := h.st.(store.PageLister)
	if !ok || !h.remote || h.format != FormatV2 || h.consolidated != nil {
		return
	}
	prefix := store.DirPrefix(p)
	keys, more, err := pl.ListPrefixPage(ctx, prefix, "")
	if err != nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.listed == nil {
		h.listed = map[string]*listedPage{}
	}
	h.listed[prefix] = &listedPage{keys: keys, complete: !more}
}

// Store returns the store the hierarchy reads.
func (h *Hierarchy) Store() store.Store { return h.st }

// Open opens the hierarchy stored in st, detecting its format at the root:
// zarr.json is v3; .zmetadata, .zgroup or .zarray is v2; meta is v1. Consolidated
// metadata at the root (v2 .zmetadata, v3 consolidated_metadata) is used
// when present, so that a remote store opens with one read.
func Open(ctx context.Context, st store.Store, opts Options) (*Hierarchy, error) {
	size := opts.CacheSize
	if size == 0 {
		size = DefaultCacheSize
	}
	h := &Hierarchy{st: st, cache: newChunkCache(size), nodes: map[string]*Node{}, loading: map[string]*nodeLoad{}, prefetched: map[string][]byte{}}
	h.live = opts.Live || opts.Previous != nil
	if p := opts.Previous; p != nil {
		h.cache, h.lineage = p.cache, p.lineage
	}
	if h.live && h.lineage == nil {
		h.lineage = &lineage{arrays: map[string]lineageEntry{}}
	}
	h.cache.noReadAhead = opts.NoReadAhead
	h.cache.logf = opts.Logf
	if opts.Concurrency > 0 {
		h.cache.prefetch = make(chan struct{}, opts.Concurrency)
	}
	h.remote = opts.Remote
	if opts.Remote {
		h.cache.aheadTime = remoteAheadTime
		h.cache.decoding = newDecodeSlots(cores.Workers())
	}
	limit := consolidatedLimit(opts)
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	h.workers = 2 * runtime.GOMAXPROCS(0)
	if opts.Remote {
		h.workers = max(h.workers, opts.Concurrency)
	}
	// A remote store answers each request after a round trip: its root
	// documents are asked for in two rounds (probeRoot), then used in the
	// order below.
	var probed map[string]probe
	if opts.Remote {
		probed = probeRoot(ctx, st, limit)
		h.probedMissing = map[string]bool{}
		for key, p := range probed {
			if errors.Is(p.err, store.ErrNotExist) {
				h.probedMissing[key] = true
			}
		}
	}
	consolidatedTooLarge, v3Listed := false, false
	get := func(key string) ([]byte, bool, error) {
		var b []byte
		var err error
		switch p, ok := probed[key]; {
		case ok:
			b, err = p.b, p.err
		case key == v3Doc || key == v2Consolidated:
			// Documents that may hold consolidated metadata.
			b, err = getLimited(ctx, st, key, limit)
		default:
			b, _, err = getDocument(ctx, st, key)
		}
		switch {
		case errors.Is(err, store.ErrNotExist):
			return nil, false, nil
		case err != nil:
			return nil, false, store.Errorf(st, err, "")
		}
		if (key == v3Doc || key == v2Consolidated) && len(b) > compactAbove {
			b = slices.Clone(meta.CompactInPlace(b))
			h.compacted = map[string]int64{key: limit}
		}
		h.prefetched[key] = b
		return b, true, nil
	}
	doc, ok, err := get(v3Doc)
	if errors.Is(err, errTooLarge) {
		// A root zarr.json over the limit holds consolidated metadata
		// (a node's own document is far smaller): read it once, keep
		// the root's own members, and list the store.
		if doc, err = v3RootWithoutConsolidated(ctx, st, limit); err == nil {
			ok, v3Listed = true, true
			h.prefetched[v3Doc] = doc
			logf("%s: %s is over the %d-byte limit for consolidated metadata (--cache-size sets it): listing the store instead", st, v3Doc, limit)
		}
	}
	if err != nil {
		return nil, err
	} else if ok {
		if draft, err := meta.DetectDraft(doc); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", st, v3Doc, err)
		} else if draft != nil {
			h.format, h.draft = draft.Format(), draft
			return h, nil
		}
		h.format = FormatV3
		if v3Listed {
			return h, nil // consolidated metadata over the limit: listed
		}
		if err := h.readV3Consolidated(doc, limit); errors.Is(err, meta.ErrTooManyMembers) {
			logf("%s: %s: %v: listing the store instead", st, v3Doc, err)
		} else if err != nil {
			return nil, store.Errorf(st, err, "")
		}
		return h, nil
	}
	if doc, ok, err := get(v2Consolidated); errors.Is(err, errTooLarge) {
		// Over the limit: list the store (the root then shows no
		// .zmetadata, which it would have to hold).
		logf("%s: %s is over the %d-byte limit for consolidated metadata (--cache-size sets it): listing the store instead", st, v2Consolidated, limit)
		consolidatedTooLarge = true
	} else if err != nil {
		return nil, err
	} else if ok {
		h.format = FormatV2
		err := h.readV2Consolidated(doc, limit)
		if err == nil {
			return h, nil
		}
		if errors.Is(err, meta.ErrTooManyMembers) {
			logf("%s: %v: listing the store instead", st, err)
		}
		// Broken consolidated metadata: read the documents themselves
		// (the root still shows .zmetadata as stored).
		h.consolidated = nil
	}
	for _, key := range []string{v2ArrayDoc, v2GroupDoc} {
		if _, ok, err := get(key); err != nil {
			return nil, err
		} else if ok {
			h.format = FormatV2
			return h, nil
		}
	}
	if consolidatedTooLarge {
		// No .zgroup either: the root is the group .zmetadata implies.
		h.format = FormatV2
		return h, nil
	}
	if h.format == FormatV2 {
		return nil, fmt.Errorf("%s: %s: %w: no usable \"metadata\" and no %s or %s", st, v2Consolidated, ErrInvalidMetadata, v2ArrayDoc, v2GroupDoc)
	}
	if _, ok, err := get(v1MetaDoc); err != nil {
		return nil, err
	} else if ok {
		h.format = FormatV1
		return h, nil
	}
	return nil, fmt.Errorf("%s: no Zarr metadata (zarr.json, .zgroup, .zarray, .zmetadata or v1 meta) at the root: %w", st, ErrNotExist)
}

// compactAbove is the size above which a document that may hold
// consolidated metadata is kept without its white space
// (meta.CompactInPlace): about half of what zarr-python writes.
const compactAbove = 1 << 20

// rootDocument returns the document name of the root, stored under key,
// read by Open as data: when Open compacted it, the stored bytes are
// fetched again when read (Document.Bytes).
func (h *Hierarchy) rootDocument(name, key string, data []byte) Document {
	d := Document{Name: name, Data: data}
	if limit, ok := h.compacted[key]; ok {
		d.stored = &storedDocument{st: h.st, key: key, limit: limit}
	}
	return d
}

// probe is the outcome of reading one root document.
type probe struct {
	b   []byte
	err error
}

// probeRoot reads the documents that tell a remote hierarchy's format in
// two rounds of requests sent at once: zarr.json with .zmetadata (a v3
// hierarchy, or a consolidated v2 one, opens in one round trip), then, if
// neither is there, .zarray, .zgroup and the v1 meta document.
func probeRoot(ctx context.Context, st store.Store, limit int64) map[string]probe {
	m := map[string]probe{}
	for _, round := range [][]string{{v3Doc, v2Consolidated}, {v2ArrayDoc, v2GroupDoc, v1MetaDoc}} {
		res := make([]probe, len(round))
		var wg sync.WaitGroup
		for i, key := range round {
			wg.Go(func() {
				var b []byte
				var err error
				if key == v3Doc || key == v2Consolidated {
					b, err = getLimited(ctx, st, key, limit)
				} else {
					b, _, err = getDocument(ctx, st, key)
				}
				res[i] = probe{b, err}
			})
		}
		wg.Wait()
		found := false
		for i, key := range round {
			m[key] = res[i]
			found = found || !errors.Is(res[i].err, store.ErrNotExist)
		}
		if found {
			break
		}
	}
	return m
}

// remoteAheadTime is how much of a sequential reader's data a remote
// store's read-ahead keeps in flight: a second or two hides the store's
// round trips and the swings of its throughput (within a quarter of the
// cache).
const remoteAheadTime = 1500 * time.Millisecond

// getDocument reads a metadata document, refusing (with ErrInvalidMetadata)
// one over MaxDocumentSize without reading more than that. It also returns
// the document's modification time when the store tells it with the read
// (store.InfoGetter), else the zero time.
func getDocument(ctx context.Context, st store.Store, key string) ([]byte, time.Time, error) {
	r := store.Range(0, MaxDocumentSize+1)
	var (
		b    []byte
		info store.Info
		err  error
	)
	if ig, ok := st.(store.InfoGetter); ok {
		b, info, err = ig.GetRangeInfo(ctx, key, r)
	} else {
		b, err = st.GetRange(ctx, key, r)
	}
	if err != nil {
		return nil, time.Time{}, err
	}
	if len(b) > MaxDocumentSize {
		return nil, time.Time{}, fmt.Errorf("%w: %s is over the %d-byte limit for metadata documents", ErrInvalidMetadata, key, MaxDocumentSize)
	}
	return b, info.ModTime, nil
}

// v3RootWithoutConsolidated reads the root zarr.json of st, which is
// over limit, and returns it without its consolidated_metadata member:
// the root node's own document. It reads at most four times limit.
func v3RootWithoutConsolidated(ctx context.Context, st store.Store, limit int64) ([]byte, error) {
	b, err := getLimited(ctx, st, v3Doc, 4*limit)
	if err != nil {
		return nil, store.Errorf(st, err, "")
	}
	doc, err := meta.WithoutMember(v3Doc, b, "consolidated_metadata")
	if err != nil {
		return nil, store.Errorf(st, err, "")
	}
	return doc, nil
}

// readV3Consolidated checks the root zarr.json for a draft entry point and
// loads its inline consolidated metadata, if any. The document is walked
// once (meta.TopMember), whatever its size: its members are looked up by
// their exact names (decoding into a struct would match
// "Consolidated_Metadata" too).
func (h *Hierarchy) readV3Consolidated(doc []byte, limit int64) error {
	zf, err := meta.TopMember(v3Doc, doc, "zarr_format")
	if err != nil {
		return nil // the root node reports the problem
	}
	var s string
	if json.Unmarshal(zf, &s) == nil {
		return codec.Unsupportedf("v3 draft hierarchy (zarr_format %q)", s)
	}
	cons, err := meta.TopMember(v3Doc, doc, "consolidated_metadata")
	if err != nil || len(cons) == 0 || cons[0] != '{' {
		return nil
	}
	var kind string
	if k, err := meta.TopMember(v3Doc, cons, "kind"); err != nil || json.Unmarshal(k, &kind) != nil || kind != "inline" {
		return nil
	}
	md, err := meta.TopMember(v3Doc, cons, "metadata")
	if err != nil || len(md) == 0 || md[0] != '{' {
		return nil
	}
	c, err := newConsolidated(v3Doc, md, true, limit)
	if errors.Is(err, meta.ErrTooManyMembers) {
		return err
	}
	h.consolidated = c // nil when it is broken: the store is listed
	return nil
}

// readV2Consolidated loads a .zmetadata document: walked once, whatever
// its size, each node's document left in place (newConsolidated).
func (h *Hierarchy) readV2Consolidated(doc []byte, limit int64) error {
	md, err := meta.TopMember(v2Consolidated, doc, "metadata")
	if err != nil {
		return err
	}
	if len(md) == 0 || md[0] != '{' {
		return fmt.Errorf("%w: no \"metadata\" object", ErrInvalidMetadata)
	}
	c, err := newConsolidated(v2Consolidated, md, false, limit)
	if err != nil {
		return err
	}
	h.consolidated = c
	return nil
}

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

// document returns the document key of the node, from consolidated
// metadata (re-serialised with indent), from the root documents read by
// Open, or from the store. found is false for a missing document; modTime
// is the document's modification time when the store told it with the
// read (see setModTime).
func (h *Hierarchy) document(ctx context.Context, key string, indent string) (doc []byte, modTime time.Time, fromConsolidated, found bool, err error) {
	if raw, ok := h.consolidatedDoc(key); ok {
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
func (h *Hierarchy) consolidatedDoc(key string) ([]byte, bool) {
	if h.consolidated == nil {
		return nil, false
	}
	return h.consolidated.doc(key)
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
	return h.consolidated.hasNode(p)
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

// lineage is what the generations of a live hierarchy (Options.Live,
// Options.Previous) share: for each path, the array last loaded there and
// the ids of the arrays before it whose decoded chunks it may take over,
// newest first. A generation may load an array and never read it: its
// successor then looks for chunks under the older ids too.
type lineage struct {
	mu     sync.Mutex
	arrays map[string]lineageEntry
}

type lineageEntry struct {
	a   *Array
	ids []uint64 // a's id, then its predecessors' (at most maxGenerations)
}

// maxGenerations bounds the arrays whose chunks a live array looks for.
const maxGenerations = 4

// takeOver records a as the array at path p and returns the ids of the
// arrays loaded there before whose chunks a can take over,
// newest first.
func (l *lineage) takeOver(p string, a *Array) []uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var prev []uint64
	if old, ok := l.arrays[p]; ok && old.a.Err == nil && a.Err == nil && old.a.Meta().SameChunks(a.Meta()) {
		prev = old.ids
	}
	ids := append([]uint64{a.id}, prev...)
	l.arrays[p] = lineageEntry{a: a, ids: ids[:min(len(ids), maxGenerations)]}
	return prev
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

func (h *Hierarchy) loadV3(ctx context.Context, p string) (*Node, error) {
	key := store.Join(p, v3Doc)
	doc, mt, fromCons, found, err := h.document(ctx, key, "  ")
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, ErrNotExist
	}
	d := h.newDocument(v3Doc, key, doc, fromCons)
	if p == "" {
		d = h.rootDocument(v3Doc, key, doc)
	}
	n := &Node{Path: p, Kind: KindUnknown, Format: FormatV3, Documents: []Document{d}}
	if !fromCons {
		h.setModTime(ctx, n, key, mt)
	}
	if p == "" && len(doc) > MaxDocumentSize {
		// A root whose consolidated metadata makes its document large
		// (within Options.ConsolidatedLimit): its own members are
		// parsed, the consolidated ones were read by Open.
		if doc, err = meta.WithoutMember(v3Doc, doc, "consolidated_metadata"); err != nil {
			n.Err = err
			return n, nil
		}
	}
	v, err := meta.ParseV3Node(doc)
	if v.Kind != 0 {
		n.Kind, n.Attributes = v.Kind, v.Attributes
	}
	if err != nil {
		n.Err = err
		return n, nil
	}
	if n.Kind == KindArray {
		n.Array, n.Err = newArray(meta.ParseV3Array(v))
	}
	return n, nil
}

// docResult is what Hierarchy.document returned for a key.
type docResult struct {
	doc             []byte
	modTime         time.Time
	fromCons, found bool
	err             error
}

// docSet returns the results of h.document for a node's documents (get).
type docSet struct {
	h      *Hierarchy
	ctx    context.Context
	indent string
	got    map[string]*docResult // fetched ahead, by key
}

// documents returns the results of h.document for keys: for a remote
// store, keys are all fetched at once first (one round trip instead of one
// per document, for documents that may be missing); otherwise each is read
// when asked for.
func (h *Hierarchy) documents(ctx context.Context, indent string, keys ...string) docSet {
	var got map[string]*docResult
	if h.remote && h.consolidated == nil {
		got = make(map[string]*docResult, len(keys))
		var wg sync.WaitGroup
		for _, k := range keys {
			r := &docResult{}
			got[k] = r
			wg.Go(func() { r.doc, r.modTime, r.fromCons, r.found, r.err = h.document(ctx, k, indent) })
		}
		wg.Wait()
	}
	return docSet{h: h, ctx: ctx, indent: indent, got: got}
}

// get returns what h.document returns for key.
func (d docSet) get(key string) ([]byte, time.Time, bool, bool, error) {
	if r, ok := d.got[key]; ok {
		return r.doc, r.modTime, r.fromCons, r.found, r.err
	}
	return d.h.document(d.ctx, key, d.indent)
}

func (h *Hierarchy) loadV2(ctx context.Context, p string) (*Node, error) {
	n := &Node{Path: p, Format: FormatV2}
	arrayKey, attrsKey := store.Join(p, v2ArrayDoc), store.Join(p, v2AttrsDoc)
	// Arrays outnumber groups: a group's .zgroup is asked for once its
	// .zarray is found missing.
	docs := h.documents(ctx, "    ", arrayKey, attrsKey)
	doc, mt, fromCons, found, err := docs.get(arrayKey)
	if errors.Is(err, ErrInvalidMetadata) {
		// A .zarray too large to read: an array, broken.
		n.Kind, n.Err = KindArray, err
		return n, nil
	}
	if err != nil {
		return nil, err
	}
	name, key := v2ArrayDoc, arrayKey
	n.Kind = KindArray
	if !found {
		groupKey := store.Join(p, v2GroupDoc)
		if doc, mt, fromCons, found, err = docs.get(groupKey); err != nil {
			return nil, err
		}
		if !found {
			if p == "" && h.consolidated != nil {
				// A root with .zmetadata but no .zgroup: an implicit root group.
				n.Kind = KindGroup
				n.Documents = []Document{h.rootDocument(v2Consolidated, v2Consolidated, h.prefetched[v2Consolidated])}
				return n, nil
			}
			return nil, ErrNotExist
		}
		name, key, n.Kind = v2GroupDoc, groupKey, KindGroup
	}
	n.Documents = make([]Document, 1, 3) // with .zattrs, and the root's .zmetadata
	n.Documents[0] = h.newDocument(name, key, doc, fromCons)
	if !fromCons {
		h.setModTime(ctx, n, key, mt)
	}
	attrs, _, attrsFromCons, hasAttrs, err := docs.get(attrsKey)
	if err != nil {
		n.Err = fmt.Errorf("%s: %w", v2AttrsDoc, err)
	} else if hasAttrs {
		n.Documents = append(n.Documents, h.newDocument(v2AttrsDoc, attrsKey, attrs, attrsFromCons))
		if n.Attributes, err = meta.ParseAttributes(v2AttrsDoc, attrs); err != nil {
			n.Err = err
		}
	}
	if zm, ok := h.prefetched[v2Consolidated]; ok && p == "" {
		n.Documents = append(n.Documents, h.rootDocument(v2Consolidated, v2Consolidated, zm))
	}
	n.Documents = slices.Clip(n.Documents) // an append elsewhere copies
	if n.Err != nil {
		return n, nil
	}
	if n.Kind == KindGroup {
		n.Err = meta.ParseV2Group(doc)
	} else {
		n.Array, n.Err = newArray(meta.ParseV2Array(doc, n.Attributes))
	}
	return n, nil
}

// Children returns the child groups and arrays of the node at path, sorted
// by name: from consolidated metadata when the hierarchy has it, otherwise
// by listing the store one level down. Children whose metadata is broken
// are included with Node.Err set. An array has no children; a group whose
// own metadata is broken, or a node too broken to tell its kind, has the
// children found below it: a broken node hides nothing.
func (h *Hierarchy) Children(ctx context.Context, path string) ([]*Node, error) {
	parent, err := h.Node(ctx, path)
	if err != nil {
		return nil, err
	}
	if parent.Kind == KindArray {
		return nil, nil
	}
	out, err := h.children(ctx, parent.Path)
	if err != nil || !h.remote {
		return out, err
	}
	// A reader walking the tree lists the child groups next: load their
	// children now, in the background, a level ahead (each group once).
	h.mu.Lock()
	var ahead []string
	for _, n := range out {
		if n.Kind == KindGroup && !h.ahead[n.Path] {
			if h.ahead == nil {
				h.ahead = map[string]bool{}
			}
			h.ahead[n.Path] = true
			ahead = append(ahead, n.Path)
		}
	}
	h.mu.Unlock()
	for _, p := range ahead {
		go func() {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), readAheadTimeout)
			defer cancel()
			h.children(ctx, p) // errors show again when the group is listed
		}()
	}
	return out, nil
}

// FetchStored fetches, in the background and all at once (within the
// store's requests in flight), what a remote store holds under the
// documents of nodes that consolidated metadata described: a reader
// listing a group and statting what it lists (ls -l) lists its children's
// directories next, whose documents' sizes are those of the stored bytes
// (Document.Bytes), each a round trip that would otherwise come one at a
// time. The caller says when (fs: when readers stat what they list): a
// reader that only lists (find) needs none of them, and a hierarchy of
// 100,000 arrays is listed from its consolidated metadata alone.
func (h *Hierarchy) FetchStored(ctx context.Context, nodes []*Node) {
	if !h.remote {
		return
	}
	var docs []Document
	for _, n := range nodes {
		for _, d := range n.Documents {
			if d.stored != nil {
				docs = append(docs, d)
			}
		}
	}
	if len(docs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), readAheadTimeout)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(len(docs), h.workers) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(docs); i = int(next.Add(1) - 1) {
				docs[i].Bytes(ctx) // kept by the document; an error shows when it is read
			}
		})
	}
	go func() {
		wg.Wait()
		cancel()
	}()
}

// children returns the child nodes of the group at path p, sorted by name.
func (h *Hierarchy) children(ctx context.Context, p string) ([]*Node, error) {
	names, err := h.childNames(ctx, p)
	if err != nil {
		return nil, store.Errorf(h.st, err, "node %q: listing children", "/"+p)
	}
	nodes := make([]*Node, len(names))
	// A few workers load them all (as many as the store may have requests
	// in flight, for a remote one): each grows its stack once, where a
	// goroutine per child grew one for every node it loaded.
	var next atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	for range min(len(names), h.workers) {
		g.Go(func() error {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(names) {
					return nil
				}
				cp := store.Join(p, names[i])
				n, err := h.Node(gctx, cp)
				switch {
				case errors.Is(err, ErrNotExist):
					// A prefix holding chunks or other data, not a node.
				case err != nil && gctx.Err() != nil:
					return gctx.Err()
				case err != nil:
					nodes[i] = &Node{Path: cp, Kind: KindUnknown, Format: h.format, Attributes: json.RawMessage("{}"), Err: err}
				default:
					nodes[i] = n
				}
			}
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out := nodes[:0]
	for _, n := range nodes {
		if n != nil {
			out = append(out, n)
		}
	}
	return out, nil
}

// childNames returns the sorted candidate child names of the group at p,
// listed once (the store does not change under a hierarchy): a caller
// asking while another lists waits for that listing (a reader listing a
// group its parent's listing is loading ahead).
func (h *Hierarchy) childNames(ctx context.Context, p string) ([]string, error) {
	for {
		h.mu.Lock()
		names, ok := h.names[p]
		wait, busy := h.naming[p]
		if !ok && !busy {
			if h.naming == nil {
				h.naming = map[string]chan struct{}{}
			}
			h.naming[p] = make(chan struct{})
		}
		h.mu.Unlock()
		if ok {
			return names, nil
		}
		if !busy {
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-wait: // listed, or failed: look again, and list if it failed
		}
	}
	names, err := h.listChildNames(ctx, p)
	h.mu.Lock()
	if err == nil {
		if h.names == nil {
			h.names = map[string][]string{}
		}
		h.names[p] = names
	}
	close(h.naming[p])
	delete(h.naming, p)
	h.mu.Unlock()
	return names, err
}

// listChildNames lists the sorted candidate child names of the group at p.
func (h *Hierarchy) listChildNames(ctx context.Context, p string) ([]string, error) {
	if h.draft != nil {
		return h.draftChildNames(ctx, p)
	}
	var names []string
	if h.consolidated != nil {
		names = h.consolidated.childNames(p)
	} else {
		l, ok := h.st.(store.Lister)
		if !ok {
			return nil, notListable{codec.Unsupportedf("listing: %s cannot list its keys and the hierarchy has no consolidated metadata; "+
				"open a node by its path (zarrfs ls/info/cat STORE PATH) or consolidate the metadata", h.st)}
		}
		var wg sync.WaitGroup
		if h.remote {
			wg.Go(func() { h.listPage(ctx, p) }) // at the same time: no round trip added
		}
		_, prefixes, err := l.ListDir(ctx, p)
		wg.Wait()
		if err != nil {
			return nil, err
		}
		names = prefixes
	}
	out := names[:0]
	for _, n := range names {
		if !strings.HasPrefix(n, "__") {
			out = append(out, n)
		}
	}
	return out, nil
}

// ErrNotListable matches the error of Children for a group whose children
// cannot be found: the store cannot list its keys (an HTTP server) and
// the hierarchy has no consolidated metadata. The group's children can
// still be opened by path with Node. The error also matches
// ErrUnsupported.
var ErrNotListable = errors.New("children cannot be listed")

// notListable is a listing error matching ErrNotListable.
type notListable struct{ error }

func (e notListable) Is(target error) bool { return target == ErrNotListable }
func (e notListable) Unwrap() error        { return e.error }

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
