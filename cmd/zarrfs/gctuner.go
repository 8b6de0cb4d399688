package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// This file sets the soft memory limit from what the heap keeps. Go's
// collector lets the heap grow to twice what the last collection kept
// (GOGC=100) before the next; the mount's memory limit (cache size +
// memoryHeadroom) bounds that while chunks fill the cache, but not a
// hierarchy's metadata: after find over a large hierarchy the heap keeps
// go-fuse's inodes, the directory nodes and the consolidated metadata,
// and without a tighter limit grows to twice that (BENCH.md, Hierarchies
// of many arrays). After each
// collection the limit becomes what the heap kept plus some room (gcRoom,
// less than the mount's headroom), never more than the mount's limit: a
// heap of metadata grows by that room at most, as one of chunks does,
// and a heap of chunks being read keeps the bound of issue 9 (TestStress).

// liveMetric is the runtime metric of the heap the last collection kept.
const liveMetric = "/gc/heap/live:bytes"

// gcTuner sets the memory limit after each collection (tune).
type gcTuner struct {
	room    int64
	share   int64 // when > 0, the room is at least the live heap / share
	max     int64
	stopped atomic.Bool
	sample  []metrics.Sample
}

// gcMark is an object whose cleanup runs once a collection has found it
// unreachable: the tuner's hook into each collection. It holds a pointer
// so that the tiny allocator does not pack it with other objects, whose
// life would delay its cleanup.
type gcMark struct {
	_ *int
	_ [48]byte
}

// activeTuner is the tuner setting the process's memory limit: one at a
// time (a test process mounts many times).
var activeTuner atomic.Pointer[gcTuner]

// startGCTuner starts setting the memory limit to the live heap plus room
// (or, when share > 0 and that is more, plus the live heap / share), at
// most max, after each collection, in place of the tuner started before,
// if any, and returns the function that stops it.
func startGCTuner(room, share, max int64) (stop func()) {
	t := &gcTuner{room: room, share: share, max: max, sample: []metrics.Sample{{Name: liveMetric}}}
	if old := activeTuner.Swap(t); old != nil {
		old.stopped.Store(true)
	}
	t.arm()
	return func() { t.stopped.Store(true) }
}

// arm makes a mark whose cleanup, after the next collection, tunes and
// arms again.
func (t *gcTuner) arm() {
	runtime.AddCleanup(&gcMark{}, func(t *gcTuner) {
		if t.stopped.Load() {
			return
		}
		t.tune()
		t.arm()
	}, t)
}

// tune sets the memory limit to the heap the last collection kept plus
// room, at most max, once that heap is room or more; max while it is
// less.
func (t *gcTuner) tune() {
	metrics.Read(t.sample)
	if t.sample[0].Value.Kind() != metrics.KindUint64 {
		return // not in this runtime: the limit stays as set
	}
	live := int64(t.sample[0].Value.Uint64())
	limit := t.max
	if live >= t.room {
		// Below, the collector's own pacing (GOGC=100) already lets
		// the heap grow by less than room: the limit stays the
		// mount's, as it was before tuning.
		room := t.room
		if t.share > 0 {
			// A heap of many times the room (a million arrays) would
			// otherwise be scanned once for each room's worth of
			// garbage: the collector's share of the time grows with it.
			room = max(room, live/t.share)
		}
		limit = min(live+room, t.max)
	}
	debug.SetMemoryLimit(limit)
}
