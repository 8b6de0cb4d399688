package zarr

// A remote store that answers as a local disk does: a far store read
// through a disk cache that holds its chunks (store/diskcache). Its
// chunk loads take a fraction of a millisecond, not a round trip, and
// the read-ahead a remote store gets (Options.Concurrency loads in
// flight, a window of remoteAheadTime) only makes the daemon decode far
// ahead of the reader on every goroutine it may: more chunks in memory
// at once, fresh pages for them, and decoded chunks long out of the CPU's
// caches when they are copied to the kernel. The cache therefore keeps
// an average of how long the store takes to answer a chunk load; while
// it is below nearTime, a remote hierarchy reads ahead as a local one.

import (
	"runtime"
	"sync/atomic"
	"time"
)

// nearTime is the average store time of a chunk load under which a
// remote store counts as near: a disk cache's hit of a 1 MiB chunk takes
// 0.1–0.3 ms, a fetch over a network a millisecond or more (a round trip
// and the bytes at 1 Gb/s).
const nearTime = time.Millisecond

// storeTimes is an average of a store's chunk load times.
type storeTimes struct {
	// avg is the moving average (1/8 to each new load) in nanoseconds,
	// plus one; 0 before the first load.
	avg atomic.Int64
}

// note records a chunk load the store answered in d.
func (s *storeTimes) note(d time.Duration) {
	for {
		old := s.avg.Load()
		avg := int64(d) + 1
		if old > 0 {
			avg = old + (avg-old)/8
		}
		if s.avg.CompareAndSwap(old, avg) {
			return
		}
	}
}

// near reports whether the store has answered chunk loads on average in
// less than nearTime (false before the first).
func (s *storeTimes) near() bool {
	avg := s.avg.Load()
	return avg > 0 && avg-1 < int64(nearTime)
}

// far reports whether c's hierarchy reads ahead as a remote store's
// does: it is remote (aheadTime set), and its store does not answer as a
// near one.
func (c *chunkCache) far() bool {
	return c.aheadTime > 0 && !c.storeTime.near()
}

// aheadWorkers returns how many chunks c's arrays load at once: those
// of a read, and (one fewer) those read ahead of it. A remote store gets
// the Options.Concurrency it was opened with; a near one, one a core, as
// a local store.
func (c *chunkCache) aheadWorkers() int {
	n := cap(c.prefetch)
	if c.aheadTime > 0 && !c.far() {
		n = min(n, runtime.GOMAXPROCS(0))
	}
	return n
}
