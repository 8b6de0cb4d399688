package codec

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/zarrfs/zarrfs/internal/nd"
)

// Encoding a shard: inner chunks encoded one after another, then the index.

// Encode implements ArrayToBytes: it encodes a whole shard. Inner chunks
// holding nothing but the fill value are left out, as zarr-python does; a
// shard of fill value only is an index marking every chunk missing (the
// caller may prefer to store nothing).
func (s *Sharding) Encode(chunk []byte, decoded ArraySpec) ([]byte, error) {
	l, err := s.layout(decoded)
	if err != nil {
		return nil, err
	}
	// innerChunk returns the inner chunk at srcStart in the in-memory
	// form, and whether it holds nothing but the fill value.
	var innerChunk func(srcStart []int) ([]byte, bool, error)
	rank := len(decoded.Shape)
	if decoded.DataType.Variable() {
		elems, err := splitVlen(shardingName, chunk, decoded.NumElements())
		if err != nil {
			return nil, fmt.Errorf("%s: encode: %w", shardingName, err)
		}
		innerChunk = func(srcStart []int) ([]byte, bool, error) {
			innerElems := make([][]byte, l.inner.Spec().NumElements())
			fill := true
			nd.Each(s.chunkShape, make([]int, rank), decoded.Shape, srcStart, s.chunkShape, func(di, si int) {
				innerElems[di] = elems[si]
				fill = fill && bytes.Equal(elems[si], decoded.FillValue)
			})
			b, err := shardJoinVlen(innerElems)
			return b, fill, err
		}
	} else {
		if len(chunk) != decoded.ByteSize() {
			return nil, fmt.Errorf("%s: encode %d bytes, want %d", shardingName, len(chunk), decoded.ByteSize())
		}
		itemSize := decoded.DataType.Size
		innerSize := l.inner.Spec().ByteSize()
		fillChunk := bytes.Repeat(decoded.FillValue, innerSize/itemSize)
		innerChunk = func(srcStart []int) ([]byte, bool, error) {
			inner := make([]byte, innerSize)
			nd.Copy(inner, s.chunkShape, make([]int, rank), chunk, decoded.Shape, srcStart, s.chunkShape, itemSize)
			return inner, bytes.Equal(inner, fillChunk), nil
		}
	}
	encoded := make([][]byte, l.numChunks)
	err = shardParallel(l.numChunks, func(i int) error {
		coord := make([]int, rank)
		for d, rest := rank-1, i; d >= 0; d-- {
			coord[d] = rest % l.chunksPerShard[d]
			rest /= l.chunksPerShard[d]
		}
		srcStart := make([]int, rank)
		for d := range rank {
			srcStart[d] = coord[d] * s.chunkShape[d]
		}
		inner, fill, err := innerChunk(srcStart)
		if err != nil || fill {
			return err
		}
		enc, err := l.inner.Encode(inner)
		if err != nil {
			return fmt.Errorf("%s: inner chunk %v: %w", shardingName, coord, err)
		}
		encoded[i] = enc
		return nil
	})
	if err != nil {
		return nil, err
	}
	total := l.indexSize
	for _, e := range encoded {
		total += len(e)
	}
	raw := make([]byte, 16*l.numChunks)
	body := make([]byte, 0, total)
	if s.location == IndexAtStart {
		body = body[:l.indexSize]
	}
	for i, e := range encoded {
		off, n := uint64(shardMissing), uint64(shardMissing)
		if e != nil {
			off, n = uint64(len(body)), uint64(len(e))
			body = append(body, e...)
		}
		binary.LittleEndian.PutUint64(raw[16*i:], off)
		binary.LittleEndian.PutUint64(raw[16*i+8:], n)
	}
	enc, err := l.index.Encode(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: index: %w", shardingName, err)
	}
	if len(enc) != l.indexSize {
		return nil, fmt.Errorf("%s: index encoded to %d bytes, want %d", shardingName, len(enc), l.indexSize)
	}
	if s.location == IndexAtStart {
		copy(body, enc)
		return body, nil
	}
	return append(body, enc...), nil
}
