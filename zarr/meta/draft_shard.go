package meta

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/zarrfs/zarrfs/codec"
	"github.com/zarrfs/zarrfs/internal/nd"
	"github.com/zarrfs/zarrfs/store"
)

// draftShardingURI is the 2022 v3 draft's sharding storage transformer.
const draftShardingURI = "https://purl.org/zarr/spec/extensions/storage_transformers/sharding/1.0"

// parseDraftTransformers reads a draft array's storage_transformers: none,
// or the 2022 draft's "indexed" sharding, which is returned as the
// DraftShards the array reads its chunks through.
func parseDraftTransformers(raw json.RawMessage, keys chunkKeys, rank int) (*DraftShards, error) {
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
	return &DraftShards{keys: keys, per: per, n: n}, nil
}

// maxShardChunks bounds the chunks of a shard (its index is 16 bytes each).
const maxShardChunks = 1 << 24

// DraftShards is the 2022 draft's sharding of an array's chunks: a chunk
// key of the array names a chunk in a shard (the chunk grid index divided
// by chunks_per_shard, keyed the same way) found through the index at the
// shard's end, chunks_per_shard little-endian (offset, nbytes) uint64
// pairs in C order, both 2^64-1 for a missing chunk.
type DraftShards struct {
	keys chunkKeys
	per  []int64
	n    int64
}

// IndexSize returns the size in bytes of a shard's index.
func (s *DraftShards) IndexSize() int64 { return 16 * s.n }

// Locate returns the shard key of the chunk at key and the chunk's
// position in the shard's index; ok is false for other keys.
func (s *DraftShards) Locate(key string) (shardKey string, pos int64, ok bool) {
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
