package blosc

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/zarrfs/zarrfs/internal/cores"
)

// Options configure Compress.
type Options struct {
	Compressor Compressor
	// Level is the compression level, 0 to 9; 0 stores the data raw.
	Level   int
	Shuffle Shuffle
	// TypeSize is the element size in bytes the shuffle filters and the
	// split into streams work with; at least 1. As in c-blosc, sizes above
	// 255 are treated as 1.
	TypeSize int
	// BlockSize forces a block size in bytes; 0 chooses it as c-blosc 1.x
	// does for the compressor, level and type size.
	BlockSize int
}

const l1 = 32 << 10 // c-blosc's assumed L1 cache size

// splitBlock reports whether c-blosc (in its default forward-compatible
// split mode) splits blocks of blockSize bytes into typesize streams.
func splitBlock(c Compressor, typeSize, blockSize int) bool {
	return c != Zstd && typeSize <= maxSplits && blockSize/typeSize >= minBufferSize
}

// computeBlockSize chooses the block size as c-blosc 1.21's
// compute_blocksize does.
func computeBlockSize(c Compressor, clevel, typeSize, nbytes, forced int) int {
	if nbytes < typeSize {
		return 1
	}
	bs := nbytes
	switch {
	case forced != 0:
		bs = min(max(forced, minBufferSize), maxBlockSize)
	case nbytes >= l1:
		bs = l1
		if c.hcr() {
			bs *= 2
		}
		switch clevel {
		case 0:
			bs /= 4
		case 1:
			bs /= 2
		case 2:
		case 3:
			bs *= 2
		case 4, 5:
			bs *= 4
		case 6, 7, 8:
			bs *= 8
		case 9:
			bs *= 8
			if c.hcr() {
				bs *= 2
			}
		}
	}
	if clevel > 0 && splitBlock(c, typeSize, bs) {
		bs = min(bs, 1<<18) * typeSize
		bs = min(max(bs, 1<<16), 1<<20)
	}
	bs = min(bs, nbytes)
	if bs > typeSize {
		bs = bs / typeSize * typeSize
	}
	return bs
}

// Compress returns src as a Blosc1 chunk, laid out as c-blosc 1.21 lays it
// out: the block size it would choose, its split rule, raw streams where
// compression does not help and a memcpyed chunk when the data does not
// compress into len(src)+16 bytes (or is shorter than 128 bytes, or Level
// is 0). c-blosc 1.x decodes the result to src.
func Compress(src []byte, o Options) ([]byte, error) {
	if o.Level < 0 || o.Level > 9 {
		return nil, fmt.Errorf("blosc: clevel %d outside 0..9", o.Level)
	}
	if o.Shuffle < NoShuffle || o.Shuffle > BitShuffle {
		return nil, fmt.Errorf("blosc: shuffle %d outside 0..2", o.Shuffle)
	}
	if o.Compressor < BloscLZ || o.Compressor > Zstd {
		return nil, unsupportedf("compressor %v", o.Compressor)
	}
	if o.TypeSize < 1 {
		return nil, fmt.Errorf("blosc: typesize %d, want at least 1", o.TypeSize)
	}
	if o.BlockSize < 0 {
		return nil, fmt.Errorf("blosc: block size %d", o.BlockSize)
	}
	if len(src) > MaxBufferSize {
		return nil, fmt.Errorf("blosc: %d bytes exceed the Blosc1 limit of %d", len(src), MaxBufferSize)
	}
	ts := o.TypeSize
	if ts > maxTypeSize {
		ts = 1
	}
	nbytes := len(src)
	bs := computeBlockSize(o.Compressor, o.Level, ts, nbytes, o.BlockSize)
	flags := o.Compressor.format() << 5
	switch o.Shuffle {
	case ByteShuffle:
		flags |= flagShuffle
	case BitShuffle:
		flags |= flagBitShuffle
	}
	dontSplit := !splitBlock(o.Compressor, ts, bs)
	if dontSplit {
		flags |= flagDontSplit
	}
	header := func(out []byte, flags uint8, cbytes int) {
		out[0], out[1], out[2], out[3] = formatVersion, 1, flags, byte(ts)
		binary.LittleEndian.PutUint32(out[4:], uint32(nbytes))
		binary.LittleEndian.PutUint32(out[8:], uint32(bs))
		binary.LittleEndian.PutUint32(out[12:], uint32(cbytes))
	}
	if o.Level > 0 && nbytes >= minBufferSize {
		e := blockEncoder{o: o, ts: ts, flags: flags, dontSplit: dontSplit, maxBytes: nbytes + HeaderSize}
		if out, ok := e.compress(src, bs); ok {
			header(out, flags, len(out))
			return out, nil
		}
	}
	out := make([]byte, HeaderSize+nbytes)
	header(out, flags|flagMemcpyed, len(out))
	copy(out[HeaderSize:], src)
	return out, nil
}

