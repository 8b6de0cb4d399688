package zarr

// A remote store that answers as a local disk does: a far store read
// through a disk cache that holds its chunks (store/diskcache). Its
// chunk loads take a fraction of a millisecond, not a round trip, and
// the read-ahead a remote store gets (Options.Concurrency loads in
// flight, a window of remoteAheadTime) only makes the daemon decode far
// ahead of the reader on every goroutine it may: more chunks in memory
// at once, fresh pages for them, and decoded chunks long out of the CPU's
// caches when they are copied to the kernel. The cache therefore records
// which of the store's last chunk loads took less than nearTime; while
// nearly all did, a remote hierarchy reads ahead as a local one.

import (
	"math/bits"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/zarrfs/zarrfs/store"
)

// nearTime is the store time under which a chunk load counts as a near
// one: a disk cache's hit of a 1 MiB chunk takes 0.1–0.4 ms, a fetch over
// a network a few milliseconds or more (a round trip and the bytes).
const nearTime = 2 * time.Millisecond

// nearLoads is how many of the last recentLoads chunk loads must have
// been near ones for the store to count as near. Not all: a load is
// timed from start to end, and a process descheduled in between (a busy
// machine, a collection) sees a spike now and then. Not many fewer: a
// folder holding most of an array but not all serves the rest by round
// trips, which want the remote read-ahead.
const (
	recentLoads = 32
	nearLoads   = 28
)

// storeTimes records how a store's recent chunk loads went.
type storeTimes struct {
	// recent holds in its low recentLoads bits one bit per load, the
	// newest lowest, set for a slow one (nearTime or more), and above
	// them the number of loads recorded (at most recentLoads).
	recent atomic.Uint64
}

// note records a chunk load the store answered in d.
func (s *storeTimes) note(d time.Duration) {
	const mask = 1<<recentLoads - 1
	slow := uint64(0)
	if d >= nearTime {
		slow = 1
	}
	for {
		old := s.recent.Load()
		n := min(old>>recentLoads+1, recentLoads)
		if s.recent.CompareAndSwap(old, n<<recentLoads|(old<<1|slow)&mask) {
			return
		}
	}
}

// near reports whether nearLoads of the store's last recentLoads chunk
// loads were near ones (false until it has answered that many).
func (s *storeTimes) near() bool {
	v := s.recent.Load()
	return v>>recentLoads >= recentLoads && bits.OnesCount64(v&(1<<recentLoads-1)) <= recentLoads-nearLoads
}

// known reports whether the store has answered enough chunk loads for
// near to say.
func (s *storeTimes) known() bool {
	return s.recent.Load()>>recentLoads >= recentLoads
}

// far reports whether c's hierarchy reads ahead as a remote store's
// does: it is remote (aheadTime set), and its store does not answer as a
// near one.
func (c *chunkCache) far() bool {
	return c.aheadTime > 0 && !c.storeTime.near()
}

// farFrom reports whether a read-ahead of a from chunk lin on reads ahead
// as a remote store's (c.far), taking a store that holds chunk lin close
// by (store.Holder: a disk cache that has it) for a near one until its
// loads have told how it answers. Without this, a remount reading what
// the cache holds would start as a far store's read does, with
// Options.Concurrency loads at once: each then waits for a core long
// enough to count as a far load, and the store is taken for a near one
// only a hundred loads or more later.
func (a *Array) farFrom(lin int64) bool {
	c := a.cache
	if !c.far() {
		return false
	}
	if c.storeTime.known() {
		return true
	}
	h, ok := a.st.(store.Holder)
	return !ok || !h.Holds(a.chunkKeyAt(lin))
}

// aheadWorkers returns how many chunks c's arrays load at once: those
// of a read, and (one fewer) those read ahead of it. A remote store read
// as a far one (far) gets the Options.Concurrency it was opened with; a
// near one, one a core, as a local store.
func (c *chunkCache) aheadWorkers(far bool) int {
	n := cap(c.prefetch)
	if c.aheadTime > 0 && !far {
		n = min(n, runtime.GOMAXPROCS(0))
	}
	return n
}
