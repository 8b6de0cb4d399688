// Package diskcache is a store decorator that keeps what a far store (HTTP,
// S3, the stores Kerchunk and Icechunk references point to) answered in
// files in a folder, so that a later read of the same value — by this
// mount, a later mount or another process at the same time — comes from
// the local disk instead of the network.
//
// Each value or byte range read is one entry file, named by a hash of the
// store's name and the key plus the range, holding the bytes, what the
// store said of the value (size, ETag, Last-Modified) and a CRC-32C of it
// all (entry.go). An entry is written to a temporary file and renamed into
// place, so a reader sees a whole entry or none; one that does not check
// out (a crash mid-write without fsync, a truncated or altered file) is
// removed and read again from the store, never served.
//
// When an entry is used:
//
//   - An immutable store (the default): every entry is trusted as it is,
//     except that the keys Options.Revalidate names (metadata documents)
//     are checked with the store once per Cache, at their first read, by a
//     conditional GET (304: the entry is used) — a store rewritten since
//     shows its new metadata at the next mount. Entries of keys whose
//     value is found changed (a revalidation, a Stat) are all dropped.
//   - Options.Live: every read of a whole value asks the store whether it
//     changed (a conditional GET: 304 and no body, or the new value, which
//     replaces the entry and drops the key's other entries); so does a
//     range of a value kept whole or of at most 4 MiB (maxRevalidate); any
//     other range is read again.
//   - Options.Offline: when the store does not answer (an error other than
//     a missing key), what the folder holds for the read is served, saying
//     so once in the log.
//
// Several processes may share a folder: a value being fetched is locked
// (an fcntl lock on a byte of one lock file, lock.go) so that the others wait for it
// and read what it wrote instead of fetching it too; no lock spans more
// than one entry. The folder is kept within Options.MaxSize and half of
// the space left on its file system by evicting the least recently used
// entries (by modification time, which a read refreshes). A folder that
// cannot be written (read-only, full) turns writing off with one log line;
// reads then go to the store as without the cache.
package diskcache

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/zarrfs/zarrfs/store"
)

// DefaultMaxSize is the default bound of a cache folder.
const DefaultMaxSize = 10 << 30

// Sub is the folder a cache keeps its entries in, inside the folder it is
// given: clearing the cache removes only that.
const Sub = "zarrfs-cache-v1"

// maxRevalidate bounds the values a range entry of is revalidated by a
// conditional GET of the whole value (which, when it changed, brings the
// whole value): a range of a larger one is read again as a range.
const maxRevalidate = 4 << 20

// touchAfter is how old an entry's modification time must be before a
// read refreshes it (the LRU order needs no finer clock than this).
const touchAfter = time.Minute

// Options configures a cache folder.
type Options struct {
	// MaxSize bounds the bytes of the entries (0: DefaultMaxSize); half of
	// the space the file system has left, plus what the cache holds,
	// bounds it too.
	MaxSize int64
	// Live says the stores may change: whole values are revalidated at
	// every read (see the package comment).
	Live bool
	// Offline serves what the folder holds when a store does not answer.
	Offline bool
	// Revalidate names the keys an immutable store's entries of are
	// checked with the store once per Cache (nil: none).
	Revalidate func(key string) bool
	// Logf logs what goes wrong once (nil: nothing).
	Logf func(format string, args ...any)
}

// Cache is one cache folder as one process uses it. Wrap decorates the
// stores that read through it; it may be shared by any number of them.
type Cache struct {
	dir  string // the folder given
	root string // dir/Sub
	opts Options

	noWrite   atomic.Bool // writing failed: entries are only read
	limit     atomic.Int64
	used      atomic.Int64 // bytes of entries, as of the last scan plus what this process wrote since
	evicting  atomic.Bool
	scanned   chan struct{} // closed once the first scan is done
	loggedOff atomic.Bool   // "offline" said
	fetches   singleflight.Group

	// behindUntil (Unix ns) is when misses are kept again after a write
	// found the folder slower than the store (keep).
	behindUntil  atomic.Int64
	loggedBehind atomic.Bool

	hits, revalidated, misses, offline, corrupt, notKept atomic.Int64
	diskBytes, storeBytes                                atomic.Int64
}

// Open opens the cache folder dir, creating it if need be, and starts a
// scan of it in the background that removes what crashed processes left
// (temporary files, lock files) and counts its size. A folder that exists
// but cannot be written is opened for reading only, with one log line; an
// error is returned only when dir cannot be used at all.
func Open(dir string, opts Options) (*Cache, error) {
	if dir == "" {
		return nil, errors.New("disk cache: no folder given")
	}
	if opts.MaxSize <= 0 {
		opts.MaxSize = DefaultMaxSize
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("disk cache %s: %w", dir, err)
	}
	c := &Cache{dir: abs, root: filepath.Join(abs, Sub), opts: opts, scanned: make(chan struct{})}
	c.limit.Store(opts.MaxSize)
	if err := os.MkdirAll(c.root, 0o755); err != nil {
		if fi, serr := os.Stat(c.root); serr != nil || !fi.IsDir() {
			if fi, serr := os.Stat(abs); serr != nil || !fi.IsDir() {
				return nil, fmt.Errorf("disk cache: %w", err)
			}
		}
		c.writesOff(err)
	} else if f, err := os.CreateTemp(c.root, ".probe*"); err != nil {
		c.writesOff(err)
	} else {
		f.Close()
		os.Remove(f.Name())
		spreadDirs(c.root)
	}
	go func() {
		defer close(c.scanned)
		c.scan(true)
	}()
	return c, nil
}

