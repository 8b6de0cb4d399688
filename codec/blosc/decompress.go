package blosc

import (
	"encoding/binary"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/zarrfs/zarrfs/internal/cores"
)

// ParallelThreshold is the number of decoded bytes from which Decompress
// and DecompressRange decode blocks on several goroutines.
const ParallelThreshold = 1 << 20

// DecodedSize returns the decoded size a chunk's header claims, after
// checking the header (ParseHeader). It allocates nothing.
func DecodedSize(chunk []byte) (int, error) {
	h, err := ParseHeader(chunk)
	if err != nil {
		return 0, err
	}
	return h.NBytes, nil
}

// Decompress decodes chunk into dst, whose length must be the decoded size
// the header claims. It checks the header before reading anything else and
// fails with an error matching ErrCorrupt on a size mismatch or any
// inconsistency in the chunk, including block starts that are out of range
// or overlap. Chunks of ParallelThreshold bytes or more are decoded on
// several goroutines.
func Decompress(dst, chunk []byte) error {
	h, err := ParseHeader(chunk)
	if err != nil {
		return err
	}
	if h.NBytes != len(dst) {
		return corruptf("chunk decodes to %d bytes, want %d", h.NBytes, len(dst))
	}
	return decompress(h, dst, chunk[:h.CBytes], 0, true)
}

// DecompressRange decodes bytes [off, off+len(dst)) of the decoded chunk
// into dst, decoding only the blocks that cover them. Blocks the range
// covers only partly are decoded into scratch space of one block (two with
// a shuffle filter), whose size the header sets: callers that do not trust
// the chunk check DecodedSize against the size they expect first. Block
// starts are checked for range but, unlike Decompress, not for overlap
// with blocks outside the range.
func DecompressRange(dst, chunk []byte, off int) error {
	h, err := ParseHeader(chunk)
	if err != nil {
		return err
	}
	if off < 0 || off > h.NBytes || len(dst) > h.NBytes-off {
		return corruptf("range [%d, %d+%d) outside the %d decoded bytes", off, off, len(dst), h.NBytes)
	}
	return decompress(h, dst, chunk[:h.CBytes], off, false)
}

// scratch is one goroutine's working memory.
type scratch struct {
	tmp    []byte // streams before unshuffling
	block  []byte // a whole block, for blocks a range covers partly
	planes []byte // bit-unshuffled byte planes, made when first needed

	streams [maxSplits][]byte // a block's streams, for unshuffleStreams
}

// planeBuf returns s.planes with at least n bytes.
func (s *scratch) planeBuf(n int) []byte {
	if cap(s.planes) < n {
		s.planes = make([]byte, n)
	}
	return s.planes[:n]
}

var scratchPool sync.Pool

func getScratch(blockSize int) *scratch {
	s, _ := scratchPool.Get().(*scratch)
	if s == nil {
		s = &scratch{}
	}
	if cap(s.tmp) < blockSize {
		s.tmp = make([]byte, blockSize)
		s.block = make([]byte, blockSize)
		s.planes = nil
	}
	return s
}

// extent is the part of the chunk one block's streams occupy.
type extent struct{ start, end int }

func decompress(h Header, dst, chunk []byte, off int, whole bool) error {
	if len(dst) == 0 {
		return nil
	}
	if h.Memcpyed() {
		copy(dst, chunk[HeaderSize+off:])
		return nil
	}
	c, err := h.Compressor()
	if err != nil {
		return err
	}
	d := blockDecoder{h: h, c: c, chunk: chunk, nblocks: h.NumBlocks()}
	first, last := off/h.BlockSize, (off+len(dst)-1)/h.BlockSize
	var extents []extent
	if whole {
		extents = make([]extent, d.nblocks)
	}
	run := func(j int, s *scratch) error {
		bstart := j * h.BlockSize
		bsize := min(h.BlockSize, h.NBytes-bstart)
		lo, hi := max(off, bstart), min(off+len(dst), bstart+bsize)
		out := s.block[:bsize]
		if lo == bstart && hi == bstart+bsize {
			out = dst[bstart-off : bstart-off+bsize]
		}
		e, err := d.decode(j, out, s.tmp[:bsize], s)
		if err != nil {
			return err
		}
		if extents != nil {
			extents[j] = e
		}
		if &out[0] == &s.block[0] {
			copy(dst[lo-off:hi-off], out[lo-bstart:hi-bstart])
		}
		return nil
	}
	workers, done := 1, func() {}
	if len(dst) >= ParallelThreshold {
		workers, done = cores.Split(last - first + 1)
	}
	defer done()
	if workers < 2 {
		s := getScratch(h.BlockSize)
		defer scratchPool.Put(s)
		for j := first; j <= last; j++ {
			if err := run(j, s); err != nil {
				return err
			}
		}
	} else {
		var (
			next    atomic.Int64
			failed  atomic.Bool
			errOnce sync.Once
			firstEr error
			wg      sync.WaitGroup
		)
		next.Store(int64(first))
		for range workers {
			wg.Go(func() {
				s := getScratch(h.BlockSize)
				defer scratchPool.Put(s)
				for !failed.Load() {
					j := int(next.Add(1) - 1)
					if j > last {
						return
					}
					if err := run(j, s); err != nil {
						failed.Store(true)
						errOnce.Do(func() { firstEr = err })
						return
					}
				}
			})
		}
		wg.Wait()
		if firstEr != nil {
			return firstEr
		}
	}
	if extents != nil {
		slices.SortFunc(extents, func(a, b extent) int { return a.start - b.start })
		for i := 1; i < len(extents); i++ {
			if extents[i].start < extents[i-1].end {
				return corruptf("blocks overlap at byte %d", extents[i].start)
			}
		}
	}
	return nil
}

