package blosc

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/klauspost/compress/snappy"
	"github.com/pierrec/lz4/v4"

	"github.com/zarrfs/zarrfs/internal/inflate"
	"github.com/zarrfs/zarrfs/internal/zstd"
)

// Compressor is an inner codec, numbered as c-blosc numbers its cnames.
type Compressor int

// The inner codecs of c-blosc 1.x.
const (
	BloscLZ Compressor = 0
	LZ4     Compressor = 1
	LZ4HC   Compressor = 2
	Snappy  Compressor = 3
	Zlib    Compressor = 4
	Zstd    Compressor = 5
)

var compressorNames = [...]string{"blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd"}

// String returns the cname of c.
func (c Compressor) String() string {
	if c >= 0 && int(c) < len(compressorNames) {
		return compressorNames[c]
	}
	return "compressor(" + strconv.Itoa(int(c)) + ")"
}

// ParseCompressor returns the Compressor named cname ("lz4", "zstd", …).
func ParseCompressor(cname string) (Compressor, error) {
	for i, n := range compressorNames {
		if n == cname {
			return Compressor(i), nil
		}
	}
	return 0, unsupportedf("cname %q", cname)
}

// format returns the codec format c writes in the header flags.
func (c Compressor) format() uint8 {
	switch c {
	case LZ4, LZ4HC:
		return formatLZ4
	case Snappy:
		return formatSnappy
	case Zlib:
		return formatZlib
	case Zstd:
		return formatZstd
	}
	return formatBloscLZ
}

// hcr reports whether c is meant for high compression ratios (c-blosc's
// HCR), which doubles its block size.
func (c Compressor) hcr() bool { return c == LZ4HC || c == Zlib || c == Zstd }

// decompressStream decodes one stream written by c into dst, which it must
// fill exactly.
func decompressStream(c Compressor, dst, src []byte) error {
	// Decoders may use dst's spare capacity (zstd does): hide the bytes
	// that belong to other streams and blocks.
	dst = dst[:len(dst):len(dst)]
	switch c {
	case BloscLZ:
		return bloscLZDecompress(dst, src)
	case LZ4:
		n, err := lz4.UncompressBlock(src, dst)
		if err != nil {
			return fmt.Errorf("lz4: %w", err)
		}
		if n != len(dst) {
			return fmt.Errorf("lz4: decoded %d bytes, want %d", n, len(dst))
		}
	case Snappy:
		n, err := snappy.DecodedLen(src)
		if err != nil {
			return fmt.Errorf("snappy: %w", err)
		}
		if n != len(dst) {
			return fmt.Errorf("snappy: stream holds %d bytes, want %d", n, len(dst))
		}
		if _, err := snappy.DecodeStrict(dst, src); err != nil {
			return fmt.Errorf("snappy: %w", err)
		}
	case Zlib:
		return zlibDecompress(dst, src)
	case Zstd:
		if err := zstd.DecodeInto(dst, src); err != nil {
			return fmt.Errorf("zstd: %w", err)
		}
	default:
		return fmt.Errorf("inner codec %v", c)
	}
	return nil
}

// zlibDecompress decodes the zlib stream src, which must fill dst.
func zlibDecompress(dst, src []byte) error {
	n, err := inflate.Zlib(dst, src)
	switch {
	case errors.Is(err, inflate.ErrTooLong):
		return fmt.Errorf("zlib: stream holds more than %d bytes", len(dst))
	case err != nil:
		return fmt.Errorf("zlib: %w after %d bytes", err, n)
	case n != len(dst):
		return fmt.Errorf("zlib: decoded %d bytes, want %d", n, len(dst))
	}
	return nil
}
