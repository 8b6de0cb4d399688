package codec

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/zarrfs/zarrfs/internal/cores"
	"github.com/zarrfs/zarrfs/internal/nd"
	"golang.org/x/sync/errgroup"
)

// Decoding a whole shard, or a box of it, from inner chunks already read:
// the inner chunks are decoded on up to cores.Workers() goroutines.

// Decode implements ArrayToBytes: it decodes a whole shard.
func (s *Sharding) Decode(data []byte, decoded ArraySpec) ([]byte, error) {
	return s.decodeShard(nil, data, decoded)
}

// DecodeInto implements ArrayDecoderInto: it decodes a whole shard of
// fixed-size elements into dst, the inner chunks that fill rows of it
// whole straight into place.
func (s *Sharding) DecodeInto(dst, data []byte, decoded ArraySpec) error {
	if decoded.DataType.Variable() {
		return fmt.Errorf("%s: variable-length elements cannot be decoded into a buffer", shardingName)
	}
	if n := decoded.ByteSize(); len(dst) != n {
		return fmt.Errorf("%s: decode into %d bytes, want %d", shardingName, len(dst), n)
	}
	_, err := s.decodeShard(dst, data, decoded)
	return err
}

// decodeShard decodes the shard data into dst (nil: a new buffer).
func (s *Sharding) decodeShard(dst, data []byte, decoded ArraySpec) ([]byte, error) {
	l, err := s.layout(decoded)
	if err != nil {
		return nil, err
	}
	if len(data) < l.indexSize {
		return nil, Corruptf(shardingName, "shard of %d bytes is shorter than its index (%d bytes)", len(data), l.indexSize)
	}
	var enc []byte
	lo, hi := uint64(0), uint64(len(data))
	if s.location == IndexAtStart {
		enc, lo = data[:l.indexSize], uint64(l.indexSize)
	} else {
		enc, hi = data[len(data)-l.indexSize:], uint64(len(data)-l.indexSize)
	}
	idx, err := l.parseIndex(enc, lo, hi)
	if err != nil {
		return nil, err
	}
	cut := func(pieces []shardPiece) ([][]byte, error) {
		stored := make([][]byte, len(pieces))
		for k, p := range pieces {
			stored[k] = data[p.offset : p.offset+p.nbytes : p.offset+p.nbytes]
		}
		return stored, nil
	}
	return s.decodeRegion(dst, l, idx, make([]int, len(decoded.Shape)), decoded.Shape, shardSource{fetch: cut})
}

// shardPiece is one inner chunk a region needs.
type shardPiece struct {
	coord  []int // position in the grid of inner chunks
	offset int64 // where it is stored; -1 when it is missing
	nbytes int64
}

// shardSource reads the inner chunks a region needs. fetch returns the
// stored bytes of the present inner chunks it is given, in order. nested,
// when set (the inner codecs are one sharding codec and the chunks can be
// read in ranges), decodes the box (start, size) of an inner chunk, itself
// a shard, from ranged reads of it; it is used for inner chunks the region
// covers only in part.
type shardSource struct {
	fetch  func(pieces []shardPiece) ([][]byte, error)
	nested func(p shardPiece, start, size []int) ([]byte, error)
}

