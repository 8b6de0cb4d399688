package codec

import (
	"encoding/binary"
	"fmt"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/zarrfs/zarrfs/codec/blosc"
)

// canDecodeInto reports whether decodeInto can decode c's output into a
// caller's buffer.
func canDecodeInto(c BytesToBytes) bool {
	switch c.(type) {
	case DecoderInto, Blosc, Zstd, LZ4:
		return true
	}
	return false
}

// decodeInto decodes data with c into dst, exactly len(dst) bytes. Codecs
// implementing DecoderInto do it themselves; for Blosc, Zstd and LZ4, whose
// libraries decode into a given buffer, it does what their Decode does
// with a buffer of the known size instead of a new one (the size is known,
// so no header claim is ever allocated).
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
