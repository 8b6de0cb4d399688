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
	Register(newDeflate[gzipFormat],
		"gzip",
		"numcodecs.gzip",
		"https://purl.org/zarr/spec/codec/gzip/1.0",  // zarr-python 2.13 (v3 draft of 2022)
		"https://purl.org/zarr/spec/codecs/gzip/1.0", // v3 draft of 2019
		"https://purl.org/zarr/spec/codec/gzip",      // v3 draft examples
		"http://purl.org/zarr/spec/codec/gzip",
	)
	Register(newDeflate[zlibFormat],
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
// Concatenated members decode as one stream, as Python's gzip module reads
// them.
type Gzip = deflate[gzipFormat]

// Zlib is the bytes→bytes codec "zlib" (RFC 1950), numcodecs Zlib.
type Zlib = deflate[zlibFormat]

// deflate is a codec of deflate streams in the container format F (gzip
// or zlib): the two differ in their name, their headers and their
// defaults, not in how they are encoded and decoded.
type deflate[F deflateFormat] struct {
	Level int // -1 … 9
}

// deflateFormat is a container format of deflate streams: gzipFormat or
// zlibFormat, each of which returns its one deflateSpec.
type deflateFormat interface{ spec() *deflateSpec }

// deflateSpec is what tells one deflate container format from another.
type deflateSpec struct {
	name         string
	defaultLevel int // numcodecs' default
	// encode compresses data at a level with a pooled compressor.
	encode func(name string, level int, data []byte) ([]byte, error)
	// inflate decodes a chunk whole into dst (package inflate).
	inflate func(dst, data []byte) (int, error)
	// reader returns a pooled streaming reader of data and a function
	// that puts it back.
	reader  func(data []byte) (io.Reader, func(), error)
	readers sync.Pool
}

type (
	gzipFormat struct{}
	zlibFormat struct{}
)

func (gzipFormat) spec() *deflateSpec { return &gzipSpec }
func (zlibFormat) spec() *deflateSpec { return &zlibSpec }

var (
	gzipSpec = deflateSpec{name: "gzip", defaultLevel: 5, inflate: inflate.Gzip,
		encode: (&writerPools[*gzip.Writer]{newW: func(level int) *gzip.Writer {
			w, _ := gzip.NewWriterLevel(nil, level) // level checked by deflateLevel
			return w
		}}).encode}
	zlibSpec = deflateSpec{name: "zlib", defaultLevel: 1, inflate: inflate.Zlib,
		encode: (&writerPools[*zlib.Writer]{newW: func(level int) *zlib.Writer {
			w, _ := zlib.NewWriterLevel(nil, level) // level checked by deflateLevel
			return w
		}}).encode}
)

func init() {
	gzipSpec.reader = gzipReader
	zlibSpec.reader = zlibReader
}

func newDeflate[F deflateFormat](cfg Config) (Codec, error) {
	s := F.spec(*new(F))
	level, err := deflateLevel(s.name, cfg, s.defaultLevel)
	if err != nil {
		return nil, err
	}
	return deflate[F]{Level: level}, nil
}

// Name implements Codec.
func (deflate[F]) Name() string { return F.spec(*new(F)).name }

// EncodedSize implements BytesToBytes.
func (deflate[F]) EncodedSize(int) int { return -1 }

// Encode implements BytesToBytes.
func (c deflate[F]) Encode(data []byte) ([]byte, error) {
	s := F.spec(*new(F))
	return s.encode(s.name, c.Level, data)
}

// Decode implements BytesToBytes. A chunk of known size is decoded whole
// (package inflate); one of unknown size (a vlen chunk) through a
// streaming reader.
func (c deflate[F]) Decode(data []byte, decodedSize int) ([]byte, error) {
	s := F.spec(*new(F))
	return decodeStream(c, s.name, data, decodedSize, s.reader)
}

var (
	_ DecoderInto = Gzip{}
	_ DecoderInto = Zlib{}
)

// DecodeInto implements DecoderInto.
func (deflate[F]) DecodeInto(dst, data []byte) error {
	s := F.spec(*new(F))
	n, err := s.inflate(dst, data)
	return inflateResult(s.name, dst, n, err)
}

// inflateResult turns what package inflate returns for a decode of n
// bytes into dst into the codec's errors.
func inflateResult(name string, dst []byte, n int, err error) error {
	switch {
	case errors.Is(err, inflate.ErrTooLong):
		return Corruptf(name, "decodes to more than %d bytes", len(dst))
	case err != nil:
		return Corruptf(name, "after %d bytes: %w", n, err)
	case n != len(dst):
		return Corruptf(name, "decoded %d bytes, want %d", n, len(dst))
	}
	return nil
}

// gzipReader returns a pooled reader of the gzip stream data, and a
// function that puts it back.
func gzipReader(data []byte) (io.Reader, func(), error) {
	r, _ := gzipSpec.readers.Get().(*gzip.Reader)
	var err error
	if r == nil {
		r, err = gzip.NewReader(bytes.NewReader(data))
	} else {
		err = r.Reset(bytes.NewReader(data))
	}
	if err != nil {
		return nil, nil, Corruptf("gzip", "%w", err)
	}
	return r, func() { gzipSpec.readers.Put(r) }, nil
}

// zlibReader returns a pooled reader of the zlib stream data, and a
// function that puts it back.
func zlibReader(data []byte) (io.Reader, func(), error) {
	r, _ := zlibSpec.readers.Get().(io.ReadCloser)
	var err error
	if r == nil {
		r, err = zlib.NewReader(bytes.NewReader(data))
	} else {
		err = r.(zlib.Resetter).Reset(bytes.NewReader(data), nil)
	}
	if err != nil {
		return nil, nil, Corruptf("zlib", "%w", err)
	}
	return r, func() { zlibSpec.readers.Put(r) }, nil
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
