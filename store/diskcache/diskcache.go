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
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

	// pending counts the writes in the background (background), queued
	// the bytes they hold (at most maxQueued); flush waits on idle until
	// pending is zero. free holds the buffers of finished writes for the
	// next ones (at most maxFree bytes of them): a cold read's copies
	// reuse a few buffers instead of making the collector and the kernel
	// clear a new one per value.
	wmu     sync.Mutex
	idle    *sync.Cond
	pending int
	queued  int64
	free    [][]byte

	hits, revalidated, misses, offline, corrupt atomic.Int64
	diskBytes, storeBytes                       atomic.Int64
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
	c.idle = sync.NewCond(&c.wmu)
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
	DiskBytes   int64 // bytes served from the folder
	StoreBytes  int64 // bytes read from the store
	Used, Limit int64 // the folder's bytes (as this process knows) and its bound
}

// Stats returns the counts so far.
func (c *Cache) Stats() Stats {
	return Stats{
		Hits: c.hits.Load(), Revalidated: c.revalidated.Load(), Misses: c.misses.Load(),
		Offline: c.offline.Load(), Corrupt: c.corrupt.Load(),
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

// load reads and checks the entry at path; nil when there is none or it
// is damaged (then it is removed).
func (c *Cache) load(path, id, key, tag string) *entry {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() > c.limit.Load()/8+headSize+maxHeader {
		return nil // not an entry write would make: leave it to eviction
	}
	b := make([]byte, fi.Size())
	n, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil
	}
	e, err := decode(b[:n], id, key, tag)
	if err != nil {
		c.corrupt.Add(1)
		c.logf("disk cache %s: %s: %v: removed, reading it again", c.dir, path, err)
		os.Remove(path)
		return nil
	}
	if time.Since(fi.ModTime()) > touchAfter {
		now := time.Now()
		os.Chtimes(path, now, now) // the LRU's clock; a read-only folder keeps its order
	}
	return e
}

// write stores h and data at path: a temporary file beside it, renamed
// into place. Errors turn writing off (a full or read-only folder); the
// read that fetched the value goes on without it. held says the caller
// holds the entry's lock; otherwise write takes it (without waiting: a
// busy entry is being written by another, which is as good).
func (c *Cache) write(ctx context.Context, path string, h header, data []byte, held bool) {
	if c.noWrite.Load() || int64(len(data)) > c.limit.Load()/8 {
		return
	}
	if !held {
		l, err := lock(ctx, c.root, path, false)
		if err != nil {
			if !errors.Is(err, errBusy) {
				c.writesOff(err)
			}
			return
		}
		defer l.unlock()
	}
	head, err := encode(h, data)
	if err != nil {
		return
	}
	c.put(path, head, data)
}

// put writes the entry file made of head and data at path (the caller
// holds its lock), counting its bytes and evicting when they go over
// the bound.
func (c *Cache) put(path string, head, data []byte) {
	if err := writeAtomic(path, head, data); err != nil {
		c.writesOff(err)
		return
	}
	if c.used.Add(int64(len(head)+len(data))) > c.limit.Load() && !c.evicting.Swap(true) {
		go func() {
			defer c.evicting.Store(false)
			c.scan(false)
		}()
	}
}

// writeAtomic writes head and data to a temporary file beside path and
// renames it into place. It does not fsync: an entry cut short by a crash
// fails its checksum and is read again, which costs less than a sync per
// entry.
func writeAtomic(path string, head, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, filepath.Base(path)+".tmp*")
	if errors.Is(err, os.ErrNotExist) {
		if err = os.MkdirAll(dir, 0o755); err == nil {
			f, err = os.CreateTemp(dir, filepath.Base(path)+".tmp*")
		}
	}
	if err != nil {
		return err
	}
	_, err = f.Write(head)
	if err == nil && len(data) > 0 {
		_, err = f.Write(data)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// maxQueued bounds the bytes of the entries being written in the
// background. A value that does not fit while others are queued is not
// kept (the disk is behind the network: the read goes on at the
// network's pace rather than the disk's, and a later read fetches it
// again); one larger than the bound on its own is written before the
// read returns. maxFree bounds the buffers kept for reuse.
const (
	maxQueued = 64 << 20
	maxFree   = 16 << 20
)

// queue is background's answer.
type queue int

const (
	queuedWrite queue = iota // buf holds the entry: write it, then doneWrite(buf)
	writeNow                 // too large to queue: write it before returning
	skipWrite                // not kept (no room, or not to be written at all)
)

// background prepares the entry of h and data (a value just fetched) for
// a write in the background: the whole entry file, its checksum not yet
// set (seal), in one buffer of its own, so that the caller may change
// data and the write is a single call.
func (c *Cache) background(h header, data []byte) ([]byte, queue) {
	if c.noWrite.Load() || int64(len(data)) > c.limit.Load()/8 {
		return nil, skipWrite
	}
	head, err := marshalHead(h, len(data))
	if err != nil {
		return nil, skipWrite
	}
	n := len(head) + len(data)
	if n > maxQueued {
		return nil, writeNow
	}
	c.wmu.Lock()
	if c.queued+int64(n) > maxQueued {
		c.wmu.Unlock()
		return nil, skipWrite
	}
	c.queued += int64(n)
	c.pending++
	var buf []byte
	for i, b := range c.free {
		if cap(b) >= n {
			buf = b[:n]
			c.free[i] = c.free[len(c.free)-1]
			c.free = c.free[:len(c.free)-1]
			break
		}
	}
	c.wmu.Unlock()
	if buf == nil {
		buf = make([]byte, n)
	}
	copy(buf, head)
	copy(buf[len(head):], data)
	return buf, queuedWrite
}

// doneWrite ends the background write of buf, keeping buf for the next
// when there is room.
func (c *Cache) doneWrite(buf []byte) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.queued -= int64(len(buf))
	kept := 0
	for _, b := range c.free {
		kept += cap(b)
	}
	if kept+cap(buf) <= maxFree {
		c.free = append(c.free, buf)
	}
	if c.pending--; c.pending == 0 {
		c.idle.Broadcast()
	}
}

// flush waits for the writes in the background.
func (c *Cache) flush() {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	for c.pending > 0 {
		c.idle.Wait()
	}
}

// errBusy is lock's answer when another holds the lock and block is false.
var errBusy = errors.New("entry locked")

// trusted reports whether the entry of key at path may be served without
// asking the store.
func (d *cached) trusted(key, path string) bool {
	if d.c.opts.Live {
		return false
	}
	if d.c.opts.Revalidate == nil || !d.c.opts.Revalidate(key) {
		return true
	}
	_, ok := d.checked.Load(path)
	return ok
}

// usable reports whether err from the store leaves the cache free to serve
// what it holds (Options.Offline): the store failed, rather than said the
// key is missing or the caller gave up.
func (d *cached) usable(ctx context.Context, err error) bool {
	if !d.c.opts.Offline || err == nil || ctx.Err() != nil || errors.Is(err, store.ErrNotExist) {
		return false
	}
	var ike *store.InvalidKeyError
	return !errors.As(err, &ike)
}

// servedOffline counts and logs (once per Cache) a read of what (a key,
// or a listing's description) served because the store failed with err.
func (d *cached) servedOffline(what string, err error) {
	d.c.offline.Add(1)
	if !d.c.loggedOff.Swap(true) {
		if !strings.HasPrefix(what, "the listing") {
			what = strconv.Quote(what)
		}
		d.c.logf("%s does not answer (%v): serving %s and what else the disk cache %s holds (--cache-offline)", d.s, err, what, d.c.dir)
	}
}

// hit counts a read served from e and returns its bytes for the caller
// (the range r of a whole value's entry when whole is set).
func (d *cached) hit(e *entry, r store.ByteRange, whole bool, counter *atomic.Int64) ([]byte, store.Info, error) {
	counter.Add(1)
	if e.Missing {
		return nil, store.Info{}, fmt.Errorf("%s: %w (disk cache)", d.s, store.ErrNotExist)
	}
	b := e.data
	if whole {
		start, end, err := r.Resolve(int64(len(b)))
		if err != nil {
			return nil, store.Info{}, err
		}
		b = b[start:end]
	}
	d.c.diskBytes.Add(int64(len(b)))
	return b, e.info(), nil
}

// read is GetRangeInfo through the cache.
func (d *cached) read(ctx context.Context, key string, r store.ByteRange) ([]byte, store.Info, error) {
	if err := store.CheckKey(ctx, key); err != nil {
		return nil, store.Info{}, err
	}
	if _, _, err := r.Resolve(1 << 62); err != nil {
		return nil, store.Info{}, fmt.Errorf("%s: get %s: %w", d.s, key, err)
	}
	tag := rangeTag(r)
	path := d.c.path(d.id, key, tag)
	e := d.c.load(path, d.id, key, tag)
	if e != nil && d.trusted(key, path) {
		return d.hit(e, r, false, &d.c.hits)
	}
	ig, _ := d.s.(store.InfoGetter)
	if e == nil && tag != "a" {
		// A whole value's entry serves any range of it (once
		// revalidated, when it must be).
		wpath := d.c.path(d.id, key, "a")
		if w := d.c.load(wpath, d.id, key, "a"); w != nil {
			if d.trusted(key, wpath) {
				return d.hit(w, r, true, &d.c.hits)
			}
			if ig != nil && !w.Missing && w.info().Validates() {
				b, info, err := d.revalidate(ctx, ig, key, wpath, w)
				if err != nil {
					return nil, info, err
				}
				start, end, err := r.Resolve(int64(len(b)))
				if err != nil {
					return nil, info, err
				}
				return b[start:end], info, nil
			}
		}
	}
	if e != nil && tag == "a" && !e.Missing && e.info().Validates() && ig != nil {
		return d.revalidate(ctx, ig, key, path, e)
	}
	if e != nil && !e.Missing && e.info().Validates() && ig != nil && 0 <= e.Size && e.Size <= maxRevalidate {
		// A range of a small value (a metadata document, read as its
		// first MaxDocumentSize bytes): asked for as a whole value, which
		// then replaces the whole value's entry.
		b, info, err := ig.GetIfChanged(ctx, key, e.info())
		switch {
		case errors.Is(err, store.ErrNotModified):
			d.checked.Store(path, struct{}{})
			return d.hit(e, r, false, &d.c.revalidated)
		case err == nil:
			d.forget(key) // other ranges of the old value too
			d.c.misses.Add(1)
			d.c.storeBytes.Add(int64(len(b)))
			h := header{Store: d.id, Key: key, Range: "a"}
			headerInfo(&h, info)
			wpath := d.c.path(d.id, key, "a")
			d.c.write(ctx, wpath, h, b, false)
			d.checked.Store(wpath, struct{}{})
			os.Remove(path)
			start, end, err := r.Resolve(int64(len(b)))
			if err != nil {
				return nil, info, err
			}
			return b[start:end], info, nil
		case d.usable(ctx, err):
			d.servedOffline(key, err)
			return d.hit(e, r, false, &atomic.Int64{})
		case errors.Is(err, store.ErrNotExist):
			d.c.misses.Add(1)
			os.Remove(path)
			return nil, info, err
		}
		return nil, info, err
	}
	b, info, err := d.fetch(ctx, key, r, path, tag, e == nil)
	if err != nil && e != nil && d.usable(ctx, err) {
		d.servedOffline(key, err)
		return d.hit(e, r, false, &atomic.Int64{})
	}
	return b, info, err
}

// revalidate asks the store whether the value of e changed: 304 serves e,
// a new value replaces it.
func (d *cached) revalidate(ctx context.Context, ig store.InfoGetter, key, path string, e *entry) ([]byte, store.Info, error) {
	b, info, err := ig.GetIfChanged(ctx, key, e.info())
	switch {
	case errors.Is(err, store.ErrNotModified):
		d.checked.Store(path, struct{}{})
		return d.hit(e, store.All, false, &d.c.revalidated)
	case err == nil:
		d.forget(key) // ranges of the old value too
		d.checked.Store(path, struct{}{})
		d.c.misses.Add(1)
		d.c.storeBytes.Add(int64(len(b)))
		h := header{Store: d.id, Key: key, Range: "a"}
		headerInfo(&h, info)
		d.c.write(ctx, path, h, b, false)
		return b, info, nil
	case errors.Is(err, store.ErrNotExist):
		d.c.misses.Add(1)
		os.Remove(path)
		return nil, info, err
	case d.usable(ctx, err):
		d.servedOffline(key, err)
		return d.hit(e, store.All, false, &atomic.Int64{})
	}
	return nil, info, err
}

// fetched is what one fetch of an entry returns to all who waited for it.
type fetched struct {
	b    []byte
	info store.Info
	err  error
}

// fetch reads the range r of key from the store and keeps it at path. One
// fetch of an entry runs at a time in the process (singleflight) and, with
// the entry's lock, across the processes sharing the folder: a waiter
// that finds the entry written when it gets the lock reads that (when
// recheck says the entry was missing before: a stale entry being replaced
// is not taken for the new one).
func (d *cached) fetch(ctx context.Context, key string, r store.ByteRange, path, tag string, recheck bool) ([]byte, store.Info, error) {
	v, _, shared := d.c.fetches.Do(path, func() (any, error) {
		var l *lockFile
		if !d.c.noWrite.Load() {
			var err error
			l, err = lock(ctx, d.c.root, path, true)
			if err != nil && ctx.Err() != nil {
				return fetched{err: err}, nil
			}
			defer func() {
				if l != nil { // nil once a background write took it over
					l.unlock()
				}
			}()
			if recheck && l != nil {
				if e := d.c.load(path, d.id, key, tag); e != nil && d.trusted(key, path) {
					b, info, err := d.hit(e, r, false, &d.c.hits)
					return fetched{b, info, err}, nil
				}
			}
		}
		var f fetched
		if ig, ok := d.s.(store.InfoGetter); ok {
			f.b, f.info, f.err = ig.GetRangeInfo(ctx, key, r)
		} else {
			f.b, f.err = d.s.GetRange(ctx, key, r)
			f.info.Size = -1
		}
		d.c.misses.Add(1)
		h := header{Store: d.id, Key: key, Range: tag}
		switch {
		case f.err == nil:
			d.c.storeBytes.Add(int64(len(f.b)))
			headerInfo(&h, f.info)
			d.checked.Store(path, struct{}{})
			if l == nil {
				d.c.write(ctx, path, h, f.b, false)
				break
			}
			switch buf, q := d.c.background(h, f.b); q {
			case queuedWrite:
				// Written in the background, off the read's path, from
				// the copy in buf (the caller may change what it gets),
				// checksummed there too, still under the entry's lock:
				// another process waits for the file rather than
				// fetching the value too.
				held := l
				l = nil
				go func() {
					defer d.c.doneWrite(buf)
					defer held.unlock()
					seal(buf)
					d.c.put(path, buf, nil)
				}()
			case writeNow:
				d.c.write(ctx, path, h, f.b, true)
			}
		case errors.Is(f.err, store.ErrNotExist):
			h.Missing, h.Size = true, -1
			d.c.write(ctx, path, h, nil, l != nil)
			d.checked.Store(path, struct{}{})
		}
		return f, nil
	})
	f := v.(fetched)
	if shared && f.b != nil {
		f.b = bytes.Clone(f.b) // each caller owns what it gets
	}
	return f.b, f.info, f.err
}

func (d *cached) Get(ctx context.Context, key string) ([]byte, error) {
	b, _, err := d.read(ctx, key, store.All)
	return b, err
}

func (d *cached) GetRange(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	b, _, err := d.read(ctx, key, r)
	return b, err
}

func (d *cached) GetRangeInfo(ctx context.Context, key string, r store.ByteRange) ([]byte, store.Info, error) {
	return d.read(ctx, key, r)
}

// GetIfChanged asks the store (a caller holding an older value of key
// wants to know it is current); a new value replaces the entry. When the
// store fails (Options.Offline), the entry answers: not modified when it
// is the value old describes, else its bytes.
func (d *cached) GetIfChanged(ctx context.Context, key string, old store.Info) ([]byte, store.Info, error) {
	if err := store.CheckKey(ctx, key); err != nil {
		return nil, store.Info{}, err
	}
	path := d.c.path(d.id, key, "a")
	b, info, err := d.s.(store.InfoGetter).GetIfChanged(ctx, key, old)
	switch {
	case err == nil:
		d.c.misses.Add(1)
		d.c.storeBytes.Add(int64(len(b)))
		h := header{Store: d.id, Key: key, Range: "a"}
		headerInfo(&h, info)
		d.c.write(ctx, path, h, b, false)
	case d.usable(ctx, err):
		if e := d.c.load(path, d.id, key, "a"); e != nil && !e.Missing {
			d.servedOffline(key, err)
			if ei := e.info(); sameValue(ei, old) {
				return nil, ei, store.ErrNotModified
			}
			d.c.diskBytes.Add(int64(len(e.data)))
			return e.data, e.info(), nil
		}
	}
	return b, info, err
}

func (d *cached) String() string { return d.s.String() }

// Close waits for the cache's writes in the background (so that a
// command that exits next leaves them on disk), then closes the wrapped
// store if it is an io.Closer.
func (d *cached) Close() error {
	d.c.flush()
	if c, ok := d.s.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Stat answers from the entry of an earlier Stat on an immutable store;
// otherwise it asks the store and keeps the answer (served, with
// Options.Offline, when the store fails).
func (d *cached) Stat(ctx context.Context, key string) (store.Info, error) {
	if err := store.CheckKey(ctx, key); err != nil {
		return store.Info{}, err
	}
	path := d.c.path(d.id, key, "s")
	e := d.c.load(path, d.id, key, "s")
	if e != nil && d.trusted(key, path) {
		_, info, err := d.hit(e, store.All, false, &d.c.hits)
		return info, err
	}
	info, err := d.s.(store.Stater).Stat(ctx, key)
	h := header{Store: d.id, Key: key, Range: "s"}
	switch {
	case err == nil:
		if e != nil && !sameValue(e.info(), info) {
			d.forget(key) // what is kept of the old value (a zip archive's ranges)
		}
		headerInfo(&h, info)
		d.c.write(ctx, path, h, nil, false)
		d.checked.Store(path, struct{}{})
	case errors.Is(err, store.ErrNotExist):
		h.Missing, h.Size = true, -1
		d.c.write(ctx, path, h, nil, false)
		d.checked.Store(path, struct{}{})
	case e != nil && d.usable(ctx, err):
		d.servedOffline(key, err)
		_, info, err := d.hit(e, store.All, false, &atomic.Int64{})
		return info, err
	}
	return info, err
}

// listing runs a listing (op names it among the listings of the store)
// and keeps its answer, which it serves only when the store fails
// (Options.Offline): listings are always asked of the store.
func listing[T any](ctx context.Context, d *cached, op string, list func() (T, error)) (T, error) {
	v, err := list()
	path := d.c.path(d.id, "\x00list\x00"+op, "l")
	if err == nil {
		if b, jerr := json.Marshal(v); jerr == nil {
			d.c.write(ctx, path, header{Store: d.id, Key: "\x00list\x00" + op, Range: "l", Size: -1}, b, false)
		}
		return v, nil
	}
	if d.usable(ctx, err) {
		if e := d.c.load(path, d.id, "\x00list\x00"+op, "l"); e != nil {
			var old T
			if json.Unmarshal(e.data, &old) == nil {
				d.servedOffline("the listing "+strings.ReplaceAll(op, "\x00", " "), err)
				return old, nil
			}
		}
	}
	return v, err
}

func (d *cached) ListDir(ctx context.Context, dir string) (keys, prefixes []string, err error) {
	if err := store.CheckListDir(ctx, dir); err != nil {
		return nil, nil, err
	}
	type both struct{ Keys, Prefixes []string }
	v, err := listing(ctx, d, "dir\x00"+dir, func() (both, error) {
		k, p, err := d.s.(store.Lister).ListDir(ctx, dir)
		return both{k, p}, err
	})
	return v.Keys, v.Prefixes, err
}

func (d *cached) ListPrefix(ctx context.Context, prefix string) ([]string, error) {
	if err := store.CheckListPrefix(ctx, prefix); err != nil {
		return nil, err
	}
	return listing(ctx, d, "prefix\x00"+prefix, func() ([]string, error) {
		return d.s.(store.Lister).ListPrefix(ctx, prefix)
	})
}

func (d *cached) ListPrefixPage(ctx context.Context, prefix, startAfter string) ([]string, bool, error) {
	if err := store.CheckListPrefix(ctx, prefix); err != nil {
		return nil, false, err
	}
	type page struct {
		Keys []string
		More bool
	}
	v, err := listing(ctx, d, "page\x00"+prefix+"\x00"+startAfter, func() (page, error) {
		k, more, err := d.s.(store.PageLister).ListPrefixPage(ctx, prefix, startAfter)
		return page{k, more}, err
	})
	return v.Keys, v.More, err
}

// Set and Delete change the store, then drop the entries of key.
func (d *cached) Set(ctx context.Context, key string, value []byte) error {
	err := d.s.(store.Writer).Set(ctx, key, value)
	d.forget(key)
	return err
}

func (d *cached) Delete(ctx context.Context, key string) error {
	err := d.s.(store.Writer).Delete(ctx, key)
	d.forget(key)
	return err
}

// sameValue reports whether two Infos of a key describe the same value.
func sameValue(a, b store.Info) bool {
	return a.Size == b.Size && a.ETag == b.ETag && a.ModTime.Equal(b.ModTime)
}

// forget removes every entry of key (whatever its range), once the
// writes in the background, which may hold an older value of it, are done.
func (d *cached) forget(key string) {
	d.c.flush()
	d.checked.Clear()
	prefix := strings.TrimSuffix(filepath.Base(d.c.path(d.id, key, "")), "-") + "-"
	dir := filepath.Dir(d.c.path(d.id, key, ""))
	names, _ := os.ReadDir(dir)
	for _, n := range names {
		if strings.HasPrefix(n.Name(), prefix) && !strings.HasSuffix(n.Name(), ".lock") {
			os.Remove(filepath.Join(dir, n.Name()))
		}
	}
}