// blockEncoder compresses the blocks of one chunk.
type blockEncoder struct {
	o         Options
	ts        int
	flags     uint8
	dontSplit bool
	maxBytes  int // the chunk may not exceed this (c-blosc's destsize)
	tmp       []byte
	cbuf      []byte
	table     []int32                // BloscLZ hash table
	lz4       *lz4.CompressorCCompat // reused: its tables are big
	lz4hc     *lz4.CompressorHC
}

// compress writes the block table and blocks; ok is false when the chunk
// would exceed maxBytes. Buffers of ParallelThreshold bytes or more are
// compressed on several goroutines, each block within its own budget.
func (e *blockEncoder) compress(src []byte, bs int) (out []byte, ok bool) {
	nblocks := (len(src) + bs - 1) / bs
	if HeaderSize+4*nblocks > e.maxBytes {
		return nil, false
	}
	if workers := min(cores.Workers(), nblocks); len(src) >= ParallelThreshold && workers > 1 {
		return e.compressParallel(src, bs, nblocks, workers)
	}
	out = make([]byte, HeaderSize+4*nblocks, e.maxBytes)
	e.alloc(bs)
	for j := range nblocks {
		block := src[j*bs : min((j+1)*bs, len(src))]
		binary.LittleEndian.PutUint32(out[HeaderSize+4*j:], uint32(len(out)))
		if out, ok = e.block(out, block, len(block) < bs); !ok {
			return nil, false
		}
	}
	return out, true
}

// alloc gives e its scratch space for blocks of bs bytes.
func (e *blockEncoder) alloc(bs int) {
	e.tmp = make([]byte, bs)
	e.cbuf = make([]byte, max(snappy.MaxEncodedLen(bs), lz4.CompressBlockBound(bs)))
	switch e.o.Compressor {
	case BloscLZ:
		e.table = make([]int32, 1<<12)
	case LZ4:
		e.lz4 = &lz4.CompressorCCompat{Acceleration: 10 - e.o.Level}
	case LZ4HC:
		e.lz4hc = &lz4.CompressorHC{Level: lz4.Level1 << (e.o.Level - 1)}
	}
}

// compressParallel compresses each block into its own buffer, limited to
// the block stored raw, then joins them in order.
func (e *blockEncoder) compressParallel(src []byte, bs, nblocks, workers int) ([]byte, bool) {
	blocks := make([][]byte, nblocks)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		w := *e
		w.alloc(bs)
		wg.Go(func() {
			for {
				j := int(next.Add(1) - 1)
				if j >= nblocks {
					return
				}
				block := src[j*bs : min((j+1)*bs, len(src))]
				nsplits := 1
				if !w.dontSplit && len(block) == bs {
					nsplits = w.ts
				}
				w.maxBytes = 4*nsplits + len(block) // always fits: raw streams
				blocks[j], _ = w.block(make([]byte, 0, w.maxBytes), block, len(block) < bs)
			}
		})
	}
	wg.Wait()
	size := HeaderSize + 4*nblocks
	for _, b := range blocks {
		size += len(b)
	}
	if size > e.maxBytes {
		return nil, false
	}
	out := make([]byte, HeaderSize+4*nblocks, size)
	for j, b := range blocks {
		binary.LittleEndian.PutUint32(out[HeaderSize+4*j:], uint32(len(out)))
		out = append(out, b...)
	}
	return out, true
}

