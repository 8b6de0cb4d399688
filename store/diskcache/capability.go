package diskcache

import (
	"context"
	"os"

	"github.com/zarrfs/zarrfs/store"
)

// ReadInto is store.ReaderInto, which Wrap's store has when the store it
// wraps does: the read goes to that store, not through the cache. Only a
// store of local files reads into the caller's buffer, and a copy of its
// bytes in the cache folder would save no request, only cost a second copy
// on disk. (The cache does not offer it over a far store: the engine would
// then read uncompressed chunks in runs, each a range entry of its own.)
func (s *cached) ReadInto(ctx context.Context, key string, p []byte, off int64) (int64, error) {
	return s.s.(store.ReaderInto).ReadInto(ctx, key, p, off)
}

// Extends says that the cache serves store.AllocGetter whatever the store
// it wraps (store.Extender): a hit reads its entry straight into the
// caller's buffer, as the directory store reads a file, so that a read
// served from the folder fills the engine's pooled buffers instead of
// leaving a new one per chunk to the collector.
func (s *cached) Extends() (readInto, allocGetter bool) { return false, true }

// GetAlloc is store.AllocGetter. Over a store that has it (a directory),
// the read goes to that store, as ReadInto does. Otherwise a trusted whole
// value's entry is read into the buffer alloc gives, its checksum checked
// there; anything else (no entry, a damaged one, one to revalidate) is
// Get through the cache and returned in the buffer the store read it
// into, without calling alloc (or, when a damaged entry's size was asked
// of alloc, copied into alloc's buffer if it fits).
func (s *cached) GetAlloc(ctx context.Context, key string, alloc func(n int) []byte) ([]byte, error) {
	if g, ok := s.s.(store.AllocGetter); ok {
		return g.GetAlloc(ctx, key, alloc)
	}
	if err := store.CheckKey(ctx, key); err != nil {
		return nil, err
	}
	path := s.c.path(s.id, key, "a")
	if !s.trusted(key, path) {
		b, _, err := s.read(ctx, key, store.All) // revalidated first
		return b, err
	}
	var buf []byte
	e := s.c.loadInto(path, s.id, key, "a", func(n int) []byte {
		buf = alloc(n)
		return buf
	})
	if e != nil {
		b, _, err := s.hit(e, store.All, false, &s.c.hits)
		return b, err
	}
	// No entry to serve (read would find none either): fetched, the
	// entry looked for again under its lock.
	b, _, err := s.fetch(ctx, key, store.All, path, "a", true)
	if err != nil || buf == nil || len(b) > len(buf) {
		return b, err
	}
	return buf[:copy(buf, b)], nil
}

// Holds is store.Holder: the folder holds an entry of key's whole value
// that a read would serve without asking the store (not one to
// revalidate first). It looks for the file only; a damaged entry is found
// so when read.
func (s *cached) Holds(key string) bool {
	path := s.c.path(s.id, key, "a")
	if !s.trusted(key, path) {
		return false
	}
	_, err := os.Stat(path)
	return err == nil
}
