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
