package zarr

// Read-ahead: a sequential reader of an array (a program copying a file
// of the mount) is recognised by where its reads start (noteRead); the
// chunks after those of each of its reads load into the cache in the
// background while it works on them (readAhead), and those it is past
// leave the cache (dropBehind). readAt (read.go) calls them.

import (
	"context"
	"sync"
	"time"
)

// readers is an array's record of its recent readers, for read-ahead.
type readers struct {
	// streams holds where recent reads ended, one slot per sequential
	// reader (several may read one array at once), to recognise them.
	streamMu   sync.Mutex
	streams    [maxStreams]int64
	nextStream int
	// streamFrom and streamAt: where and when each stream started, for
	// its rate (noteRead).
	streamFrom [maxStreams]int64
	streamAt   [maxStreams]time.Time
	// behind holds the chunks recent sequential reads used, each with
	// its last element, dropped from the cache once the reader is past
	// them (dropBehind).
	behindMu sync.Mutex
	behind   map[int64]int64
}

// maxStreams is how many sequential readers of one array are told apart.
const maxStreams = 8

// noteRead records a read of n bytes at off and reports whether it is a
// sequential reader's, and whether it continues one: it starts where a
// recent read ended or, being large, near there (the kernel sends the
// read-ahead requests of one reader concurrently, so they arrive a little
// out of order). A large read at offset 0 starts a sequential reader.
// rate is the reader's bytes per second since its stream started (0 for
// a new stream, or one younger than minRateAge): a reader that seeks
// starts a new stream, so its read-ahead starts small again.
func (a *Array) noteRead(off, n int64) (sequential, continues bool, rate float64) {
	a.streamMu.Lock()
	defer a.streamMu.Unlock()
	for i, end := range a.streams {
		if end > 0 && off > 0 && (off == end || n >= seqMinRead && off >= end-8*n && off <= end+8*n) {
			a.streams[i] = max(end, off+n)
			if age := time.Since(a.streamAt[i]); age >= minRateAge {
				rate = float64(a.streams[i]-a.streamFrom[i]) / age.Seconds()
			}
			return true, true, rate
		}
	}
	i := a.nextStream
	a.streams[i], a.streamFrom[i], a.streamAt[i] = off+n, off, time.Now()
	a.nextStream = (a.nextStream + 1) % maxStreams
	return off == 0 && n >= seqMinRead, false, 0
}

// minRateAge is the youngest stream whose rate noteRead reports.
const minRateAge = 50 * time.Millisecond

// seqMinRead is the smallest read that counts as sequential when it starts
// near, not at, the end of the last read: the kernel's page-cache reads
// are 128 KiB or more.
const seqMinRead = 64 << 10

// dropBehind remembers the chunks a sequential reader's read of the
// elements [e0, e1) used (those from the chunk of e0 to the chunk of
// e1-1 in linear order: all a read of whole rows uses) and drops from the
// cache those it remembered that end between slack and 5 × slack elements
// before e0 (those further behind belong to another, slower reader): the
// reader is past them and the kernel keeps what it read in its page cache.
// Memory then goes round between the chunks being decoded instead of
// filling the cache with chunks nobody will ask for (fresh memory is slow
// to fault in).
func (a *Array) dropBehind(e0, e1, slack int64) {
	first := a.Layout().ChunkOf(e0)
	last := a.Layout().ChunkOf(e1 - 1)
	var drop []int64
	a.behindMu.Lock()
	for c, end := range a.behind {
		switch {
		case end >= e0-slack:
			continue
		case end >= e0-5*slack:
			drop = append(drop, c)
		}
		// Chunks further behind are forgotten but left in the cache:
		// they are another reader's, which this one overtook.
		delete(a.behind, c)
	}
	if a.behind == nil {
		a.behind = map[int64]int64{}
	}
	for c := first; c <= last && len(a.behind) < maxBehind; c++ {
		if _, ok := a.behind[c]; !ok {
			a.behind[c] = a.Layout().ChunkLastElem(c)
		}
	}
	a.behindMu.Unlock()
	for _, c := range drop {
		a.cache.drop(a.cacheID(c))
	}
}

