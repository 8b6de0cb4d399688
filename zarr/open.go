package zarr

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/zarrfs/zarrfs/internal/cores"
	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/zarr/meta"
)

// This file opens a hierarchy: it detects the format at the root and reads
// the root documents, with the consolidated metadata they may hold.

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
	// zmFile is set when Open read a large .zmetadata from a store close
	// by that tells its file's size and time: the document is indexed
	// in place and not kept (storedConsolidated).
	var zmFile *storedConsolidated
	ig, local := st.(store.InfoGetter)
	local = local && !opts.Remote
	get := func(key string) ([]byte, bool, error) {
		var b []byte
		var err error
		switch p, ok := probed[key]; {
		case ok:
			b, err = p.b, p.err
		case key == v2Consolidated && local:
			var info store.Info
			if b, info, err = ig.GetRangeInfo(ctx, key, store.Range(0, limit+1)); err == nil && int64(len(b)) > limit {
				err = fmt.Errorf("%w: %s is over the %d-byte limit for consolidated metadata: %w", ErrInvalidMetadata, key, limit, errTooLarge)
			}
			if err == nil && len(b) > compactAbove && info.Validates() && info.Size == int64(len(b)) {
				zmFile = &storedConsolidated{st: ig, key: key, info: info, logf: logf}
				h.prefetched[key] = nil // read again when shown (rootDocument)
				h.compacted = map[string]int64{key: limit}
				return b, true, nil
			}
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
		err := h.readV2Consolidated(doc, limit, zmFile)
		if err == nil {
			return h, nil
		}
		if zmFile != nil {
			// Shown as stored; kept compacted as a remote one is.
			h.prefetched[v2Consolidated] = slices.Clone(meta.CompactInPlace(doc))
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
