package zarr

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zarrfs/zarrfs/store"
)

// This file holds what a hierarchy in a remote store does to spare round
// trips: the root documents probed in two rounds, a node's documents
// fetched at once, a listing's first page telling which documents are
// missing, and the stored documents behind consolidated metadata fetched
// ahead.

// remoteAheadTime is how much of a sequential reader's data a remote
// store's read-ahead keeps in flight: a second or two hides the store's
// round trips and the swings of its throughput (within a quarter of the
// cache).
const remoteAheadTime = 1500 * time.Millisecond

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
