package zarr

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/zarr/meta"
)

// This file holds a hierarchy's consolidated metadata (v2 .zmetadata, the
// v3 root's inline consolidated_metadata). Its size grows with the
// hierarchy (tens of megabytes for 100,000 arrays), so it is not bounded
// by MaxDocumentSize but by memory (Options.ConsolidatedLimit, by default
// a share of the chunk cache), and it is kept as the one buffer read from
// the store with a sorted index of its members: each node's document is a
// sub-slice of that buffer until the node is opened.

// consolidatedMeta is the consolidated metadata of a hierarchy.
type consolidatedMeta struct {
	// entries are the members of the "metadata" object, sorted by key,
	// those whose key is not a valid store key left out; their documents
	// are sub-slices of the document read.
	entries []meta.ConsolidatedEntry
	// v3 says the keys are node paths ("a/b", v3) rather than
	// document keys ("a/b/.zarray", v2).
	v3 bool
	// ids are the array ids (Array.id) of the arrays described, one
	// for each entry: the array of entry i is ids+i, whenever it is
	// parsed.
	ids uint64
}

// newConsolidated indexes the members of the "metadata" object obj of
// consolidated metadata read from the document docName.
func newConsolidated(docName string, obj []byte, v3 bool, limit int64) (*consolidatedMeta, error) {
	entries, err := meta.ConsolidatedEntries(docName, obj, int(min(limit/entryCost, math.MaxInt32)))
	if err != nil {
		return nil, err
	}
	// A key that is not a valid store key ("../x", "/etc", "a//b")
	// names no node: it is left out.
	out := entries[:0]
	for _, e := range entries {
		if store.ValidateKey(e.Key) == nil {
			out = append(out, e)
		}
	}
	clear(entries[len(out):])
	ids := arrayIDs.Add(uint64(len(out))+1) - uint64(len(out))
	return &consolidatedMeta{entries: out, v3: v3, ids: ids}, nil
}

// arrayID returns the id of the array at p, which the consolidated
// metadata describes: the same whenever the array is parsed.
func (c *consolidatedMeta) arrayID(p string) uint64 {
	key := p
	if !c.v3 {
		key = store.Join(p, v2ArrayDoc)
	}
	i, _ := findPrefix(c.entries, key)
	return c.ids + uint64(i)
}

// doc returns the consolidated document stored under key ("a/.zarray",
// "a/zarr.json"), and whether there is one.
func (c *consolidatedMeta) doc(key string) ([]byte, bool) {
	if c.v3 {
		p, ok := strings.CutSuffix(key, "/"+v3Doc)
		if !ok {
			return nil, false // the root's document is the root zarr.json itself
		}
		key = p
	}
	d := meta.FindConsolidated(c.entries, key)
	return d, d != nil
}

// hasNode reports whether the consolidated metadata describes the node
// at p.
func (c *consolidatedMeta) hasNode(p string) bool {
	for _, doc := range []string{v3Doc, v2ArrayDoc, v2GroupDoc} {
		if _, ok := c.doc(store.Join(p, doc)); ok {
			return true
		}
	}
	return false
}

// childNames returns the sorted names of the nodes the consolidated
// metadata describes directly below the group at p: the keys below p
// form one run of the sorted entries, found by binary search.
func (c *consolidatedMeta) childNames(p string) []string {
	prefix := store.DirPrefix(p)
	lo, _ := findPrefix(c.entries, prefix)
	var names []string
	for _, e := range c.entries[lo:] {
		rest, ok := strings.CutPrefix(e.Key, prefix)
		if !ok {
			break
		}
		var name string
		if c.v3 {
			if strings.Contains(rest, "/") {
				continue
			}
			name = rest
		} else {
			n, doc, ok := strings.Cut(rest, "/")
			if !ok || strings.Contains(doc, "/") || doc != v2ArrayDoc && doc != v2GroupDoc && doc != v3Doc {
				continue
			}
			name = n
		}
		// The keys below one child are one run ("a/" prefixes them
		// all): a name repeats only right after itself.
		if len(names) > 0 && names[len(names)-1] == name {
			continue
		}
		names = append(names, name)
	}
	return sortedUnique(names)
}

// findPrefix returns the index of the first entry whose key is not
// before prefix.
func findPrefix(entries []meta.ConsolidatedEntry, prefix string) (int, bool) {
	lo, hi := 0, len(entries)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if entries[m].Key < prefix {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(entries) && entries[lo].Key == prefix
}

// sortedUnique sorts names, each once in a run, and removes repeated
// ones: keys sort "a.b/.zarray" before "a/.zarray" ('.' before '/'), names
// "a" before "a.b".
func sortedUnique(names []string) []string {
	sorted := true
	for i := 1; i < len(names); i++ {
		if names[i-1] >= names[i] {
			sorted = false
			break
		}
	}
	if !sorted {
		sort.Strings(names)
		names = slices.Compact(names)
	}
	return names
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
var errTooLarge = errors.New("over the limit")

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
