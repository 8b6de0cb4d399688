package kerchunk

import (
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// Compressed JSON reference files: fsspec opens refs.json.gz,
// refs.json.bz2, refs.json.zst and refs.json.xz with their compression
// inferred from the name (fsspec.utils.infer_compression), and kerchunk's
// users write them so. zarrfs tells them by their content, the
// compression's magic bytes, whatever their name, and decompresses them
// within a bound on the bytes written out (a small file that expands
// without end is refused, not followed).

// compressions are the magic bytes of the compressions read.
var compressions = []struct {
	name  string
	magic []byte
	open  func(io.Reader) (io.Reader, error)
}{
	{"gzip", []byte{0x1f, 0x8b}, func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) }},
	{"bzip2", []byte("BZh"), func(r io.Reader) (io.Reader, error) { return bzip2.NewReader(r), nil }},
	{"zstd", []byte{0x28, 0xb5, 0x2f, 0xfd}, func(r io.Reader) (io.Reader, error) {
		d, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(maxWindow))
		if err != nil {
			return nil, err
		}
		return d.IOReadCloser(), nil
	}},
	{"xz", []byte{0xfd, '7', 'z', 'X', 'Z', 0}, func(r io.Reader) (io.Reader, error) { return xz.NewReader(r) }},
}

// maxWindow bounds a zstd frame's window (the memory it asks for): 128
// MiB, what `zstd --long` uses.
const maxWindow = 1 << 27

// Compression returns the name of the compression data starts with
// ("gzip", "bzip2", "zstd", "xz"), or "".
func Compression(data []byte) string {
	for _, c := range compressions {
		if bytes.HasPrefix(data, c.magic) {
			return c.name
		}
	}
	return ""
}

// ErrTooLarge matches the error of Decompress for data that expands past
// its bound.
var ErrTooLarge = errors.New("kerchunk: decompresses to more than the bound")

// Decompress returns data decompressed when it starts with a
// compression's magic bytes (every concatenated member or frame), else
// data itself. At most limit bytes come out: past that it fails with an
// error matching ErrTooLarge.
func Decompress(data []byte, limit int) ([]byte, error) {
	return decompress(data, limit, true)
}

// Head returns the first n bytes (or fewer) of data decompressed, as
// Decompress would return them, or nil when they do not decompress: a
// look at what a compressed file holds before it is read whole.
func Head(data []byte, n int) []byte {
	b, _ := decompress(data, n, false)
	return b
}

// decompress is Decompress; with strict false it returns the bytes
// decompressed up to limit, or up to an error, without the error.
func decompress(data []byte, limit int, strict bool) ([]byte, error) {
	for _, c := range compressions {
		if !bytes.HasPrefix(data, c.magic) {
			continue
		}
		r, err := c.open(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		if cl, ok := r.(io.Closer); ok {
			defer cl.Close()
		}
		var out bytes.Buffer
		n, err := out.ReadFrom(io.LimitReader(r, int64(limit)+1))
		switch {
		case !strict:
			return out.Bytes()[:min(out.Len(), limit)], nil
		case err != nil:
			return nil, fmt.Errorf("%s: %w", c.name, err)
		case n > int64(limit):
			return nil, fmt.Errorf("%w: %s past %d bytes", ErrTooLarge, c.name, limit)
		}
		return out.Bytes(), nil
	}
	if !strict {
		return data[:min(len(data), limit)], nil
	}
	return data, nil
}
