package codec

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/zarrfs/zarrfs/internal/nd"
)

// Partial decoding (DecodeParts): only the inner chunks the parts need, read
// with as few range reads as possible, nested shards read in ranges too.

// DecodeParts implements PartialDecoder: it reads the shard's index (once
// per shard when r is a Memo), then decodes the smallest box of the shard
// that holds every part, reading only the inner chunks the box needs
// (neighbouring ones coalesced into one range read), and copies the parts
// out of it.
func (s *Sharding) DecodeParts(ctx context.Context, r RangeReader, decoded ArraySpec, dsts [][]byte, offs []int64) error {
	item := int64(decoded.DataType.Size)
	if item == 0 {
		return fmt.Errorf("%s: variable-length elements cannot be decoded in parts", shardingName)
	}
	if len(dsts) == 0 {
		return nil
	}
	idx, err := s.cachedIndex(ctx, r, decoded)
	if err != nil {
		return err
	}
	if idx.allMissing() {
		for _, dst := range dsts {
			nd.Fill(dst, []int{len(dst) / int(item)}, []int{0}, []int{len(dst) / int(item)}, decoded.FillValue, false)
		}
		return nil
	}
	shape := make([]int64, len(decoded.Shape))
	for d, n := range decoded.Shape {
		shape[d] = int64(n)
	}
	eoffs, elens := make([]int64, len(offs)), make([]int64, len(offs))
	for i, off := range offs {
		if off%item != 0 || int64(len(dsts[i]))%item != 0 || len(dsts[i]) == 0 {
			return fmt.Errorf("%s: part of %d bytes at %d is not whole elements of %d bytes", shardingName, len(dsts[i]), off, item)
		}
		eoffs[i], elens[i] = off/item, int64(len(dsts[i]))/item
	}
	box := nd.Bound(shape, eoffs, elens)
	data, inner, err := s.rememberedInner(ctx, r, idx, decoded, box)
	if err != nil {
		return err
	}
	if data != nil && placeable(inner, shape, eoffs, elens) {
		box = inner
	} else {
		start, size := make([]int, len(shape)), make([]int, len(shape))
		for d := range shape {
			start[d], size[d] = int(box.Start[d]), int(box.Shape[d])
		}
		if data, err = s.decodeRegionWithIndex(ctx, r, idx, decoded, start, size); err != nil {
			return err
		}
	}
	for i, dst := range dsts {
		copy(dst, data[box.Offset(shape, eoffs[i])*item:])
	}
	return nil
}

// innerChunk is a decoded inner chunk that a Memo keeps.
type innerChunk []byte

func (c innerChunk) Size() int { return len(c) }

// rememberedInner returns, when box lies in one inner chunk of the shard
// and r is a Memo, that inner chunk decoded, through the Memo: decoded once
// and kept, so that a random reader's next read in it (another page of the
// same rows) costs no request. It returns nil, and no error, when box
// spans inner chunks, r keeps nothing or the inner chunks are shards
// themselves (decoded in part).
func (s *Sharding) rememberedInner(ctx context.Context, r RangeReader, idx *shardIndex, decoded ArraySpec, box nd.Box[int64]) ([]byte, nd.Box[int64], error) {
	m, ok := r.(Memo)
	if !ok {
		return nil, box, nil
	}
	l, err := s.layout(decoded)
	if err != nil {
		return nil, box, err
	}
	if cs := l.inner.Codecs(); len(cs) == 1 {
		if _, nested := cs[0].(*Sharding); nested {
			return nil, box, nil
		}
	}
	part := int64(0)
	start, size := make([]int, len(box.Start)), slices.Clone(s.chunkShape)
	inner := nd.Box[int64]{Start: make([]int64, len(box.Start)), Shape: make([]int64, len(box.Start))}
	for d, b := range box.Start {
		c := b / int64(size[d])
		if (b+box.Shape[d]-1)/int64(size[d]) != c {
			return nil, box, nil
		}
		part = part*int64(l.chunksPerShard[d]) + c
		start[d] = int(c) * size[d]
		inner.Start[d], inner.Shape[d] = int64(start[d]), int64(size[d])
	}
	v, err := m.Remember(ctx, part+1, func(ctx context.Context) (Memoized, error) {
		data, err := s.decodeRegionWithIndex(ctx, r, idx, decoded, start, size)
		return innerChunk(data), err
	})
	if err != nil {
		return nil, box, err
	}
	data, ok := v.(innerChunk)
	if !ok || len(data) != nd.Product(size)*decoded.DataType.Size {
		return nil, box, fmt.Errorf("%s: the memo of inner chunk %d holds a %T of %d bytes", shardingName, part, v, len(data))
	}
	return data, inner, nil
}

// placeable reports whether each range [eoffs[i], eoffs[i]+elens[i]) of
// the C-order array of shape is one run of the box's own C-order elements.
func placeable(b nd.Box[int64], shape, eoffs, elens []int64) bool {
	for i, off := range eoffs {
		if b.Offset(shape, off+elens[i]-1)-b.Offset(shape, off) != elens[i]-1 {
			return false
		}
	}
	return true
}

