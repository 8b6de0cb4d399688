// Package cores says how many goroutines to split one piece of CPU-bound
// work across (the blocks of a Blosc chunk, the inner chunks of a shard).
package cores

import "runtime"

// Workers returns the CPUs the process may run on, or GOMAXPROCS when that
// is less. zarrfs mount runs more Go processors than CPUs, so that
// go-fuse's request readers, blocked in read(2), leave one free: work
// split into GOMAXPROCS parts there has more goroutines than CPUs to run
// them, which then only take turns.
func Workers() int { return min(runtime.GOMAXPROCS(0), runtime.NumCPU()) }