// passed reports whether every sequential reader of the array is past
// the last element of chunk lin. A read-ahead that starts that late (its
// goroutine left waiting on a busy machine) would load a chunk the reader
// has read and dropBehind has let go of, to stay in the cache for nobody.
func (a *Array) passed(lin int64) bool {
	last := (a.Layout().ChunkLastElem(lin) + 1) * int64(a.DataType().Size)
	a.streamMu.Lock()
	defer a.streamMu.Unlock()
	seen := false
	for _, end := range a.streams {
		if end > 0 {
			if end <= last {
				return false
			}
			seen = true
		}
	}
	return seen
}

// maxBehind bounds the chunks dropBehind remembers.
const maxBehind = 4096

// readAheadTimeout bounds one read-ahead load.
const readAheadTimeout = time.Minute

// maxAheadChunks bounds the chunks a read-ahead window spans, whatever
// their size: the window is walked at every read, and each chunk costs a
// cache entry (entryOverhead) however small it is.
const maxAheadChunks = 1024

// readAhead keeps the chunks after those of a read of the elements
// [e0, e1) loading in the background, into the cache: one per core but
// the read's own (at least one). A C-order reader meets chunks in the
// order of their linear index (chunk (i, j) before (i, j+1) and (i+1, 0)),
// so the chunks ahead are those after the chunk of the read's last
// element, as far as the largest of one per core, a read's worth and a
// slab of chunks along the first dimension (so the next row of chunks,
// when the array's rows cross many, loads while the reader is still in
// the current one), and at most a quarter of the cache (counting what an
// entry costs besides its bytes) and maxAheadChunks. On a remote store
// (Options.Remote) the window is also at least what the reader, at its
// rate (bytes per second, from noteRead), reads in aheadTime, within the
// same bound, unless the store answers as a near one or, before it has
// told, holds the next chunk close by (near.go). Chunks cached, loading or known absent (a listing, absent.go)
// are passed over; loads that cannot
// start at once are skipped. The loads end with ctx, or after
// readAheadTimeout.
func (a *Array) readAhead(ctx context.Context, e0, e1 int64, rate float64) {
	c := a.cache
	if c == nil || c.limit <= 0 || e1 >= a.Layout().Elems() || ctx.Err() != nil {
		return
	}
	last := a.Layout().ChunkOf(e1 - 1)
	if last+1 >= a.Layout().Chunks() {
		return
	}
	far := a.farFrom(last + 1)
	// The read decodes its own chunks on one core; the read-ahead keeps
	// the others busy.
	loads := int64(c.aheadWorkers(far))
	workers := max(loads-1, 1)
	chunkBytes := max(a.Layout().ChunkElems()*int64(max(a.DataType().Size, 8)), 1)
	ahead := max(workers, a.Layout().SlabChunks(), (e1-e0)/a.Layout().ChunkElems())
	if far {
		ahead = max(ahead, int64(rate*c.aheadTime.Seconds())/chunkBytes)
	}
	ahead = min(ahead, c.limit/4/(chunkBytes+entryOverhead), maxAheadChunks)
	end := min(last+1+ahead, a.Layout().Chunks())
	for lin, started := last+1, int64(0); lin < end && started < workers; lin++ {
		if c.present(a.cacheID(lin)) || a.knownAbsent(lin) {
			continue
		}
		if !far && int64(len(c.prefetch)) >= loads {
			// A near store's loads ahead, all readers' together, are one
			// a core, as a local store's (whose prefetch holds as many);
			// a far store's, up to Options.Concurrency.
			return
		}
		select {
		case c.prefetch <- struct{}{}:
		default:
			return
		}
		started++
		go func() {
			defer func() { <-c.prefetch }()
			if a.passed(lin) {
				return
			}
			ctx, cancel := context.WithTimeout(ctx, readAheadTimeout)
			defer cancel()
			v, _ := a.loadChunkAs(ctx, lin, true) // errors show again when the chunk is read
			v.release()
		}()
	}
}