func (c *Cache) logf(format string, args ...any) {
	if c.opts.Logf != nil {
		c.opts.Logf(format, args...)
	}
}

// writesOff turns writing off for good, logging why the first time.
func (c *Cache) writesOff(err error) {
	if !c.noWrite.Swap(true) {
		c.logf("disk cache %s: cannot write (%v): caching new reads is off; what the folder holds is still used", c.dir, err)
	}
}

// Stats are the counts of one process's reads through a Cache.
type Stats struct {
	Hits        int64 // reads served from the folder without a request
	Revalidated int64 // reads served from the folder after a 304
	Misses      int64 // reads that went to the store
	Offline     int64 // reads served from the folder because the store failed
	Corrupt     int64 // entries found damaged, removed and read again
	NotKept     int64 // misses not written because the folder was behind the store
	DiskBytes   int64 // bytes served from the folder
	StoreBytes  int64 // bytes read from the store
	Used, Limit int64 // the folder's bytes (as this process knows) and its bound
}

// Stats returns the counts so far.
func (c *Cache) Stats() Stats {
	return Stats{
		Hits: c.hits.Load(), Revalidated: c.revalidated.Load(), Misses: c.misses.Load(),
		Offline: c.offline.Load(), Corrupt: c.corrupt.Load(), NotKept: c.notKept.Load(),
		DiskBytes: c.diskBytes.Load(), StoreBytes: c.storeBytes.Load(),
		Used: c.used.Load(), Limit: c.limit.Load(),
	}
}

// HitRate is the share of reads served from the folder (0 before any).
func (s Stats) HitRate() float64 {
	from := s.Hits + s.Revalidated + s.Offline
	if all := from + s.Misses; all > 0 {
		return float64(from) / float64(all)
	}
	return 0
}

// StatsLine says in one line what the cache did for this process: what
// the root's info.txt of a mount shows.
func (c *Cache) StatsLine() string {
	s := c.Stats()
	line := fmt.Sprintf("disk cache: %s, hit rate %.1f%% (%d of %d reads from disk, %d revalidated; %s from disk, %s from the store); %s of %s used",
		c.dir, 100*s.HitRate(), s.Hits+s.Revalidated+s.Offline, s.Hits+s.Revalidated+s.Offline+s.Misses, s.Revalidated,
		FormatSize(s.DiskBytes), FormatSize(s.StoreBytes), FormatSize(s.Used), FormatSize(s.Limit))
	if c.noWrite.Load() {
		line += " (read-only)"
	}
	if s.NotKept > 0 {
		line += fmt.Sprintf(" (%d not kept: the folder was behind the store)", s.NotKept)
	}
	return line
}

// FormatSize writes n bytes as people read them ("1.5 GiB").
func FormatSize(n int64) string {
	const units = "KMGTPE"
	if n < 1024 {
		return strconv.FormatInt(n, 10) + " B"
	}
	f, i := float64(n)/1024, 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	return strconv.FormatFloat(f, 'f', 1, 64) + " " + units[i:i+1] + "iB"
}

// Wrap returns s reading through the cache. id names the store among all
// that share the folder (its URL, with whatever else tells two stores of
// that name apart, such as an S3 endpoint): entries are keyed by it. The
// store returned has exactly the optional interfaces of s
// (store.Decorate); closing it closes s.
func (c *Cache) Wrap(s store.Store, id string) store.Store {
	return store.Decorate(&cached{c: c, s: s, id: id}, s)
}

// cached is one store read through a Cache.
type cached struct {
	c  *Cache
	s  store.Store
	id string
	// checked holds the entries of keys to revalidate (Options.Revalidate)
	// already checked with the store by this Cache.
	checked sync.Map
}

// rangeTag names a byte range in entry file names and headers.
func rangeTag(r store.ByteRange) string {
	switch {
	case r.Suffix:
		return "x" + strconv.FormatInt(r.Length, 10)
	case r.Offset == 0 && r.Length < 0:
		return "a"
	case r.Length < 0:
		return "r" + strconv.FormatInt(r.Offset, 10) + "-e"
	default:
		return "r" + strconv.FormatInt(r.Offset, 10) + "-" + strconv.FormatInt(r.Length, 10)
	}
}

// path returns the file of the entry of key (or a listing's name) and tag.
func (c *Cache) path(id, key, tag string) string {
	h := sha256.Sum256([]byte(id + "\x00" + key))
	x := hex.EncodeToString(h[:20])
	// 16 folders: the first reads into a new cache make 16 of them, not
	// one per entry (a mkdir costs as much as the write); a cache of
	// 10 GiB in 64 KiB chunks holds 10,000 entries in each.
	return filepath.Join(c.root, x[:1], x+"-"+tag)
}
