// Package zstd decodes Zstandard frames (RFC 8878) into a buffer of exactly
// the size the caller expects, as a Zarr chunk's or a Blosc stream's
// decoder knows it: DecodeInto decodes the frames it is faster on itself
// and hands the others to github.com/klauspost/compress.
//
// It exists beside klauspost/compress because that decoder copies
// overlapping matches with offsets under 16 one byte at a time, which makes
// it the slower of the two on the byte planes of Blosc's shuffled floats
// (long runs of the same bytes; the figures are in BENCH.md).
// `go test -run NONE -bench Decode -cpu 1 ./internal/zstd/` shows the gap,
// kind of frame by kind, against klauspost and against numcodecs' C zstd.
package zstd

import (
	"fmt"
	"runtime"
	"sync"

	kzstd "github.com/klauspost/compress/zstd"
)

// DecodeInto decodes the zstd frame src into dst, which it must fill
// exactly. A frame that declares more than len(dst) bytes fails before it
// is decoded, and no frame decodes past len(dst). It never writes outside
// dst[:len(dst)] and keeps neither slice; on failure dst's contents are
// undefined.
func DecodeInto(dst, src []byte) error {
	var h kzstd.Header
	if err := h.Decode(src); err != nil {
		return fmt.Errorf("frame header: %w", err)
	}
	if h.HasFCS && h.FrameContentSize > uint64(len(dst)) {
		return fmt.Errorf("frame declares %d bytes, want %d", h.FrameContentSize, len(dst))
	}
	dst = dst[:len(dst):len(dst)]
	if decodeFrame(dst, src) {
		return nil
	}
	d, err := general()
	if err != nil {
		return err
	}
	// The decoder appends within the capacity it is given and fails
	// rather than grow it (WithDecodeAllCapLimit).
	out, err := d.DecodeAll(src, dst[:0])
	if err != nil {
		return err
	}
	if len(out) != len(dst) || len(out) > 0 && &out[0] != &dst[0] {
		return fmt.Errorf("decoded %d bytes, want %d", len(out), len(dst))
	}
	return nil
}

// general is klauspost/compress's decoder, shared (DecodeAll is safe for
// concurrent use), for the frames decodeFrame leaves. Bounded by the
// capacity of its destination, a frame cannot make it allocate more than
// the size the caller expects.
var general = sync.OnceValues(func() (*kzstd.Decoder, error) {
	d, err := kzstd.NewReader(nil, kzstd.WithDecodeAllCapLimit(true),
		kzstd.WithDecoderConcurrency(runtime.GOMAXPROCS(0)))
	if err != nil {
		return nil, fmt.Errorf("zstd decoder: %w", err)
	}
	return d, nil
})
