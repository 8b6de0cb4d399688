package codec

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/zarrfs/zarrfs/internal/nd"
)

// A shard's layout (inner chunk grid, index codecs, index size) and its
// index: parsing it, reading it with one range read, keeping it.

// shardLayout is what the codec derives from a shard's spec.
type shardLayout struct {
	spec           ArraySpec
	chunksPerShard []int
	numChunks      int
	indexSize      int // encoded size of the index in bytes
	inner          *Pipeline
	index          *Pipeline
}

// layout returns the layout for shards described by decoded, from the
// cache when it is there.
func (s *Sharding) layout(decoded ArraySpec) (*shardLayout, error) {
	key := shardSpecKey(decoded)
	s.mu.Lock()
	l := s.layouts[key]
	s.mu.Unlock()
	if l != nil {
		return l, nil
	}
	l, err := s.newLayout(decoded)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if len(s.layouts) < maxShardLayouts {
		s.layouts[key] = l
	}
	s.mu.Unlock()
	return l, nil
}

// shardSpecKey identifies a spec for the layout cache.
func shardSpecKey(spec ArraySpec) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v|%s|%d|%x", spec.Shape, spec.DataType.Name, spec.DataType.Size, spec.FillValue)
	return b.String()
}

// newLayout checks the codec against decoded and builds its pipelines.
func (s *Sharding) newLayout(decoded ArraySpec) (*shardLayout, error) {
	if !decoded.DataType.Variable() && len(decoded.FillValue) != decoded.DataType.Size {
		return nil, fmt.Errorf("%s: fill value of %d bytes for %s elements of %d bytes",
			shardingName, len(decoded.FillValue), decoded.DataType.Name, decoded.DataType.Size)
	}
	if len(decoded.Shape) != len(s.chunkShape) {
		return nil, fmt.Errorf("%s: chunk_shape %v has %d dimensions, the shard %v has %d",
			shardingName, s.chunkShape, len(s.chunkShape), decoded.Shape, len(decoded.Shape))
	}
	l := &shardLayout{spec: decoded, chunksPerShard: make([]int, len(s.chunkShape)), numChunks: 1}
	for i, n := range decoded.Shape {
		if n <= 0 || n%s.chunkShape[i] != 0 {
			return nil, fmt.Errorf("%s: chunk_shape %v does not divide the shard shape %v", shardingName, s.chunkShape, decoded.Shape)
		}
		l.chunksPerShard[i] = n / s.chunkShape[i]
		var ok bool
		if l.numChunks, ok = nd.Mul(l.numChunks, l.chunksPerShard[i]); !ok {
			return nil, Unsupportedf("%s with more than %d inner chunks per shard", shardingName, math.MaxInt)
		}
	}
	if rawIndex, ok := nd.Mul(l.numChunks, 16); !ok || rawIndex > UnknownSizeCap {
		return nil, Unsupportedf("%s index of %d inner chunks (more than %d bytes)", shardingName, l.numChunks, UnknownSizeCap)
	}
	var err error
	innerSpec := ArraySpec{Shape: slices.Clone(s.chunkShape), DataType: decoded.DataType, FillValue: decoded.FillValue}
	if l.inner, err = NewPipeline(s.inner, innerSpec); err != nil {
		return nil, fmt.Errorf("%s: codecs: %w", shardingName, err)
	}
	indexSpec := ArraySpec{
		Shape:     append(slices.Clone(l.chunksPerShard), 2),
		DataType:  DataType{Name: "uint64", Size: 8},
		FillValue: bytes.Repeat([]byte{0xff}, 8),
	}
	if l.index, err = NewPipeline(s.index, indexSpec); err != nil {
		return nil, fmt.Errorf("%s: index_codecs: %w", shardingName, err)
	}
	if l.indexSize = pipelineEncodedSize(l.index); l.indexSize < 0 {
		return nil, fmt.Errorf("%s: index_codecs must have a fixed encoded size", shardingName)
	}
	return l, nil
}

// pipelineEncodedSize returns the size p encodes a chunk to, or -1 when it
// depends on the data.
func pipelineEncodedSize(p *Pipeline) int { return p.sizes[len(p.sizes)-1] }

// shardIndex is the parsed, validated index of one shard: where each inner
// chunk is stored. It is immutable and safe for concurrent use, so the
// engine can cache it by shard key.
type shardIndex struct {
	numChunks int
	// entries holds an offset and an nbytes for each inner chunk, in C
	// order; both are shardMissing for an absent one. Every present entry
	// has been checked not to overlap an index at the start and to end
	// inside the shard (when its size was known: Decode) or at least
	// below 2^63 (readIndex, whose readers check the rest).
	entries []uint64
}

