package zarr

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/zarrfs/zarrfs/codec"
	"github.com/zarrfs/zarrfs/internal/nd"
	"github.com/zarrfs/zarrfs/store"
)

// draftShardingURI is the 2022 v3 draft's sharding storage transformer.
const draftShardingURI = "https://purl.org/zarr/spec/extensions/storage_transformers/sharding/1.0"

// parseDraftTransformers reads a draft array's storage_transformers: none,
// or the 2022 draft's "indexed" sharding, which is returned as the store
// wrapper the array reads its chunks through.
func parseDraftTransformers(raw json.RawMessage, keys chunkKeys, rank int) (func(store.Store) store.Store, error) {
	if raw == nil || string(raw) == "null" {
		return nil, nil
	}
	var list []struct {
		Extension     string       `json:"extension"`
		Type          string       `json:"type"`
		Configuration codec.Config `json:"configuration"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("%w: storage_transformers %s is not a list of objects", ErrInvalidMetadata, compact(raw))
	}
	switch {
	case len(list) == 0:
		return nil, nil
	case len(list) > 1:
		return nil, codec.Unsupportedf("a stack of %d storage transformers", len(list))
	case list[0].Extension != draftShardingURI || list[0].Type != "indexed":
		return nil, codec.Unsupportedf("storage transformer %q (%s)", list[0].Type, list[0].Extension)
	}
	per, err := parseDims("chunks_per_shard", list[0].Configuration["chunks_per_shard"], true)
	if err != nil {
		return nil, err
	}
	if len(per) != rank {
		return nil, fmt.Errorf("%w: chunks_per_shard %v does not match the rank %d", ErrInvalidMetadata, per, rank)
	}
	n := int64(1)
	for _, c := range per {
		var ok bool
		if n, ok = nd.Mul(n, c); !ok || n > maxShardChunks {
			return nil, fmt.Errorf("%w: chunks_per_shard %v: more than %d chunks in a shard", ErrInvalidMetadata, per, maxShardChunks)
		}
	}
	return func(st store.Store) store.Store {
		return &draftShards{Store: st, keys: keys, per: per, n: n}
	}, nil
}

// maxShardChunks bounds the chunks of a shard (its index is 16 bytes each).
const maxShardChunks = 1 << 24

// draftShards is the store an array with the 2022 draft's sharding reads
// its chunks from: a chunk key of the array names a chunk in a shard (the
// chunk grid index divided by chunks_per_shard, keyed the same way) found
// through the index at the shard's end, chunks_per_shard little-endian
// (offset, nbytes) uint64 pairs in C order, both 2^64-1 for a missing
// chunk. Other keys go to the underlying store.
type draftShards struct {
	store.Store
	keys chunkKeys
	per  []int64
	n    int64
}

// locate returns the shard key of the chunk at key and the chunk's
// position in the shard's index; ok is false for other keys.
func (s *draftShards) locate(key string) (shardKey string, pos int64, ok bool) {
	rest, found := strings.CutPrefix(key, s.keys.dir+"/"+s.keys.prefix)
	if !found {
		return "", 0, false
	}
	parts := strings.Split(rest, s.keys.sep)
	if len(parts) != len(s.per) {
		return "", 0, false
	}
	shard := make([]int64, len(parts))
	for i, p := range parts {
		x, err := strconv.ParseInt(p, 10, 64)
		if err != nil || x < 0 {
			return "", 0, false
		}
		shard[i] = x / s.per[i]
		pos = pos*s.per[i] + x%s.per[i]
	}
	return store.Join(s.keys.dir, s.keys.key(shard)), pos, true
}

// Get implements store.Store: a chunk from its shard.
func (s *draftShards) Get(ctx context.Context, key string) ([]byte, error) {
	shardKey, pos, ok := s.locate(key)
	if !ok {
		return s.Store.Get(ctx, key)
	}
	index, err := s.Store.GetRange(ctx, shardKey, store.ByteRange{Suffix: true, Length: 16 * s.n})
	if err != nil {
		return nil, err // a missing shard: every chunk in it is missing
	}
	if int64(len(index)) != 16*s.n {
		return nil, codec.Corruptf("sharding", "shard %q is %d bytes, shorter than its %d-byte index", shardKey, len(index), 16*s.n)
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
	if _, _, ok := s.locate(key); !ok {
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
