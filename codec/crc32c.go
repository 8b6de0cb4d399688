package codec

import (
	"encoding/binary"
	"hash/crc32"
)

func init() {
	Register(newCRC32C, "crc32c", "numcodecs.crc32c")
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CRC32C is the bytes→bytes codec "crc32c": the data followed by its
// CRC-32C (Castagnoli) checksum, 4 bytes little-endian. numcodecs CRC32C
// writes the same layout.
type CRC32C struct{}

func newCRC32C(cfg Config) (Codec, error) { return CRC32C{}, nil }

// Name implements Codec.
func (CRC32C) Name() string { return "crc32c" }

// EncodedSize implements BytesToBytes.
func (CRC32C) EncodedSize(n int) int { return n + 4 }

// Encode implements BytesToBytes.
func (CRC32C) Encode(data []byte) ([]byte, error) {
	out := make([]byte, len(data), len(data)+4)
	copy(out, data)
	return binary.LittleEndian.AppendUint32(out, crc32.Checksum(data, castagnoli)), nil
}

// Decode implements BytesToBytes. The result aliases data.
func (CRC32C) Decode(data []byte, decodedSize int) ([]byte, error) {
	if len(data) < 4 {
		return nil, Corruptf("crc32c", "%d bytes, too short for a checksum", len(data))
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if err := checkSize("crc32c", len(body), decodedSize); err != nil {
		return nil, err
	}
	if got := crc32.Checksum(body, castagnoli); got != sum {
		return nil, Corruptf("crc32c", "checksum %08x, stored %08x", got, sum)
	}
	return body, nil
}
