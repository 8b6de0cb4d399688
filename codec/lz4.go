package codec

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/pierrec/lz4/v4"
)

func init() {
	Register(newLZ4,
		"lz4",
		"numcodecs.lz4",
		"https://purl.org/zarr/spec/codec/lz4/1.0", // zarr-python 2.13 (v3 draft of 2022)
	)
}

// LZ4 is numcodecs' LZ4 codec: the uncompressed size as 4 bytes
// little-endian, then one LZ4 block. Acceleration only tunes the encoder
// and is kept for the record.
type LZ4 struct {
	Acceleration int
}

func newLZ4(cfg Config) (Codec, error) {
	c := LZ4{Acceleration: 1}
	if _, err := cfg.Decode("lz4", "acceleration", &c.Acceleration); err != nil {
		return nil, err
	}
	return c, nil
}

var lz4Compressors = sync.Pool{New: func() any { return new(lz4.Compressor) }}

// Name implements Codec.
func (LZ4) Name() string { return "lz4" }

// EncodedSize implements BytesToBytes.
func (LZ4) EncodedSize(int) int { return -1 }

// Encode implements BytesToBytes.
func (LZ4) Encode(data []byte) ([]byte, error) {
	if uint64(len(data)) > 0x7e000000 { // LZ4_MAX_INPUT_SIZE
		return nil, fmt.Errorf("lz4: %d bytes is more than one LZ4 block holds", len(data))
	}
	out := make([]byte, 4+lz4.CompressBlockBound(len(data)))
	binary.LittleEndian.PutUint32(out, uint32(len(data)))
	if len(data) == 0 {
		// One token: no literals, no match (what liblz4 writes).
		out[4] = 0
		return out[:5], nil
	}
	c := lz4Compressors.Get().(*lz4.Compressor)
	defer lz4Compressors.Put(c)
	n, err := c.CompressBlock(data, out[4:])
	if err != nil || n == 0 {
		return nil, fmt.Errorf("lz4: compress %d bytes: %d, %v", len(data), n, err)
	}
	return out[:4+n], nil
}

// Decode implements BytesToBytes.
func (c LZ4) Decode(data []byte, decodedSize int) ([]byte, error) {
	if decodedSize >= 0 {
		return decodeNew(c, data, decodedSize)
	}
	if len(data) < 4 {
		return nil, Corruptf("lz4", "%d bytes, too short for the size header", len(data))
	}
	size := int64(binary.LittleEndian.Uint32(data))
	block := data[4:]
	switch {
	case size > UnknownSizeCap:
		return nil, Corruptf("lz4", "header says %d bytes, more than %d", size, UnknownSizeCap)
	case size > 255*int64(len(block))+16:
		// An LZ4 block cannot expand more than about 255 times.
		return nil, Corruptf("lz4", "header says %d bytes, more than %d compressed bytes can hold", size, len(block))
	}
	out := make([]byte, size)
	n, err := lz4.UncompressBlock(block, out)
	if err != nil {
		return nil, Corruptf("lz4", "%w", err)
	}
	if int64(n) != size {
		return nil, Corruptf("lz4", "decoded %d bytes, header says %d", n, size)
	}
	return out, nil
}

var _ DecoderInto = LZ4{}

// DecodeInto implements DecoderInto: the size header must say len(dst).
func (LZ4) DecodeInto(dst, data []byte) error {
	if len(data) < 4 {
		return Corruptf("lz4", "%d bytes, too short for the size header", len(data))
	}
	if size := int64(binary.LittleEndian.Uint32(data)); size != int64(len(dst)) {
		return Corruptf("lz4", "header says %d bytes, want %d", size, len(dst))
	}
	n, err := lz4.UncompressBlock(data[4:], dst)
	if err != nil {
		return Corruptf("lz4", "%w", err)
	}
	if n != len(dst) {
		return Corruptf("lz4", "decoded %d bytes, header says %d", n, len(dst))
	}
	return nil
}
