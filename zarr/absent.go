package zarr

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/zarrfs/zarrfs/store"
)

// A read of many small chunks would ask the store for each of them, even
// where the store holds none (an array written sparsely, or not at all:
// every element the fill value). Where the store can list (a directory, a
// zip, an S3 bucket), a read that needs many chunks of one "directory" of
// chunk keys (a/c/3/ holds the keys a/c/3/0, a/c/3/1 …; a v2 array's
// directory holds all its chunks) lists it once instead: the chunks not in
// the listing read as the fill value with no request and no cache entry.

// listMinChunks is how many uncached chunks of one directory a read needs
// before it lists the directory instead of asking for each.
const listMinChunks = 64

// maxListedNames bounds the names one listing may hold to be kept; a
// directory with more is not listed again and its chunks are asked for.
const maxListedNames = 1 << 18

// maxListedDirs bounds the directories an array keeps listings of; the
// oldest go first.
const maxListedDirs = 64

// absentChunks holds an array's listings of its chunk directories.
type absentChunks struct {
	mu    sync.Mutex
	dirs  map[string]*chunkDir
	order []string // dirs, oldest first
	// none is the listing of the array's own directory: whether the store
	// holds no chunk of it at all (noneStored).
	none *noneListing
}

// noneListing records whether the store held no chunk of an array when
// the array had had writes writes.
type noneListing struct {
	done   chan struct{}
	none   bool
	writes uint64
}

// chunkDir is the listing of one directory of chunk keys.
type chunkDir struct {
	done   chan struct{} // closed when names is set
	names  []string      // sorted; nil when the directory cannot be used
	ok     bool          // the listing holds every name (not too many, no error)
	writes uint64        // the array's writes when the listing started
}

// absentValue is the value of a chunk a listing shows absent: shared,
// holding no buffer, never cached.
var absentValue = &chunkValue{missing: true}

// splitChunkKey returns the directory and the name of a chunk key.
func splitChunkKey(key string) (dir, name string) {
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		return key[:i], key[i+1:]
	}
	return "", key
}

// lister returns the store's Lister when a's chunks may be found absent
// from listings: not for a live array (the store may change under it) or
// one without a cache (tests of the bare read path).
func (a *Array) lister() store.Lister {
	if a.live || a.cache == nil {
		return nil
	}
	l, _ := a.st.(store.Lister)
	return l
}

// knownAbsent reports whether a listing made earlier shows that the store
// holds no chunk lin. It makes no request.
func (a *Array) knownAbsent(lin int64) bool {
	if a.lister() == nil {
		return false
	}
	a.absent.mu.Lock()
	n := len(a.absent.dirs)
	a.absent.mu.Unlock()
	if n == 0 {
		return false
	}
	dir, name := splitChunkKey(a.chunkKeyAt(lin))
	a.absent.mu.Lock()
	d := a.absent.dirs[dir]
	a.absent.mu.Unlock()
	if d == nil {
		return false
	}
	select {
	case <-d.done:
	default:
		return false // being listed
	}
	return d.absent(name, a.writes.Load())
}

// absent reports whether the finished listing d shows name absent, the
// array having had writes writes.
func (d *chunkDir) absent(name string, writes uint64) bool {
	if !d.ok || d.writes != writes {
		return false
	}
	_, found := slices.BinarySearch(d.names, name)
	return !found
}

// findAbsent sets, of the chunks lins (uncached ones a read needs), those
// the store does not hold to absentValue in vals (vals[i] for lins[i]),
// listing the directories at least listMinChunks of them lie in. Chunks
// it cannot tell about are left nil. A listing that fails only leaves the
// chunks to be asked for one by one.
func (a *Array) findAbsent(ctx context.Context, lins []int64, vals []*chunkValue) {
	l := a.lister()
	if l == nil || len(lins) < listMinChunks {
		return
	}
	dirs := make([]string, len(lins))
	names := make([]string, len(lins))
	count := map[string]int{}
	for i, lin := range lins {
		dirs[i], names[i] = splitChunkKey(a.chunkKeyAt(lin))
		count[dirs[i]]++
	}
	listings := map[string]*chunkDir{}
	for dir, n := range count {
		if n >= listMinChunks {
			listings[dir] = a.listChunkDir(ctx, l, dir)
		}
	}
	writes := a.writes.Load()
	for i := range lins {
		if d := listings[dirs[i]]; d != nil && d.absent(names[i], writes) {
			vals[i] = absentValue
		}
	}
}

// listChunkDir returns the listing of dir, listing it unless it is
// listed or being listed (then it waits); nil when ctx ends first.
func (a *Array) listChunkDir(ctx context.Context, l store.Lister, dir string) *chunkDir {
	ab := &a.absent
	writes := a.writes.Load()
	ab.mu.Lock()
	if ab.dirs == nil {
		ab.dirs = map[string]*chunkDir{}
	}
	d := ab.dirs[dir]
	if d != nil {
		select {
		case <-d.done:
			if d.ok && d.writes != writes {
				d = nil // written since: list again
			}
		default:
		}
	}
	if d != nil {
		ab.mu.Unlock()
		select {
		case <-d.done:
			return d
		case <-ctx.Done():
			return nil
		}
	}
	d = &chunkDir{done: make(chan struct{}), writes: writes}
	if _, ok := ab.dirs[dir]; !ok {
		ab.order = append(ab.order, dir)
	}
	ab.dirs[dir] = d
	for len(ab.order) > maxListedDirs {
		delete(ab.dirs, ab.order[0])
		ab.order = ab.order[1:]
	}
	ab.mu.Unlock()
	keys, ok, err := listNames(ctx, l, dir)
	if err == nil && ok {
		d.names, d.ok = keys, true
	}
	if err != nil && ctx.Err() != nil {
		// Given up by this reader, not failed: the next may list it.
		ab.mu.Lock()
		if ab.dirs[dir] == d {
			delete(ab.dirs, dir)
		}
		ab.mu.Unlock()
	}
	close(d.done)
	return d
}

