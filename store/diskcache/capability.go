package diskcache

import (
	"context"

	"github.com/zarrfs/zarrfs/store"
)

// ReadInto is store.ReaderInto, which Wrap's store has when the store it
// wraps does: the read goes to that store, not through the cache. Only a
// store of local files reads into the caller's buffer, and a copy of its
// bytes in the cache folder would save no request, only cost a second copy
// on disk.
func (s *cached) ReadInto(ctx context.Context, key string, p []byte, off int64) (int64, error) {
	return s.s.(store.ReaderInto).ReadInto(ctx, key, p, off)
}

// GetAlloc is store.AllocGetter, which Wrap's store has when the store it
// wraps does; as ReadInto, the read goes to that store.
func (s *cached) GetAlloc(ctx context.Context, key string, alloc func(n int) []byte) ([]byte, error) {
	return s.s.(store.AllocGetter).GetAlloc(ctx, key, alloc)
}