// decodeRegion decodes the box (start, shape) of a shard from the inner
// chunks that idx locates, read through src, into out (fixed-size
// elements, out the exact size of the box) or, out being nil, a new
// buffer. An inner chunk that the box holds whole, as one run of its
// bytes (whole rows of the box), decodes straight into its place when the
// inner codecs can (Pipeline.CanDecodeInto); the others are decoded, then
// copied.
func (s *Sharding) decodeRegion(out []byte, l *shardLayout, idx *shardIndex, start, shape []int, src shardSource) ([]byte, error) {
	count := 1
	for _, d := range shape {
		count *= d // shape lies inside the shard, whose size the engine checked
	}
	present, missing := s.pieces(l, idx, start, shape, count)
	var whole, nested []shardPiece
	for _, p := range present {
		if _, _, size := s.intersect(p.coord, start, shape); src.nested != nil && !slices.Equal(size, s.chunkShape) {
			nested = append(nested, p)
		} else {
			whole = append(whole, p)
		}
	}
	var stored [][]byte
	if len(whole) > 0 {
		var err error
		if stored, err = src.fetch(whole); err != nil {
			return nil, err
		}
	}
	// decoded returns the elements of piece k (whole, then nested) that lie
	// in the region: an array of srcShape holding them at srcStart.
	decoded := func(k int) (p shardPiece, data []byte, srcShape, srcStart, dstStart, size []int, err error) {
		if k < len(whole) {
			p = whole[k]
			srcStart, dstStart, size = s.intersect(p.coord, start, shape)
			data, err = l.inner.Decode(stored[k])
			return p, data, s.chunkShape, srcStart, dstStart, size, err
		}
		p = nested[k-len(whole)]
		innerStart, dstStart, size := s.intersect(p.coord, start, shape)
		data, err = src.nested(p, innerStart, size)
		return p, data, size, make([]int, len(size)), dstStart, size, err
	}
	n := len(whole) + len(nested)
	if l.spec.DataType.Variable() {
		elems := make([][]byte, count)
		for _, p := range missing {
			_, dstStart, size := s.intersect(p.coord, start, shape)
			nd.Each(shape, dstStart, nil, nil, size, func(di, _ int) { elems[di] = l.spec.FillValue })
		}
		err := shardParallel(n, func(k int) error {
			p, data, srcShape, srcStart, dstStart, size, err := decoded(k)
			if err != nil {
				return fmt.Errorf("%s: inner chunk %v: %w", shardingName, p.coord, err)
			}
			inner, err := splitVlen(shardingName, data, nd.Product(srcShape))
			if err != nil {
				return fmt.Errorf("inner chunk %v: %w", p.coord, err)
			}
			nd.Each(shape, dstStart, srcShape, srcStart, size, func(di, si int) { elems[di] = inner[si] })
			return nil
		})
		if err != nil {
			return nil, err
		}
		return shardJoinVlen(elems)
	}
	itemSize := l.spec.DataType.Size
	fresh := out == nil
	if fresh {
		out = make([]byte, count*itemSize)
	} else if len(out) != count*itemSize {
		return nil, fmt.Errorf("%s: decode into %d bytes, want %d", shardingName, len(out), count*itemSize)
	}
	for _, p := range missing {
		_, dstStart, size := s.intersect(p.coord, start, shape)
		nd.Fill(out, shape, dstStart, size, l.spec.FillValue, fresh)
	}
	into := l.inner.CanDecodeInto()
	strides := nd.Strides(shape, itemSize)
	err := shardParallel(n, func(k int) error {
		if k < len(whole) && into {
			p := whole[k]
			_, dstStart, size := s.intersect(p.coord, start, shape)
			if outer, _ := nd.Runs(shape, s.chunkShape, size); outer == 0 && slices.Equal(size, s.chunkShape) {
				at := 0
				for d, i := range dstStart {
					at += i * strides[d]
				}
				if err := l.inner.DecodeInto(out[at:at+nd.Product(size)*itemSize], stored[k]); err != nil {
					return fmt.Errorf("%s: inner chunk %v: %w", shardingName, p.coord, err)
				}
				return nil
			}
		}
		p, data, srcShape, srcStart, dstStart, size, err := decoded(k)
		if err != nil {
			return fmt.Errorf("%s: inner chunk %v: %w", shardingName, p.coord, err)
		}
		if len(data) != nd.Product(srcShape)*itemSize {
			return Corruptf(shardingName, "inner chunk %v decoded to %d bytes", p.coord, len(data))
		}
		nd.Copy(out, shape, dstStart, data, srcShape, srcStart, size, itemSize)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// pieces returns the inner chunks that the region (start, shape) of count
// elements touches, present and missing, in C order.
func (s *Sharding) pieces(l *shardLayout, idx *shardIndex, start, shape []int, count int) (present, missing []shardPiece) {
	if count == 0 {
		return nil, nil
	}
	rank := len(shape)
	lo, hi := make([]int, rank), make([]int, rank)
	for d := range rank {
		lo[d] = start[d] / s.chunkShape[d]
		hi[d] = (start[d] + shape[d] - 1) / s.chunkShape[d]
	}
	coord := slices.Clone(lo)
	for {
		i := 0
		for d := range rank {
			i = i*l.chunksPerShard[d] + coord[d]
		}
		p := shardPiece{coord: slices.Clone(coord), offset: -1}
		if off, nb, ok := idx.chunk(i); ok {
			p.offset, p.nbytes = off, nb
			present = append(present, p)
		} else {
			missing = append(missing, p)
		}
		if !nd.Next(coord, lo, hi) {
			return present, missing
		}
	}
}

// shardJoinVlen returns elems in the vlen layout, refusing more than
// UnknownSizeCap bytes (which also keeps every count and length in a
// uint32).
func shardJoinVlen(elems [][]byte) ([]byte, error) {
	total := 4
	for _, e := range elems {
		if len(e) > UnknownSizeCap-4-total {
			return nil, Corruptf(shardingName, "variable-length elements of more than %d bytes", UnknownSizeCap)
		}
		total += 4 + len(e)
	}
	out := make([]byte, 0, total)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(elems)))
	for _, e := range elems {
		out = binary.LittleEndian.AppendUint32(out, uint32(len(e)))
		out = append(out, e...)
	}
	return out, nil
}

// intersect returns the part of inner chunk coord that lies in the region
// (start, shape): where it starts in the chunk, where in the region, and
// its size.
func (s *Sharding) intersect(coord, start, shape []int) (srcStart, dstStart, size []int) {
	rank := len(coord)
	srcStart, dstStart, size = make([]int, rank), make([]int, rank), make([]int, rank)
	for d := range rank {
		origin := coord[d] * s.chunkShape[d]
		b := max(start[d], origin)
		e := min(start[d]+shape[d], origin+s.chunkShape[d])
		srcStart[d], dstStart[d], size[d] = b-origin, b-start[d], e-b
	}
	return srcStart, dstStart, size
}

// shardParallel calls f(0) … f(n-1) on up to cores.Workers() goroutines and
// returns the first error. After an error no further f starts (those
// running finish): the group's context is cancelled and both the loop and
// each f check it before starting.
func shardParallel(n int, f func(i int) error) error {
	workers := min(n, cores.Workers())
	if workers <= 1 {
		for i := range n {
			if err := f(i); err != nil {
				return err
			}
		}
		return nil
	}
	g, ctx := errgroup.WithContext(context.Background())
	g.SetLimit(workers)
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		g.Go(func() error {
			if ctx.Err() != nil {
				return nil
			}
			return f(i)
		})
	}
	return g.Wait()
}