// chunk returns where inner chunk i (its C-order position in the shard's
// grid of inner chunks, 0 ≤ i < numChunks) is stored; ok is false when
// it is absent.
func (x *shardIndex) chunk(i int) (offset, nbytes int64, ok bool) {
	off, n := x.entries[2*i], x.entries[2*i+1]
	if off == shardMissing {
		return 0, 0, false
	}
	return int64(off), int64(n), true
}

// allMissing reports whether the shard holds no inner chunk at all, so
// that it reads as the fill value everywhere.
func (x *shardIndex) allMissing() bool {
	for _, v := range x.entries {
		if v != shardMissing {
			return false
		}
	}
	return true
}

// Size returns the memory the index holds, in bytes, for cache accounting.
func (x *shardIndex) Size() int { return 8*len(x.entries) + 64 }

// parseIndex decodes an encoded index and checks every entry: a present
// chunk must lie inside [lo, hi) of the shard, a pair must be missing in
// both members or in neither.
func (l *shardLayout) parseIndex(enc []byte, lo, hi uint64) (*shardIndex, error) {
	if len(enc) != l.indexSize {
		return nil, Corruptf(shardingName, "index of %d bytes, want %d", len(enc), l.indexSize)
	}
	raw, err := l.index.Decode(enc)
	if err != nil {
		return nil, fmt.Errorf("%s: index: %w", shardingName, err)
	}
	if len(raw) != 16*l.numChunks {
		return nil, Corruptf(shardingName, "index decodes to %d bytes, want %d", len(raw), 16*l.numChunks)
	}
	x := &shardIndex{numChunks: l.numChunks, entries: make([]uint64, 2*l.numChunks)}
	for i := range x.entries {
		x.entries[i] = binary.LittleEndian.Uint64(raw[8*i:])
	}
	for i := 0; i < l.numChunks; i++ {
		off, n := x.entries[2*i], x.entries[2*i+1]
		switch {
		case off == shardMissing && n == shardMissing:
			continue
		case off == shardMissing || n == shardMissing:
			return nil, Corruptf(shardingName, "inner chunk %d: offset %d, nbytes %d: only one of them marks it missing", i, off, n)
		case off < lo:
			return nil, Corruptf(shardingName, "inner chunk %d at offset %d overlaps the index (%d bytes at the start)", i, off, lo)
		case off > hi || n > hi-off:
			return nil, Corruptf(shardingName, "inner chunk %d: %d bytes at offset %d reach past byte %d of the shard", i, n, off, hi)
		}
	}
	return x, nil
}

// readIndex reads and validates the index of the shard r reads, described
// by decoded, with one range read (a suffix read when the index is at the
// end). A missing shard is the reader's error, wrapped: it matches
// fs.ErrNotExist. Without the size of the shard, the end of an inner chunk
// can only be checked when it is read (decodeRegionWithIndex does).
func (s *Sharding) readIndex(ctx context.Context, r RangeReader, decoded ArraySpec) (*shardIndex, error) {
	l, err := s.layout(decoded)
	if err != nil {
		return nil, err
	}
	var enc []byte
	lo := uint64(0)
	if s.location == IndexAtStart {
		enc, err = r.ReadRange(ctx, 0, int64(l.indexSize))
		lo = uint64(l.indexSize)
	} else {
		enc, err = r.ReadSuffix(ctx, int64(l.indexSize))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: reading the shard index: %w", shardingName, err)
	}
	if len(enc) != l.indexSize {
		return nil, Corruptf(shardingName, "shard of %d bytes is shorter than its index (%d bytes)", len(enc), l.indexSize)
	}
	return l.parseIndex(enc, lo, math.MaxInt64)
}

// cachedIndex returns the index of the shard r reads: from r's Memo when it is
// one (read and parsed once per shard), else read now.
func (s *Sharding) cachedIndex(ctx context.Context, r RangeReader, decoded ArraySpec) (*shardIndex, error) {
	m, ok := r.(Memo)
	if !ok {
		return s.readIndex(ctx, r, decoded)
	}
	v, err := m.Remember(ctx, 0, func(ctx context.Context) (Memoized, error) { return s.readIndex(ctx, r, decoded) })
	if err != nil {
		return nil, err
	}
	idx, ok := v.(*shardIndex)
	if !ok {
		return nil, fmt.Errorf("%s: the shard's memo holds a %T, not its index", shardingName, v)
	}
	return idx, nil
}
