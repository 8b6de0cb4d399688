package zarr

import "sync"

// This file holds the lineage of a live hierarchy (--live): what its
// generations share so that a reloaded array takes over the decoded
// chunks of the array it replaces when their chunks are the same.

// lineage is what the generations of a live hierarchy (Options.Live,
// Options.Previous) share: for each path, the array last loaded there and
// the ids of the arrays before it whose decoded chunks it may take over,
// newest first. A generation may load an array and never read it: its
// successor then looks for chunks under the older ids too.
type lineage struct {
	mu     sync.Mutex
	arrays map[string]lineageEntry
}

type lineageEntry struct {
	a   *Array
	ids []uint64 // a's id, then its predecessors' (at most maxGenerations)
}

// maxGenerations bounds the arrays whose chunks a live array looks for.
const maxGenerations = 4

// takeOver records a as the array at path p and returns the ids of the
// arrays loaded there before whose chunks a can take over,
// newest first.
func (l *lineage) takeOver(p string, a *Array) []uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var prev []uint64
	if old, ok := l.arrays[p]; ok && old.a.Err == nil && a.Err == nil && old.a.Meta().SameChunks(a.Meta()) {
		prev = old.ids
	}
	ids := append([]uint64{a.id}, prev...)
	l.arrays[p] = lineageEntry{a: a, ids: ids[:min(len(ids), maxGenerations)]}
	return prev
}
