package diskcache

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// load reads and checks the entry at path; nil when there is none or it
// is damaged (then it is removed).
func (c *Cache) load(path, id, key, tag string) *entry {
	return c.loadInto(path, id, key, tag, nil)
}

// headRead is how much of an entry file loadInto reads first: the fixed
// head and a header of any usual key, with the start of the data.
const headRead = 4 << 10

// headBufs holds loadInto's buffers of headRead bytes.
var headBufs = sync.Pool{New: func() any { return new([headRead]byte) }}

// loadInto is load reading the entry's data into a buffer from alloc
// (make when nil), which it calls once the entry's head and header check
// out, with the length of the data, unless the entry records a missing
// key (no data). The checksum, over the data too, is checked after: a
// damaged entry returns nil, like a missing one (the buffer from alloc,
// if it was called, is then the caller's again, its contents undefined).
// The entry's data is the buffer from alloc.
func (c *Cache) loadInto(path, id, key, tag string, alloc func(int) []byte) *entry {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() > c.limit.Load()/8+headSize+maxHeader {
		return nil // not an entry write would make: leave it to eviction
	}
	size := fi.Size()
	hb := headBufs.Get().(*[headRead]byte)
	defer headBufs.Put(hb)
	first, err := readAt(f, hb[:min(size, headRead)], 0)
	if err != nil {
		return nil
	}
	hl, sum, err := checkHead(first, size)
	if err != nil {
		return c.damaged(path, err)
	}
	hj := first[headSize:min(headSize+hl, int64(len(first)))]
	if int64(len(hj)) < hl { // a header longer than headRead
		hj = make([]byte, hl)
		if hj, err = readAt(f, hj, headSize); err != nil {
			return nil
		}
	}
	if int64(len(hj)) < hl {
		return c.damaged(path, fmt.Errorf("%w: file shrank while read", errCorrupt))
	}
	n := size - headSize - hl
	e, err := parseHeader(hj, n, id, key, tag)
	if err != nil {
		return c.damaged(path, err)
	}
	crc := crc32.Checksum(hj, castagnoli)
	if !e.Missing {
		if alloc == nil {
			alloc = func(n int) []byte { return make([]byte, n) }
		}
		data := alloc(int(n))
		got := copy(data, first[min(headSize+hl, int64(len(first))):])
		rest, err := readAt(f, data[got:], headSize+hl+int64(got))
		if err != nil {
			return nil
		}
		if len(rest) < len(data)-got {
			return c.damaged(path, fmt.Errorf("%w: file shrank while read", errCorrupt))
		}
		crc = crc32.Update(crc, castagnoli, data)
		e.data = data
	}
	if crc != sum {
		return c.damaged(path, fmt.Errorf("%w: checksum mismatch", errCorrupt))
	}
	if time.Since(fi.ModTime()) > touchAfter {
		now := time.Now()
		os.Chtimes(path, now, now) // the LRU's clock; a read-only folder keeps its order
	}
	return e
}

// readAt reads p from f at off and returns what it read: all of p, or
// less when the file ends sooner.
func readAt(f *os.File, p []byte, off int64) ([]byte, error) {
	n, err := f.ReadAt(p, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return p[:n], nil
}

// damaged counts, logs and removes the damaged entry at path (err says
// what is wrong with it), and returns nil: no entry to serve.
func (c *Cache) damaged(path string, err error) *entry {
	c.corrupt.Add(1)
	c.logf("disk cache %s: %s: %v: removed, reading it again", c.dir, path, err)
	os.Remove(path)
	return nil
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

// slowWrite is how long a miss's write may take before the folder is
// taken to be behind the store (when the fetch was quicker), and
// behindFor how long misses are then not kept.
const (
	slowWrite = 100 * time.Millisecond
	behindFor = time.Second
)

// behind reports whether a write that took took, of a value the store
// gave in fetched, says the folder is behind the store.
func behind(took, fetched time.Duration) bool {
	return took > slowWrite && took > fetched
}

// keep writes the entry of a value just fetched from the store, which
// took fetched to answer, on the read's path: a write into the page cache
// costs a cold read less than copying the value for a write in the
// background (BENCH.md, The disk cache). When the folder is slower than
// the store (a write took over slowWrite and longer than its fetch: a
// slow or remote disk, or the kernel throttling dirty pages), the misses
// of the next behindFor are not kept, so that the read goes on at the
// store's pace rather than the disk's; a later read fetches them again.
func (c *Cache) keep(ctx context.Context, path string, h header, data []byte, held bool, fetched time.Duration) {
	if until := c.behindUntil.Load(); until != 0 && time.Now().UnixNano() < until {
		c.notKept.Add(1)
		return
	}
	start := time.Now()
	c.write(ctx, path, h, data, held)
	if took := time.Since(start); behind(took, fetched) {
		c.behindUntil.Store(time.Now().Add(behindFor).UnixNano())
		if !c.loggedBehind.Swap(true) {
			c.logf("disk cache %s: writing %s took %v, the store %v: the folder is behind the store, so values read while it is are not kept", c.dir, FormatSize(int64(len(data))), took.Round(time.Millisecond), fetched.Round(time.Millisecond))
		}
	}
}
