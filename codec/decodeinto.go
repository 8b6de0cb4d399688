package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/zarrfs/zarrfs/codec/blosc"
)

// canDecodeInto reports whether decodeInto can decode c's output into a
// caller's buffer.
func canDecodeInto(c BytesToBytes) bool {
	switch c.(type) {
	case DecoderInto, Blosc, Zstd, LZ4, Gzip, Zlib:
		return true
	}
	return false
}

// decodeInto decodes data with c into dst, exactly len(dst) bytes. Codecs
// implementing DecoderInto do it themselves; for Blosc, Zstd, LZ4, Gzip and
// Zlib, whose libraries decode into a given buffer, it does what their
// Decode does with a buffer of the known size instead of a new one (the
// size is known, so no header claim is ever allocated).
func decodeInto(c BytesToBytes, dst, data []byte) error {
	switch c := c.(type) {
	case DecoderInto:
		return c.DecodeInto(dst, data)
	case Blosc:
		// Decompress checks the header's size against len(dst) first.
		if err := blosc.Decompress(dst, data); err != nil {
			return bloscError(err)
		}
		return nil
	case Zstd:
		return zstdDecodeInto(dst, data)
	case LZ4:
		return lz4DecodeInto(dst, data)
	case Gzip:
		r, _ := gzipReaders.Get().(*gzip.Reader)
		var err error
		if r == nil {
			r, err = gzip.NewReader(bytes.NewReader(data))
		} else {
			err = r.Reset(bytes.NewReader(data))
		}
		if err != nil {
			return Corruptf("gzip", "%v", err)
		}
		defer gzipReaders.Put(r)
		return readExactInto(r, "gzip", dst)
	case Zlib:
		r, _ := zlibReaders.Get().(io.ReadCloser)
		var err error
		if r == nil {
			r, err = zlib.NewReader(bytes.NewReader(data))
		} else {
			err = r.(zlib.Resetter).Reset(bytes.NewReader(data), nil)
		}
		if err != nil {
			return Corruptf("zlib", "%v", err)
		}
		defer zlibReaders.Put(r)
		return readExactInto(r, "zlib", dst)
	}
	return Unsupportedf("decoding %s into a buffer", c.Name())
}

// zstdDecodeInto is Zstd.Decode of a known size into dst.
func zstdDecodeInto(dst, data []byte) error {
	var h zstd.Header
	if err := h.Decode(data); err != nil {
		return Corruptf("zstd", "frame header: %v", err)
	}
	if h.HasFCS && h.FrameContentSize > uint64(len(dst)) {
		return Corruptf("zstd", "frame declares %d bytes, want %d", h.FrameContentSize, len(dst))
	}
	if zstdFastInto(dst, data) { // as Zstd.Decode: blosc's decoder where it is faster
		return nil
	}
	d, err := zstdExact()
	if err != nil {
		return fmt.Errorf("zstd: %w", err)
	}
	// The decoder appends within the capacity it is given and fails
	// rather than grow it (WithDecodeAllCapLimit).
	out, err := d.DecodeAll(data, dst[:0:len(dst)])
	if err != nil {
		return Corruptf("zstd", "%v", err)
	}
	if len(out) != len(dst) || len(out) > 0 && &out[0] != &dst[0] {
		return Corruptf("zstd", "decoded %d bytes, want %d", len(out), len(dst))
	}
	return nil
}

// lz4DecodeInto is LZ4.Decode of a known size into dst.
func lz4DecodeInto(dst, data []byte) error {
	if len(data) < 4 {
		return Corruptf("lz4", "%d bytes, too short for the size header", len(data))
	}
	if size := int64(binary.LittleEndian.Uint32(data)); size != int64(len(dst)) {
		return Corruptf("lz4", "header says %d bytes, want %d", size, len(dst))
	}
	n, err := lz4.UncompressBlock(data[4:], dst)
	if err != nil {
		return Corruptf("lz4", "%v", err)
	}
	if n != len(dst) {
		return Corruptf("lz4", "decoded %d bytes, header says %d", n, len(dst))
	}
	return nil
}

// readExactInto is readExact of len(dst) bytes into dst: the stream r
// must yield exactly that many, and it reads one byte past them to make
// the decompressor check its trailer and to see that the stream ends.
func readExactInto(r io.Reader, name string, dst []byte) error {
	n, err := io.ReadFull(r, dst)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return Corruptf(name, "decoded %d bytes, want %d", n, len(dst))
		}
		return Corruptf(name, "after %d bytes: %v", n, err)
	}
	var one [1]byte
	switch m, err := io.ReadFull(r, one[:]); {
	case m > 0:
		return Corruptf(name, "decodes to more than %d bytes", len(dst))
	case errors.Is(err, io.EOF):
		return nil
	default:
		return Corruptf(name, "%v", err)
	}
}
