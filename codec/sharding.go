package codec

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/zarrfs/zarrfs/internal/cores"
	"github.com/zarrfs/zarrfs/internal/nd"
)

func init() {
	Register(newSharding, "sharding_indexed")
}

// shardingName is the v3 name of the sharding codec, used in messages.
const shardingName = "sharding_indexed"

// shardMissing marks an absent inner chunk in a shard index: offset and
// nbytes are both 2^64−1.
const shardMissing = math.MaxUint64

// shardCoalesceGap is the largest run of unneeded bytes between two inner
// chunks that a partial decode reads rather than issuing a second range
// request: a few KiB more of one transfer costs less than a round trip.
const shardCoalesceGap = 4 << 10

// IndexLocation says where a shard's index is stored.
type IndexLocation int

const (
	// IndexAtEnd places the index after the inner chunks (the default).
	IndexAtEnd IndexLocation = iota
	// IndexAtStart places the index before the inner chunks.
	IndexAtStart
)

// String returns the configuration value of l ("start" or "end").
func (l IndexLocation) String() string {
	if l == IndexAtStart {
		return "start"
	}
	return "end"
}

// Sharding is the array→bytes codec "sharding_indexed" (Zarr v3 sharding
// codec, ZEP 2): a chunk of the array (a shard) is split into inner chunks
// of ChunkShape, each encoded with the inner codecs, stored one after
// another, and located by an index of (offset, nbytes) pairs, uint64 each,
// one pair per inner chunk in C order, encoded with the index codecs and
// placed at the start or at the end of the shard. Inner chunks whose pair
// is (2^64−1, 2^64−1) are absent and read as the fill value.
//
// The decoded form of a shard is always the whole shard shape, also for
// shards that overhang the edge of the array: the caller crops.
//
// Whole shards decode with Pipeline.Decode of the stored value (one Get,
// no range requests). Parts of a shard decode with DecodeParts (the
// PartialDecoder): the shard's index, read with one range read (a suffix
// read when it is at the end) and kept by the RangeReader when it is a
// Memo, then only the inner chunks the parts need, neighbouring ones
// coalesced into one range read; with nested sharding, an inner shard
// the parts cover in part is itself read by its index and the chunks
// needed. A shard that does not exist is the RangeReader's error, which
// matches fs.ErrNotExist; a shard that holds no inner chunk is all fill
// value and needs no further read.
//
// The sharding storage transformer of the 2022 v3 draft stores shards in
// the same binary format with the index at the end, uint64 little-endian
// without checksum: NewSharding(chunkShape, arrayCodecs, indexCodecs,
// IndexAtEnd), indexCodecs being the "bytes" codec alone, decodes them,
// the shard shape being the chunk shape times chunks_per_shard.
type Sharding struct {
	chunkShape []int
	inner      []Codec
	index      []Codec
	location   IndexLocation

	mu      sync.Mutex
	layouts map[string]*shardLayout // by decoded spec; at most maxShardLayouts
}

// maxShardLayouts bounds the layouts a Sharding codec remembers. An array
// has one shard shape, so one entry is the common case.
const maxShardLayouts = 8

// NewSharding returns the sharding codec for inner chunks of chunkShape
// encoded with inner, an index encoded with index (whose encoded size must
// not depend on the data) and placed at location. The codec lists are
// checked against a shard's spec when the first shard is decoded.
func NewSharding(chunkShape []int, inner, index []Codec, location IndexLocation) (*Sharding, error) {
	for i, n := range chunkShape {
		if n <= 0 {
			return nil, fmt.Errorf("%s: chunk_shape[%d] = %d is not positive", shardingName, i, n)
		}
	}
	if len(inner) == 0 {
		return nil, fmt.Errorf("%s: codecs is empty", shardingName)
	}
	if len(index) == 0 {
		return nil, fmt.Errorf("%s: index_codecs is empty", shardingName)
	}
	if location != IndexAtStart && location != IndexAtEnd {
		return nil, fmt.Errorf("%s: invalid index location %d", shardingName, location)
	}
	return &Sharding{
		chunkShape: slices.Clone(chunkShape),
		inner:      slices.Clone(inner),
		index:      slices.Clone(index),
		location:   location,
		layouts:    map[string]*shardLayout{},
	}, nil
}

// newSharding builds the codec from its v3 configuration. As in
// zarr-python, codecs defaults to [bytes] and index_codecs to
// [bytes, crc32c] when absent; index_location defaults to "end".
func newSharding(cfg Config) (Codec, error) {
	for k := range cfg {
		switch k {
		case "chunk_shape", "codecs", "index_codecs", "index_location":
		default:
			return nil, Unsupportedf("%s configuration member %q", shardingName, k)
		}
	}
	var chunkShape []int
	if ok, err := cfg.Decode(shardingName, "chunk_shape", &chunkShape); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("%s: configuration has no chunk_shape", shardingName)
	}
	inner, err := shardCodecs(cfg, "codecs", `["bytes"]`)
	if err != nil {
		return nil, err
	}
	index, err := shardCodecs(cfg, "index_codecs", `["bytes", "crc32c"]`)
	if err != nil {
		return nil, err
	}
	location := IndexAtEnd
	var loc string
	if _, err := cfg.Decode(shardingName, "index_location", &loc); err != nil {
		return nil, err
	}
	switch loc {
	case "", "end":
	case "start":
		location = IndexAtStart
	default:
		return nil, fmt.Errorf("%s: index_location %q is neither \"start\" nor \"end\"", shardingName, loc)
	}
	return NewSharding(chunkShape, inner, index, location)
}

// shardCodecs builds the codec list of member key of cfg, or def (a JSON
// codec list) when it is absent.
func shardCodecs(cfg Config, key, def string) ([]Codec, error) {
	raw, ok := cfg[key]
	if !ok || string(raw) == "null" {
		raw = json.RawMessage(def)
	}
	cs, err := ParseCodecList(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", shardingName, key, err)
	}
	return cs, nil
}

// Name implements Codec.
func (*Sharding) Name() string { return shardingName }

// EncodedSize implements ArrayToBytes: the size of a shard depends on its
// data (inner chunks of fill value are left out).
func (*Sharding) EncodedSize(ArraySpec) int { return -1 }

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

// shardParallel calls f(0) … f(n-1) on up to cores.Workers() goroutines and
// returns the first error.
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
	var (
		mu    sync.Mutex
		next  int
		first error
		wg    sync.WaitGroup
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				stop := first != nil
				mu.Unlock()
				if stop || i >= n {
					return
				}
				if err := f(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return first
}
