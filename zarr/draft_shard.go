package zarr

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/zarrfs/zarrfs/codec"
	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/zarr/meta"
)

// draftShards is the store an array with the 2022 draft's sharding reads
// its chunks from (meta.DraftShards): a chunk of the array from its shard;
// other keys go to the underlying store.
type draftShards struct {
	store.Store
	*meta.DraftShards
}

// Get implements store.Store: a chunk from its shard.
func (s *draftShards) Get(ctx context.Context, key string) ([]byte, error) {
	shardKey, pos, ok := s.Locate(key)
	if !ok {
		return s.Store.Get(ctx, key)
	}
	index, err := s.Store.GetRange(ctx, shardKey, store.ByteRange{Suffix: true, Length: s.IndexSize()})
	if err != nil {
		return nil, err // a missing shard: every chunk in it is missing
	}
	if int64(len(index)) != s.IndexSize() {
		return nil, codec.Corruptf("sharding", "shard %q is %d bytes, shorter than its %d-byte index", shardKey, len(index), s.IndexSize())
	}
	off := binary.LittleEndian.Uint64(index[16*pos:])
	nbytes := binary.LittleEndian.Uint64(index[16*pos+8:])
	if off == math.MaxUint64 && nbytes == math.MaxUint64 {
		return nil, fmt.Errorf("chunk %q in shard %q: %w", key, shardKey, store.ErrNotExist)
	}
	if off > math.MaxInt64 || nbytes > math.MaxInt64-off {
		return nil, codec.Corruptf("sharding", "shard %q: chunk %d at %d of %d bytes is out of range", shardKey, pos, off, nbytes)
	}
	data, err := s.Store.GetRange(ctx, shardKey, store.Range(int64(off), int64(nbytes)))
	if err != nil {
		return nil, err
	}
	if uint64(len(data)) != nbytes {
		return nil, codec.Corruptf("sharding", "shard %q: chunk %d at %d of %d bytes overruns the shard", shardKey, pos, off, nbytes)
	}
	return data, nil
}

// GetRange implements store.Store: a part of a chunk from its shard.
func (s *draftShards) GetRange(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	if _, _, ok := s.Locate(key); !ok {
		return s.Store.GetRange(ctx, key, r)
	}
	data, err := s.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	start, end, err := r.Resolve(int64(len(data)))
	if err != nil {
		return nil, err
	}
	return data[start:end], nil
}