// readRegion reads the index (one range
// read), then the inner chunks the region needs (adjacent ones coalesced
// into one range read) and returns the region's elements in C order.
func (s *Sharding) readRegion(ctx context.Context, r RangeReader, decoded ArraySpec, start, shape []int) ([]byte, error) {
	if err := checkShardRegion(decoded, start, shape); err != nil {
		return nil, err
	}
	idx, err := s.readIndex(ctx, r, decoded)
	if err != nil {
		return nil, err
	}
	return s.decodeRegionWithIndex(ctx, r, idx, decoded, start, shape)
}

// decodeRegionWithIndex is readRegion with an index the caller read
// before with readIndex (and cached): it reads only the inner chunks the
// region needs.
func (s *Sharding) decodeRegionWithIndex(ctx context.Context, r RangeReader, idx *shardIndex, decoded ArraySpec, start, shape []int) ([]byte, error) {
	if err := checkShardRegion(decoded, start, shape); err != nil {
		return nil, err
	}
	l, err := s.layout(decoded)
	if err != nil {
		return nil, err
	}
	if idx.numChunks != l.numChunks {
		return nil, fmt.Errorf("%s: index of %d inner chunks for a shard of %d", shardingName, idx.numChunks, l.numChunks)
	}
	src := shardSource{fetch: func(pieces []shardPiece) ([][]byte, error) { return shardFetch(ctx, r, pieces) }}
	if cs := l.inner.Codecs(); len(cs) == 1 {
		if inner, ok := cs[0].(*Sharding); ok {
			src.nested = func(p shardPiece, start, size []int) ([]byte, error) {
				sub := &shardSubReader{r: r, off: p.offset, n: p.nbytes}
				return inner.readRegion(ctx, sub, l.inner.Spec(), start, size)
			}
		}
	}
	return s.decodeRegion(nil, l, idx, start, shape, src)
}

// shardSubReader reads the n bytes at off of r: an inner chunk that is
// itself a shard.
type shardSubReader struct {
	r      RangeReader
	off, n int64
}

// Read implements RangeReader.
func (c *shardSubReader) Read(ctx context.Context) ([]byte, error) {
	return c.r.ReadRange(ctx, c.off, c.n)
}

// ReadRange implements RangeReader, truncating at the end of the inner chunk.
func (c *shardSubReader) ReadRange(ctx context.Context, off, n int64) ([]byte, error) {
	if off < 0 || n < 0 {
		return nil, fmt.Errorf("%s: range of %d bytes at %d", shardingName, n, off)
	}
	off = min(off, c.n)
	return c.r.ReadRange(ctx, c.off+off, min(n, c.n-off))
}

// ReadSuffix implements RangeReader.
func (c *shardSubReader) ReadSuffix(ctx context.Context, n int64) ([]byte, error) {
	n = min(max(n, 0), c.n)
	return c.r.ReadRange(ctx, c.off+c.n-n, n)
}

// checkShardRegion checks that the box (start, shape) lies in the shard.
func checkShardRegion(decoded ArraySpec, start, shape []int) error {
	if len(start) != len(decoded.Shape) || len(shape) != len(decoded.Shape) {
		return fmt.Errorf("%s: region of rank %d/%d in a shard of rank %d", shardingName, len(start), len(shape), len(decoded.Shape))
	}
	for d, n := range decoded.Shape {
		if start[d] < 0 || shape[d] < 0 || start[d] > n || shape[d] > n-start[d] {
			return fmt.Errorf("%s: region at %v of shape %v is outside the shard %v", shardingName, start, shape, decoded.Shape)
		}
	}
	return nil
}

// shardFetch reads the stored bytes of pieces (present inner chunks) with
// as few range reads as it can: pieces stored next to each other, or with
// at most shardCoalesceGap bytes between them, come in one read.
func shardFetch(ctx context.Context, r RangeReader, pieces []shardPiece) ([][]byte, error) {
	order := make([]int, len(pieces))
	for k := range order {
		order[k] = k
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(pieces[a].offset, pieces[b].offset) })
	out := make([][]byte, len(pieces))
	for k := 0; k < len(order); {
		first := pieces[order[k]]
		begin, end := first.offset, first.offset+first.nbytes
		m := k + 1
		for ; m < len(order); m++ {
			p := pieces[order[m]]
			if p.offset-end > shardCoalesceGap {
				break
			}
			end = max(end, p.offset+p.nbytes)
		}
		buf, err := r.ReadRange(ctx, begin, end-begin)
		if err != nil {
			return nil, fmt.Errorf("%s: reading inner chunks at bytes %d-%d: %w", shardingName, begin, end-1, err)
		}
		if int64(len(buf)) != end-begin {
			return nil, Corruptf(shardingName, "shard ends at byte %d, inner chunks end at byte %d", begin+int64(len(buf)), end)
		}
		for ; k < m; k++ {
			p := pieces[order[k]]
			out[order[k]] = buf[p.offset-begin : p.offset-begin+p.nbytes : p.offset-begin+p.nbytes]
		}
	}
	return out, nil
}

// shardCoalesceGap is the largest run of unneeded bytes between two inner
// chunks that a partial decode reads rather than issuing a second range
// request: a few KiB more of one transfer costs less than a round trip.
const shardCoalesceGap = 4 << 10
