package codec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"

	"github.com/zarrfs/zarrfs/internal/inflate"
)

func init() {
	Register(newGzip,
		"gzip",
		"numcodecs.gzip",
		"https://purl.org/zarr/spec/codec/gzip/1.0",  // zarr-python 2.13 (v3 draft of 2022)
		"https://purl.org/zarr/spec/codecs/gzip/1.0", // v3 draft of 2019
		"https://purl.org/zarr/spec/codec/gzip",      // v3 draft examples
		"http://purl.org/zarr/spec/codec/gzip",
	)
	Register(newZlib,
		"zlib",
		"numcodecs.zlib",
		"https://purl.org/zarr/spec/codec/zlib/1.0", // zarr-python 2.13 (v3 draft of 2022)
	)
}

// deflateLevel reads the "level" member (default def) and checks it is a
// level the deflate encoder accepts: -1 (default) or 0 to 9.
func deflateLevel(name string, cfg Config, def int) (int, error) {
	level := def
	if _, err := cfg.Decode(name, "level", &level); err != nil {
		return 0, err
	}
	if level < -1 || level > 9 {
		return 0, fmt.Errorf("%s: level %d is not in -1…9", name, level)
	}
	return level, nil
}

// writerPools holds one pool of compressors per deflate level -1…9.
type writerPools[W interface {
	io.WriteCloser
	Reset(io.Writer)
}] struct {
	pools [11]sync.Pool
	newW  func(level int) W
}

// encode compresses data at level with a pooled compressor, for the codec
// name.
func (p *writerPools[W]) encode(name string, level int, data []byte) ([]byte, error) {
	w, ok := p.pools[level+1].Get().(W)
	if !ok {
		w = p.newW(level)
	}
	defer p.pools[level+1].Put(w)
	var buf bytes.Buffer
	w.Reset(&buf)
	if err := writeAll(name, w, data); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// decodeStream decodes data: whole (package inflate, through c) when its
// decoded size is known, else through the streaming reader open returns
// (a vlen chunk).
func decodeStream(c DecoderInto, name string, data []byte, decodedSize int, open func([]byte) (io.Reader, func(), error)) ([]byte, error) {
	if decodedSize >= 0 {
		return decodeNew(c, data, decodedSize)
	}
	r, done, err := open(data)
	if err != nil {
		return nil, err
	}
	defer done()
	return readExact(r, name, decodedSize)
}

// Gzip is the bytes→bytes codec "gzip" (RFC 1952), numcodecs GZip.
type Gzip struct {
	Level int // -1 … 9
}

func newGzip(cfg Config) (Codec, error) {
	level, err := deflateLevel("gzip", cfg, 5) // numcodecs' default
	if err != nil {
		return nil, err
	}
	return Gzip{Level: level}, nil
}

var (
	gzipWriters = writerPools[*gzip.Writer]{newW: func(level int) *gzip.Writer {
		w, _ := gzip.NewWriterLevel(nil, level) // level checked by deflateLevel
		return w
	}}
	gzipReaders sync.Pool // *gzip.Reader
)

// Name implements Codec.
func (Gzip) Name() string { return "gzip" }

// EncodedSize implements BytesToBytes.
func (Gzip) EncodedSize(int) int { return -1 }

// Encode implements BytesToBytes.
func (c Gzip) Encode(data []byte) ([]byte, error) {
	return gzipWriters.encode("gzip", c.Level, data)
}

// Decode implements BytesToBytes. Concatenated members decode as one
// stream, as Python's gzip module reads them. A chunk of known size is
// decoded whole (package inflate); one of unknown size (a vlen chunk)
// through a streaming reader.
func (c Gzip) Decode(data []byte, decodedSize int) ([]byte, error) {
	return decodeStream(c, "gzip", data, decodedSize, gzipReader)
}

var _ DecoderInto = Gzip{}

// DecodeInto implements DecoderInto.
func (Gzip) DecodeInto(dst, data []byte) error {
	n, err := inflate.Gzip(dst, data)
	return inflateResult("gzip", dst, n, err)
}

// inflateResult turns what package inflate returns for a decode of n
// bytes into dst into the codec's errors.
func inflateResult(name string, dst []byte, n int, err error) error {
	switch {
	case errors.Is(err, inflate.ErrTooLong):
		return Corruptf(name, "decodes to more than %d bytes", len(dst))
	case err != nil:
		return Corruptf(name, "after %d bytes: %v", n, err)
	case n != len(dst):
		return Corruptf(name, "decoded %d bytes, want %d", n, len(dst))
	}
	return nil
}

// gzipReader returns a pooled reader of the gzip stream data, and a
// function that puts it back.
func gzipReader(data []byte) (io.Reader, func(), error) {
	r, _ := gzipReaders.Get().(*gzip.Reader)
	var err error
	if r == nil {
		r, err = gzip.NewReader(bytes.NewReader(data))
	} else {
		err = r.Reset(bytes.NewReader(data))
	}
	if err != nil {
		return nil, nil, Corruptf("gzip", "%v", err)
	}
	return r, func() { gzipReaders.Put(r) }, nil
}

// Zlib is the bytes→bytes codec "zlib" (RFC 1950), numcodecs Zlib.
type Zlib struct {
	Level int // -1 … 9
}

func newZlib(cfg Config) (Codec, error) {
	level, err := deflateLevel("zlib", cfg, 1) // numcodecs' default
	if err != nil {
		return nil, err
	}
	return Zlib{Level: level}, nil
}

var (
	zlibWriters = writerPools[*zlib.Writer]{newW: func(level int) *zlib.Writer {
		w, _ := zlib.NewWriterLevel(nil, level) // level checked by deflateLevel
		return w
	}}
	zlibReaders sync.Pool // io.ReadCloser that is a zlib.Resetter
)

// Name implements Codec.
func (Zlib) Name() string { return "zlib" }

// EncodedSize implements BytesToBytes.
func (Zlib) EncodedSize(int) int { return -1 }

// Encode implements BytesToBytes.
func (c Zlib) Encode(data []byte) ([]byte, error) {
	return zlibWriters.encode("zlib", c.Level, data)
}

// Decode implements BytesToBytes. A chunk of known size is decoded whole
// (package inflate); one of unknown size (a vlen chunk) through a
// streaming reader.
func (c Zlib) Decode(data []byte, decodedSize int) ([]byte, error) {
	return decodeStream(c, "zlib", data, decodedSize, zlibReader)
}

var _ DecoderInto = Zlib{}

// DecodeInto implements DecoderInto.
func (Zlib) DecodeInto(dst, data []byte) error {
	n, err := inflate.Zlib(dst, data)
	return inflateResult("zlib", dst, n, err)
}

// zlibReader returns a pooled reader of the zlib stream data, and a
// function that puts it back.
func zlibReader(data []byte) (io.Reader, func(), error) {
	r, _ := zlibReaders.Get().(io.ReadCloser)
	var err error
	if r == nil {
		r, err = zlib.NewReader(bytes.NewReader(data))
	} else {
		err = r.(zlib.Resetter).Reset(bytes.NewReader(data), nil)
	}
	if err != nil {
		return nil, nil, Corruptf("zlib", "%v", err)
	}
	return r, func() { zlibReaders.Put(r) }, nil
}

// writeAll writes data through the compressing writer w of codec name and
// closes it, which flushes what w holds.
func writeAll(name string, w io.WriteCloser, data []byte) error {
	if _, err := w.Write(data); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