// block appends one block's streams to out.
func (e *blockEncoder) block(out, block []byte, leftover bool) ([]byte, bool) {
	ts := e.ts
	data := block
	switch {
	case e.flags&flagShuffle != 0 && ts > 1:
		data = e.tmp[:len(block)]
		shuffle(data, block, ts)
	case e.flags&flagBitShuffle != 0 && len(block) >= ts:
		data = e.tmp[:len(block)]
		bitshuffle(data, block, ts)
	}
	nsplits := 1
	if !e.dontSplit && !leftover {
		nsplits = ts
	}
	neblock := len(block) / nsplits
	for k := range nsplits {
		stream := data[k*neblock : (k+1)*neblock]
		pos := len(out) + 4
		maxOut := neblock
		if e.o.Compressor == Snappy {
			maxOut = snappy.MaxEncodedLen(neblock)
		}
		if pos+maxOut > e.maxBytes {
			if maxOut = e.maxBytes - pos; maxOut <= 0 {
				return nil, false
			}
		}
		c := e.stream(stream, maxOut)
		if len(c) == 0 || len(c) > maxOut || len(c) == neblock {
			if pos+neblock > e.maxBytes {
				return nil, false
			}
			c = stream
		}
		out = binary.LittleEndian.AppendUint32(out, uint32(len(c)))
		out = append(out, c...)
	}
	return out, true
}

// stream compresses one stream, returning nil when it does not fit maxOut.
func (e *blockEncoder) stream(src []byte, maxOut int) []byte {
	level := e.o.Level
	switch e.o.Compressor {
	case BloscLZ:
		return bloscLZCompress(e.cbuf, src, level, maxOut, e.table)
	case LZ4:
		n, err := e.lz4.CompressBlock(src, e.cbuf[:min(maxOut, len(e.cbuf))])
		if err != nil {
			return nil
		}
		return e.cbuf[:n]
	case LZ4HC:
		n, err := e.lz4hc.CompressBlock(src, e.cbuf[:min(maxOut, len(e.cbuf))])
		if err != nil {
			return nil
		}
		return e.cbuf[:n]
	case Snappy:
		return snappy.Encode(e.cbuf, src)
	case Zlib:
		w, err := zlibWriter(level)
		if err != nil {
			return nil
		}
		defer zlibWriters[level].Put(w)
		var buf bytes.Buffer
		buf.Grow(maxOut)
		w.Reset(&buf)
		if _, err := w.Write(src); err != nil {
			return nil
		}
		if err := w.Close(); err != nil {
			return nil
		}
		return buf.Bytes()
	case Zstd:
		enc, err := zstdEncoder(level)
		if err != nil {
			return nil
		}
		return enc.EncodeAll(src, e.cbuf[:0])
	}
	return nil
}

var zlibWriters [10]sync.Pool

func zlibWriter(level int) (*zlib.Writer, error) {
	if w, ok := zlibWriters[level].Get().(*zlib.Writer); ok {
		return w, nil
	}
	return zlib.NewWriterLevel(nil, level)
}

// zstdLevel maps a Blosc clevel to a Zstandard level as c-blosc does.
func zstdLevel(clevel int) int {
	switch clevel {
	case 8:
		return 20
	case 9:
		return 22
	}
	return clevel*2 - 1
}

var zstdEncoders [10]func() (*zstd.Encoder, error)

func init() {
	for level := range zstdEncoders {
		zstdEncoders[level] = sync.OnceValues(func() (*zstd.Encoder, error) {
			return zstd.NewWriter(nil,
				zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(zstdLevel(level))),
				zstd.WithEncoderCRC(false),
				zstd.WithLowerEncoderMem(true))
		})
	}
}

func zstdEncoder(level int) (*zstd.Encoder, error) { return zstdEncoders[level]() }