// blockDecoder decodes the blocks of one chunk.
type blockDecoder struct {
	h       Header
	c       Compressor
	chunk   []byte
	nblocks int
}

// decode decodes block j into out (the block's exact size) using tmp (the
// same size) and sc's plane buffer, and returns the part of the chunk its
// streams occupy.
func (d *blockDecoder) decode(j int, out, tmp []byte, sc *scratch) (extent, error) {
	h := d.h
	dataStart := HeaderSize + 4*d.nblocks
	start := int(int32(binary.LittleEndian.Uint32(d.chunk[HeaderSize+4*j:])))
	if start < dataStart || start > h.CBytes-4 {
		return extent{}, corruptf("block %d starts at %d, outside [%d, %d]", j, start, dataStart, h.CBytes-4)
	}
	bsize := len(out)
	ts := h.TypeSize
	leftover := bsize < h.BlockSize
	doShuffle := h.Flags&flagShuffle != 0 && ts > 1
	doBitShuffle := !doShuffle && h.Flags&flagBitShuffle != 0 && bsize >= ts
	nsplits := 1
	if h.Flags&flagDontSplit == 0 && ts <= maxSplits && bsize/ts >= minBufferSize && !leftover {
		nsplits = ts
		if bsize%ts != 0 {
			return extent{}, corruptf("block size %d is not a multiple of typesize %d", bsize, ts)
		}
	}
	streams := out
	if doShuffle || doBitShuffle {
		streams = tmp
	}
	neblock := bsize / nsplits
	// With a byte shuffle of split streams and vector kernels, streams
	// stored raw are unshuffled from the chunk, not copied first.
	var direct [][]byte
	if doShuffle && nsplits == ts && haveSIMD && (ts == 2 || ts == 4 || ts == 8) {
		direct = sc.streams[:0]
	}
	pos := start
	for k := range nsplits {
		if pos > h.CBytes-4 {
			return extent{}, corruptf("block %d stream %d: size at %d past the end", j, k, pos)
		}
		cbytes := int(int32(binary.LittleEndian.Uint32(d.chunk[pos:])))
		pos += 4
		if cbytes < 0 || cbytes > h.CBytes-pos {
			return extent{}, corruptf("block %d stream %d: %d bytes at %d overrun the chunk", j, k, cbytes, pos)
		}
		s := streams[k*neblock : (k+1)*neblock]
		src := d.chunk[pos : pos+cbytes]
		if cbytes == neblock {
			if direct != nil {
				s = src
			} else {
				copy(s, src)
			}
		} else if err := decompressStream(d.c, s, src); err != nil {
			return extent{}, corruptf("block %d stream %d: %w", j, k, err)
		}
		pos += cbytes
		if direct != nil {
			direct = append(direct, s)
		}
	}
	switch {
	case direct != nil:
		unshuffleStreams(out, direct, neblock)
		clear(direct) // the pooled scratch must not keep the chunk alive
	case doShuffle:
		unshuffle(out, tmp, ts)
	case doBitShuffle:
		var planes []byte
		if ts > 1 && haveSIMD {
			planes = sc.planeBuf(bsize)
		}
		bitunshuffleBuf(out, tmp, planes, ts)
	}
	return extent{start, pos}, nil
}
