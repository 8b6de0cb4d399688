package zarr

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
	// the background (a level ahead of a reader walking the tree), and a
	// sequential reader's read-ahead covers what it reads in the next
	// 1.5 s (within a quarter of the cache).
	Remote bool
	// Live says the store may change while the hierarchy is open (a
	// --live mount): decoded chunks keep what the store said of their
	// stored values (store.InfoGetter), so that a hierarchy opened again
	// with Previous can take over those that did not change.
	Live bool
	// Previous is the hierarchy this one replaces, opened from the same
	// store with Live. The new one shares its chunk cache, and a decoded
	// chunk of an array laid out and encoded as before (this or an
	// earlier generation's) is taken over when the store tells
	// (store.InfoGetter.GetIfChanged: an ETag, a modification time) that
	// the stored chunk is the one decoded, rather than read and decoded
	// again.
	Previous *Hierarchy
	// ConsolidatedLimit bounds the consolidated metadata (.zmetadata, the
	// v3 root's consolidated_metadata) the hierarchy reads and keeps, in
	// bytes; 0 means half the chunk cache (of DefaultCacheSize when the
	// cache is off), and never less than MaxDocumentSize. Consolidated
	// metadata over it is not used: the store is listed instead.
	ConsolidatedLimit int64
	// Logf, when set, is told what the engine decides on its own that a
	// user should know: a hierarchy falling back from its consolidated
	// metadata to listing the store; a live hierarchy serving a cached
	// chunk whose revalidation failed (the store down), once per outage.
	Logf func(format string, args ...any)
}
