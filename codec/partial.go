package codec

import (
	"context"
	"fmt"
)

// RangeReader reads one stored chunk, whole or in byte ranges. A missing
// chunk is an error matching fs.ErrNotExist (store.ErrNotExist is
// fs.ErrNotExist). A range reaching past the end of the value is truncated
// to it, as store.Store.GetRange does; readers of this package check the
// length of what they get. Implementations must be safe for concurrent
// use: the inner shards of nested sharding are read in parallel.
type RangeReader interface {
	// Read returns the whole stored chunk.
	Read(ctx context.Context) ([]byte, error)
	// ReadRange returns n bytes from offset off.
	ReadRange(ctx context.Context, off, n int64) ([]byte, error)
	// ReadSuffix returns the last n bytes.
	ReadSuffix(ctx context.Context, n int64) ([]byte, error)
}

// ReaderInto is implemented by RangeReaders that read part of the stored
// chunk straight into the caller's buffer and know the chunk's size (a
// file): ReadInto fills p from offset off and returns the chunk's size; a
// chunk shorter than off+len(p) is an error matching io.ErrUnexpectedEOF.
type ReaderInto interface {
	ReadInto(ctx context.Context, p []byte, off int64) (size int64, err error)
}

// Memo is implemented by RangeReaders that keep, for the later partial
// decodes of the same chunk, what a decoder made of it: part 0 is the
// chunk's structure, read before any part could decode (a shard's index);
// part k > 0 is piece k-1 of the chunk, decoded (a shard's inner chunk,
// which a random reader's next read may need again). Remember returns
// what it keeps of part, or calls load once for all concurrent callers and
// keeps what load returns. The engine keeps it in its chunk cache, bounded
// in bytes.
type Memo interface {
	Remember(ctx context.Context, part int64, load func(context.Context) (Memoized, error)) (Memoized, error)
}

// Memoized is what a Memo keeps: immutable, safe for concurrent use, and
// of Size bytes of memory.
type Memoized interface {
	Size() int
}

// PartialDecoder is implemented by codecs that decode part of a chunk
// without decoding all of it, from what a RangeReader reads of the stored
// chunk: sharding (the shard's index, then the inner chunks the parts
// need), bytes (a part of the decoded chunk is the same part of the
// stored one) and Blosc (only the blocks that hold the parts). A Pipeline
// reaches them through DecodeParts, as zarrs' partial decoders and
// zarr-python's ArrayBytesCodecPartialDecodeMixin do.
type PartialDecoder interface {
	// DecodeParts fills each dsts[i] with the bytes of the decoded chunk
	// from byte offset offs[i] on. decoded describes the decoded chunk
	// (fixed-size elements); for a bytes→bytes codec, which sees bytes,
	// only its ByteSize counts: the size of the codec's decoded output.
	// Parts lie inside the decoded chunk; the caller checks them.
	DecodeParts(ctx context.Context, r RangeReader, decoded ArraySpec, dsts [][]byte, offs []int64) error
}

// Parts says how a Pipeline decodes parts of its chunks.
type Parts int

const (
	// PartsNone: only whole chunks decode.
	PartsNone Parts = iota
	// PartsDecoded: a part decodes from part of the stored chunk (a
	// shard's index and inner chunks) or from fewer steps of decoding (a
	// Blosc chunk's blocks); whole chunks, once decoded, serve later reads
	// better when most of the chunk is needed.
	PartsDecoded
	// PartsStored: the decoded chunk is the stored chunk, byte for byte
	// (the little-endian bytes codec alone), so a part is a range of the
	// stored value: reading it decodes nothing.
	PartsStored
)

// Parts reports how the pipeline decodes parts of its chunks: through
// the PartialDecoder of its array→bytes codec (sharding, bytes), or of
// its one bytes→bytes codec after the little-endian bytes codec (Blosc),
// for chunks of fixed-size elements and no array→array codec.
func (p *Pipeline) Parts() Parts {
	if len(p.arrayToArray) > 0 || p.specs[0].ByteSize() < 0 {
		return PartsNone
	}
	b, isBytes := p.arrayToBytes.(BytesCodec)
	switch {
	case len(p.bytesToBytes) == 0 && isBytes:
		if b.Big {
			return PartsNone
		}
		return PartsStored
	case len(p.bytesToBytes) == 0:
		if _, ok := p.arrayToBytes.(PartialDecoder); ok {
			return PartsDecoded
		}
	case len(p.bytesToBytes) == 1 && isBytes && !b.Big:
		if _, ok := p.bytesToBytes[0].(PartialDecoder); ok {
			return PartsDecoded
		}
	}
	return PartsNone
}

// DecodeParts fills each dsts[i] with the bytes of the decoded chunk r
// reads from byte offset offs[i] on (see PartialDecoder); call it only
// when Parts is not PartsNone. A missing chunk is r's error, matching
// fs.ErrNotExist; a chunk that does not decode to the pipeline's size is
// an error matching ErrCorrupt.
func (p *Pipeline) DecodeParts(ctx context.Context, r RangeReader, dsts [][]byte, offs []int64) error {
	spec := p.specs[0]
	if len(dsts) != len(offs) {
		return fmt.Errorf("codec pipeline: %d parts at %d offsets", len(dsts), len(offs))
	}
	size := int64(spec.ByteSize())
	for i, dst := range dsts {
		if offs[i] < 0 || offs[i] > size || int64(len(dst)) > size-offs[i] {
			return fmt.Errorf("codec pipeline: part of %d bytes at %d outside the chunk of %d", len(dst), offs[i], size)
		}
	}
	var d PartialDecoder
	switch p.Parts() {
	case PartsNone:
		return fmt.Errorf("codec pipeline: chain %s cannot decode part of a chunk", p.names())
	case PartsStored:
		d = p.arrayToBytes.(PartialDecoder)
	default:
		if len(p.bytesToBytes) == 1 {
			// The little-endian bytes codec's output is its input: the
			// parts are the same bytes of what the bytes→bytes codec decodes.
			d = p.bytesToBytes[0].(PartialDecoder)
		} else {
			d = p.arrayToBytes.(PartialDecoder)
		}
	}
	return d.DecodeParts(ctx, r, spec, dsts, offs)
}

// partsSpan returns the smallest byte range [first, last) holding every
// part.
func partsSpan(dsts [][]byte, offs []int64) (first, last int64) {
	first, last = offs[0], offs[0]+int64(len(dsts[0]))
	for i, off := range offs[1:] {
		first, last = min(first, off), max(last, off+int64(len(dsts[i+1])))
	}
	return first, last
}
