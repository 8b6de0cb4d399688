package codec

import (
	"errors"
	"io"
)

// UnknownSizeCap is the one bound on what a decode may produce, or
// allocate, when the decoded size is not known in advance: the output of
// the streaming decoders (gzip, zlib, bz2, lzma), the size checks of the
// others (Blosc and lz4 headers, xz indexes, LZMA dictionaries, filters),
// a shard's index and its variable-length elements. That is the chunks of
// variable-length arrays (vlen-utf8, vlen-bytes, json2, msgpack2), where
// no header or shape can say how large a chunk is. Decoding such a chunk
// allocates at most about twice this (readUnknown), so a decompression
// bomb in a string array costs at most 512 MiB, once.
//
// 256 MiB is far above what writers produce: zarr-python sizes the chunks
// of an object array as if each element took 8 bytes (guess_chunks: 256
// KiB × 2^log10(MB), at most 64 MiB), so a string array of 10^9 elements
// gets chunks of about half a million elements, some 50 MiB at 100 bytes
// a string; and the 64 MiB ceiling itself is 8 Mi elements, which fit
// with strings of up to 28 bytes. Fixed-size chunks are not affected:
// their decoders are told the exact size.
const UnknownSizeCap = 256 << 20

// readExact reads the whole decoded stream r, which must yield exactly size
// bytes (or, when size < 0, at most UnknownSizeCap bytes). It never reads
// more than one byte past the limit, so a decompression bomb costs at most
// the size the caller expects. name is the codec, for messages.
func readExact(r io.Reader, name string, size int) ([]byte, error) {
	if size < 0 {
		return readUnknown(r, name, UnknownSizeCap)
	}
	out := make([]byte, size)
	if err := readExactInto(r, name, out); err != nil {
		return nil, err
	}
	return out, nil
}

// readExactInto is readExact of len(dst) bytes into dst: the stream r
// must yield exactly that many. It reads one byte past them, which makes
// the decompressor check its trailer and shows whether the stream is
// longer than it should be.
func readExactInto(r io.Reader, name string, dst []byte) error {
	n, err := io.ReadFull(r, dst)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return Corruptf(name, "decoded %d bytes, want %d", n, len(dst))
		}
		return Corruptf(name, "after %d bytes: %w", n, err)
	}
	var one [1]byte
	switch m, err := io.ReadFull(r, one[:]); {
	case m > 0:
		return Corruptf(name, "decodes to more than %d bytes", len(dst))
	case errors.Is(err, io.EOF):
		return nil
	default:
		return Corruptf(name, "%w", err)
	}
}

// readUnknownStart is the first buffer of readUnknown: most vlen chunks
// decode to some KiB or MiB, and a larger one costs a dozen doublings.
const readUnknownStart = 64 << 10

// readUnknown reads the whole of r, which must yield at most limit bytes.
// Unlike io.ReadAll, whose buffer grows past any limit (a 1 GiB bound cost
// 2.6 GiB of allocation), the buffer doubles only up to limit+1 bytes: the
// one byte past the limit shows the stream is too long. All the buffers
// together come to at most twice the final one, and at most 2 × limit + 1
// bytes however long the stream.
func readUnknown(r io.Reader, name string, limit int) ([]byte, error) {
	buf := make([]byte, 0, min(readUnknownStart, limit+1))
	for {
		if len(buf) == cap(buf) {
			if len(buf) > limit {
				return nil, Corruptf(name, "decodes to more than %d bytes", limit)
			}
			// Double, or go straight to limit+1 once the buffer is past
			// a quarter of the limit: the buffers before the last then
			// come to at most the limit (doubling up to the limit, then
			// one byte more, would cost a third buffer of that size).
			size := 2 * cap(buf)
			if cap(buf) > limit/4 {
				size = limit + 1
			}
			next := make([]byte, len(buf), size)
			copy(next, buf)
			buf = next
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, Corruptf(name, "after %d bytes: %w", len(buf), err)
		}
	}
	if len(buf) > limit {
		return nil, Corruptf(name, "decodes to more than %d bytes", limit)
	}
	return buf, nil
}

// checkSize fails with a *CorruptError unless n is the decoded size the
// caller wants (any size up to UnknownSizeCap when want < 0).
func checkSize(name string, n, want int) error {
	if want >= 0 && n != want {
		return Corruptf(name, "decoded %d bytes, want %d", n, want)
	}
	if want < 0 && n > UnknownSizeCap {
		return Corruptf(name, "decodes to more than %d bytes", UnknownSizeCap)
	}
	return nil
}

// checkElems is checkSize for n elements of size bytes each, checked
// before n*size can overflow.
func checkElems(name string, n, size, want int) error {
	limit := want
	if want < 0 {
		limit = UnknownSizeCap
	}
	if n > limit/size {
		return checkSize(name, limit+1, want)
	}
	return checkSize(name, n*size, want)
}
