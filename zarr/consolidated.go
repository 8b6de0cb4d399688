package zarr

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/zarr/meta"
)

// This file holds a hierarchy's consolidated metadata (v2 .zmetadata, the
// v3 root's inline consolidated_metadata). Its size grows with the
// hierarchy (tens of megabytes for 100,000 arrays), so it is not bounded
// by MaxDocumentSize but by memory (Options.ConsolidatedLimit, by default
// a share of the chunk cache), and it is kept as the one buffer read from
// the store with a sorted index of its members (meta.ConsolidatedIndex):
// each node's document is a sub-slice of that buffer until the node is
// opened.

// consolidatedMeta is the consolidated metadata of a hierarchy: its
// index (meta.ConsolidatedIndex) and the ids of the arrays it describes.
type consolidatedMeta struct {
	*meta.ConsolidatedIndex
	// ids are the array ids (Array.id) of the arrays described, one
	// for each entry: the array of entry i is ids+i, whenever it is
	// parsed.
	ids uint64
	// file, when set, is the stored document the index places the
	// documents in (ConsolidatedIndex.Drop): they are read from there.
	file *storedConsolidated
}

// storedConsolidated is a stored document of consolidated metadata
// whose members are read where the index places them, when their node
// is opened. A store close by reads them at the cost of a pread.
type storedConsolidated struct {
	st   store.InfoGetter
	key  string
	info store.Info // the file's size and time when it was indexed
	logf func(string, ...any)
	// changed says the file has changed since: said once in the log.
	changed atomic.Bool
}

// errConsolidatedChanged is the error of a node whose document is to be
// read from consolidated metadata that has changed since it was indexed.
var errConsolidatedChanged = errors.New("consolidated metadata changed since the mount indexed it")

// doc returns the consolidated document stored under key, and whether
// there is one: from the buffer kept, or read from the stored document
// (storedConsolidated.read).
func (c *consolidatedMeta) doc(ctx context.Context, key string) ([]byte, bool, error) {
	if c.file == nil {
		b, ok := c.Doc(key)
		return b, ok, nil
	}
	off, n, ok := c.Lookup(key)
	if !ok {
		return nil, false, nil
	}
	b, err := c.file.read(ctx, off, n)
	if err != nil {
		return nil, true, fmt.Errorf("consolidated %s: %w", key, err)
	}
	return b, true, nil
}

// read returns the n bytes at off of the stored document, refusing them
// (with ErrInvalidMetadata and errConsolidatedChanged, said once in the
// log) when the file's size or time is no longer what was indexed: the
// offsets then no longer place the documents.
func (s *storedConsolidated) read(ctx context.Context, off int64, n int) ([]byte, error) {
	b, info, err := s.st.GetRangeInfo(ctx, s.key, store.Range(off, int64(n)))
	if err != nil {
		return nil, err
	}
	if info.Size != s.info.Size || !info.ModTime.Equal(s.info.ModTime) || len(b) != n {
		if !s.changed.Swap(true) {
			s.logf("%s: %s: %v (size %d, now %d): its nodes not yet opened report an error until the mount is made again",
				s.st, s.key, errConsolidatedChanged, s.info.Size, info.Size)
		}
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidMetadata, s.key, errConsolidatedChanged)
	}
	// As a kept document is: without the white space of its place in
	// the file, which meta.ConsolidatedDocument would make room for twice.
	return meta.CompactInPlace(b), nil
}

// newConsolidated indexes the members of the "metadata" object obj of
// consolidated metadata read from the document docName.
func newConsolidated(docName string, obj []byte, v3 bool, limit int64) (*consolidatedMeta, error) {
	ix, err := meta.NewConsolidatedIndex(docName, obj, v3, int(min(limit/entryCost, math.MaxInt32)))
	if err != nil {
		return nil, err
	}
	n := uint64(ix.Len())
	return &consolidatedMeta{ConsolidatedIndex: ix, ids: arrayIDs.Add(n+1) - n}, nil
}

// arrayID returns the id of the array at p, which the consolidated
// metadata describes: the same whenever the array is parsed.
func (c *consolidatedMeta) arrayID(p string) uint64 {
	return c.ids + uint64(c.ArrayIndex(p))
}

// readV3Consolidated loads the inline consolidated metadata of the root
// zarr.json, if any (meta.V3ConsolidatedMetadata).
func (h *Hierarchy) readV3Consolidated(doc []byte, limit int64) error {
	md, err := meta.V3ConsolidatedMetadata(doc)
	if err != nil || md == nil {
		return err
	}
	c, err := newConsolidated(v3Doc, md, true, limit)
	if errors.Is(err, meta.ErrTooManyMembers) {
		return err
	}
	h.consolidated = c // nil when it is broken: the store is listed
	return nil
}

// readV2Consolidated loads a .zmetadata document: walked once, whatever
// its size, each node's document left in place (newConsolidated). With
// file, doc is that stored document as read whole, and is not kept: the
// documents are read from the file when their nodes are opened.
func (h *Hierarchy) readV2Consolidated(doc []byte, limit int64, file *storedConsolidated) error {
	md, at, err := meta.V2ConsolidatedMetadataAt(doc)
	if err != nil {
		return err
	}
	c, err := newConsolidated(v2Consolidated, md, false, limit)
	if err != nil {
		return err
	}
	if file != nil {
		c.Drop(int64(at))
		c.file = file
	}
	h.consolidated = c
	return nil
}

// entryCost is about what indexing one member of consolidated metadata
// costs while it is walked (meta.ConsolidatedEntries): a document within
// the limit has at most limit / entryCost members, so that a hostile one
// of tiny members cannot make the index many times its size.
const entryCost = 64

// DefaultConsolidatedShare is the share of the chunk cache's size that
// consolidated metadata may take when Options.ConsolidatedLimit is 0.
const DefaultConsolidatedShare = 2

// consolidatedLimit returns the most bytes of consolidated metadata opts
// let a hierarchy hold: Options.ConsolidatedLimit, else half the chunk
// cache (DefaultCacheSize's when the cache is off), never less than
// MaxDocumentSize.
func consolidatedLimit(opts Options) int64 {
	if opts.ConsolidatedLimit > 0 {
		return opts.ConsolidatedLimit
	}
	size := opts.CacheSize
	if size <= 0 {
		size = DefaultCacheSize
	}
	return max(size/DefaultConsolidatedShare, MaxDocumentSize)
}

// errTooLarge marks a document over the limit it was read with.
var errTooLarge = errors.New("zarr: over the limit")

// getLimited reads the document key, refusing (with errTooLarge and
// ErrInvalidMetadata) one over limit bytes without reading more than
// that.
func getLimited(ctx context.Context, st store.Store, key string, limit int64) ([]byte, error) {
	b, err := st.GetRange(ctx, key, store.Range(0, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: %s is over the %d-byte limit for consolidated metadata: %w", ErrInvalidMetadata, key, limit, errTooLarge)
	}
	return b, nil
}
