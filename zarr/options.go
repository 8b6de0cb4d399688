package zarr

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/zarrfs/zarrfs/store"
)

// DefaultCacheSize is the decoded-chunk cache size used when
// Options.CacheSize is 0: room for a few rows of chunks of large arrays
// being read ahead by several readers at once.
const DefaultCacheSize = 1 << 30

// Options configure a Hierarchy.
type Options struct {
	// CacheSize bounds the decoded-chunk cache in bytes; 0 means
	// DefaultCacheSize, a negative value disables caching.
	CacheSize int64
	// NoReadAhead turns off the read-ahead of sequential readers (and the
	// dropping of the chunks they have passed from the cache).
	NoReadAhead bool
	// Concurrency is how many chunks a read, and the read-ahead, fetch
	// and decode at once; 0 means GOMAXPROCS. Remote stores want more
	// than the cores: each fetch mostly waits on the network.
	Concurrency int
	// Remote says the store is far away (HTTP, S3), where each request
	// costs a round trip: a node's metadata documents are then fetched at
	// once rather than one after another, children load Concurrency at a
	// time, and listing a group also loads its child groups' children in
	// the background (a level ahead of a reader walking the tree).
	Remote bool
}

// fetchWorkers returns how many chunks a read of a fetches at once.
func (a *Array) fetchWorkers() int {
	if a.cache != nil && cap(a.cache.prefetch) > 0 {
		return cap(a.cache.prefetch)
	}
	return runtime.GOMAXPROCS(0)
}

// Hierarchy is an opened Zarr hierarchy: the store, its root node and the
// nodes loaded so far (metadata never changes under a reader, so each node
// is loaded once). It is safe for concurrent use.
type Hierarchy struct {
	st     store.Store
	format Format
	cache  *chunkCache

	// consolidated holds the documents of consolidated metadata by store
	// key ("a/.zarray", or "a/zarr.json" for v3); nil when there is none.
	consolidated map[string]json.RawMessage
	// prefetched holds root documents read while detecting the format.
	prefetched map[string][]byte
	// draft is the layout of a v3 draft hierarchy (nil for other formats).
	draft *draftLayout

	// remote and workers: Options.Remote and how many nodes Children
	// loads at once.
	remote  bool
	workers int

	mu      sync.Mutex
	nodes   map[string]*Node
	loading map[string]*nodeLoad // loads under way, by path
	names   map[string][]string  // child names of the groups listed, by path
	ahead   map[string]bool      // groups whose children were loaded ahead (remote)
}

// WritableStore is a store that can also be changed.
type WritableStore interface {
	store.Store
	store.Writer
}

// Store returns the store the hierarchy reads.
func (h *Hierarchy) Store() store.Store { return h.st }

// Name returns the last segment of the node's path, "" for the root.
func (n *Node) Name() string {
	if i := strings.LastIndexByte(n.Path, '/'); i >= 0 {
		return n.Path[i+1:]
	}
	return n.Path
}

// cleanPath turns a user path ("/a/b/", "a//b") into a node path ("a/b").
func cleanPath(p string) (string, error) {
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

// GroupMeta describes a group to create.
type GroupMeta struct {
	Format     Format
	Attributes map[string]any
}

// CodecSpec names a codec and its configuration.
type CodecSpec struct {
	Name          string
	Configuration map[string]any
}

// ArrayMeta describes an array to create.
type ArrayMeta struct {
	Format     Format
	Shape      []int64
	ChunkShape []int64
	// DataType is a v3 data type name ("float32") or, for FormatV2, a NumPy
	// type string (">i2").
	DataType  string
	FillValue any
	// Order is the v2 memory order of chunks, "C" (default) or "F".
	Order string
	// DimensionSeparator is the v2 chunk key separator, "." (default) or "/".
	DimensionSeparator string
	// ChunkKeyEncoding is the v3 chunk key encoding, "default" or "v2",
	// with Separator ("/" by default for "default", "." for "v2").
	ChunkKeyEncoding string
	Separator        string
	// Codecs is the v3 codec pipeline; nil means [bytes little-endian].
	Codecs []CodecSpec
	// Filters and Compressor are the v2 chain.
	Filters        []CodecSpec
	Compressor     *CodecSpec
	DimensionNames []string
	Attributes     map[string]any
}