// metadataNames are the names, beside chunk keys, an array's directory
// holds: its documents in every format.
var metadataNames = map[string]bool{"zarr.json": true, ".zarray": true, ".zattrs": true, ".zgroup": true,
	".zmetadata": true, "meta": true, "attrs": true}

// noneStored reports whether the store holds no chunk of a at all (every
// element is the fill value), from one listing of the array's directory,
// made once (again after a write): a read of many chunks then fills its
// output without looking at each. It reports false when it cannot tell.
func (a *Array) noneStored(ctx context.Context) bool {
	l := a.lister()
	if l == nil || a.Layout().Chunks() == 0 {
		return false
	}
	writes := a.writes.Load()
	ab := &a.absent
	ab.mu.Lock()
	nl := ab.none
	if nl != nil && nl.writes != writes {
		nl = nil
	}
	mine := nl == nil
	if mine {
		nl = &noneListing{done: make(chan struct{}), writes: writes}
		ab.none = nl
	}
	ab.mu.Unlock()
	if mine {
		nl.none = a.listNone(ctx, l)
		close(nl.done)
	}
	select {
	case <-nl.done:
		return nl.none && a.writes.Load() == writes
	case <-ctx.Done():
		return false
	}
}

// listNames returns the names of the values directly in dir, sorted, and
// whether they are all (at most maxListedNames). A store that lists by
// pages (S3: a request per 1,000 keys) is asked for one page, which must
// hold them all: a directory of many stored chunks is not worth listing.
func listNames(ctx context.Context, l store.Lister, dir string) (names []string, ok bool, err error) {
	pl, paged := l.(store.PageLister)
	if !paged {
		keys, _, err := l.ListDir(ctx, dir)
		return keys, err == nil && len(keys) <= maxListedNames, err
	}
	prefix := dir + "/"
	if dir == "" {
		prefix = ""
	}
	keys, more, err := pl.ListPrefixPage(ctx, prefix, "")
	if err != nil || more {
		return nil, false, err
	}
	for _, k := range keys {
		if name := strings.TrimPrefix(k, prefix); !strings.Contains(name, "/") {
			names = append(names, name)
		}
	}
	return names, true, nil
}

// listNone lists a's directory and reports whether it shows no chunk.
// Chunk keys lie in it as names (v2 "0.0", v3 "c.0") or under
// directories: under one named alike for every chunk (v3 "c/…") or one
// per index along the first dimension (v2 "0/0").
func (a *Array) listNone(ctx context.Context, l store.Lister) bool {
	if pl, ok := l.(store.PageLister); ok {
		// One page (one request on S3), not the whole directory: any
		// key but the array's documents is a chunk (an array has no
		// children).
		prefix := a.path + "/"
		if a.path == "" {
			prefix = ""
		}
		keys, more, err := pl.ListPrefixPage(ctx, prefix, "")
		if err != nil || more {
			return false
		}
		for _, k := range keys {
			if !metadataNames[strings.TrimPrefix(k, prefix)] {
				return false
			}
		}
		return true
	}
	keys, prefixes, err := l.ListDir(ctx, a.path)
	if err != nil {
		return false
	}
	first, last := a.chunkKeyAt(0), a.chunkKeyAt(a.Layout().Chunks()-1)
	rel0, ok0 := relKey(a.path, first)
	rel1, ok1 := relKey(a.path, last)
	if !ok0 || !ok1 {
		return false
	}
	for _, k := range keys {
		if !metadataNames[k] {
			return false // perhaps a chunk
		}
	}
	d0, _, nested := strings.Cut(rel0, "/")
	d1, _, _ := strings.Cut(rel1, "/")
	switch {
	case !nested:
		return true // chunks would be names, and none is
	case d0 == d1:
		_, found := slices.BinarySearch(prefixes, d0)
		return !found
	default:
		return len(prefixes) == 0
	}
}

// relKey returns key relative to the directory dir ("" is the root).
func relKey(dir, key string) (string, bool) {
	if dir == "" {
		return key, true
	}
	return strings.CutPrefix(key, dir+"/")
}

// fillRange fills p, the bytes of the content from off, with the fill
// value (elements of item bytes; p may start and end inside one).
func (a *Array) fillRange(p []byte, off, item int64) {
	head := off % item
	if head == 0 && int64(len(p))%item == 0 {
		a.FillElements(p)
		return
	}
	buf := make([]byte, (int64(len(p))+head+item-1)/item*item)
	a.FillElements(buf)
	copy(p, buf[head:])
}
