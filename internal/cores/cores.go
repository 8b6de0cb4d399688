// Package cores says how many goroutines to split one piece of CPU-bound
// work across (the blocks of a Blosc chunk, the inner chunks of a shard).
package cores

import (
	"runtime"
	"sync/atomic"
)

// Workers returns the CPUs the process may run on, or GOMAXPROCS when that
// is less. zarrfs mount runs more Go processors than CPUs, so that
// go-fuse's request readers, blocked in read(2), leave one free: work
// split into GOMAXPROCS parts there has more goroutines than CPUs to run
// them, which then only take turns.
func Workers() int { return min(runtime.GOMAXPROCS(0), runtime.NumCPU()) }

// busy counts the goroutines running work split by Split.
var busy atomic.Int64

// Split returns how many goroutines work of n parts should run on: one
// for each CPU that no other split work holds, at least one (the caller's)
// and at most n. Several pieces of work at once (a mount decoding the next
// chunk beside the one asked for) then each run on their own goroutine
// instead of taking turns on the same CPUs. Split never waits; done must
// be called once the work is finished.
func Split(n int) (workers int, done func()) {
	if n <= 1 {
		return max(n, 1), func() {}
	}
	free := int64(Workers()) - busy.Load()
	workers = int(min(max(free, 1), int64(n)))
	busy.Add(int64(workers))
	return workers, func() { busy.Add(-int64(workers)) }
}
