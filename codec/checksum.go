package codec

import (
	"encoding/binary"
	"hash/adler32"
	"hash/crc32"
)

func init() {
	Register(func(Config) (Codec, error) { return CRC32{}, nil }, "crc32", "numcodecs.crc32")
	Register(func(Config) (Codec, error) { return Adler32{}, nil }, "adler32", "numcodecs.adler32")
	Register(func(Config) (Codec, error) { return Fletcher32{}, nil }, "fletcher32", "numcodecs.fletcher32")
}

// CRC32 is numcodecs' CRC32 codec: the zlib CRC-32 of the data, 4 bytes
// little-endian, then the data.
type CRC32 struct{}

// Name implements Codec.
func (CRC32) Name() string { return "crc32" }

// EncodedSize implements BytesToBytes.
func (CRC32) EncodedSize(n int) int { return n + 4 }

// Encode implements BytesToBytes.
func (CRC32) Encode(data []byte) ([]byte, error) {
	return prefixSum(data, crc32.ChecksumIEEE(data)), nil
}

// Decode implements BytesToBytes. The result aliases data.
func (CRC32) Decode(data []byte, decodedSize int) ([]byte, error) {
	return checkPrefixSum("crc32", data, decodedSize, crc32.ChecksumIEEE)
}

// Adler32 is numcodecs' Adler32 codec: the Adler-32 of the data, 4 bytes
// little-endian, then the data.
type Adler32 struct{}

// Name implements Codec.
func (Adler32) Name() string { return "adler32" }

// EncodedSize implements BytesToBytes.
func (Adler32) EncodedSize(n int) int { return n + 4 }

// Encode implements BytesToBytes.
func (Adler32) Encode(data []byte) ([]byte, error) {
	return prefixSum(data, adler32.Checksum(data)), nil
}

// Decode implements BytesToBytes. The result aliases data.
func (Adler32) Decode(data []byte, decodedSize int) ([]byte, error) {
	return checkPrefixSum("adler32", data, decodedSize, adler32.Checksum)
}

func prefixSum(data []byte, sum uint32) []byte {
	out := make([]byte, 4, 4+len(data))
	binary.LittleEndian.PutUint32(out, sum)
	return append(out, data...)
}

func checkPrefixSum(name string, data []byte, decodedSize int, sum func([]byte) uint32) ([]byte, error) {
	if len(data) < 4 {
		return nil, Corruptf(name, "%d bytes, too short for a checksum", len(data))
	}
	body := data[4:]
	if err := checkSize(name, len(body), decodedSize); err != nil {
		return nil, err
	}
	if got, stored := sum(body), binary.LittleEndian.Uint32(data); got != stored {
		return nil, Corruptf(name, "checksum %08x, stored %08x", got, stored)
	}
	return body, nil
}

// Fletcher32 is numcodecs' Fletcher32 codec: the data, then its Fletcher-32
// checksum as HDF5 computes it (big-endian 16-bit words, an odd last byte
// as the high byte of a word), 4 bytes little-endian.
type Fletcher32 struct{}

// Name implements Codec.
func (Fletcher32) Name() string { return "fletcher32" }

// EncodedSize implements BytesToBytes.
func (Fletcher32) EncodedSize(n int) int { return n + 4 }

// Encode implements BytesToBytes.
func (Fletcher32) Encode(data []byte) ([]byte, error) {
	out := make([]byte, len(data), len(data)+4)
	copy(out, data)
	return binary.LittleEndian.AppendUint32(out, fletcher32(data)), nil
}

// Decode implements BytesToBytes. The result aliases data.
func (Fletcher32) Decode(data []byte, decodedSize int) ([]byte, error) {
	if len(data) < 4 {
		return nil, Corruptf("fletcher32", "%d bytes, too short for a checksum", len(data))
	}
	body := data[:len(data)-4]
	if err := checkSize("fletcher32", len(body), decodedSize); err != nil {
		return nil, err
	}
	if got, stored := fletcher32(body), binary.LittleEndian.Uint32(data[len(body):]); got != stored {
		return nil, Corruptf("fletcher32", "checksum %08x, stored %08x", got, stored)
	}
	return body, nil
}

// fletcher32 is HDF5's H5_checksum_fletcher32.
func fletcher32(data []byte) uint32 {
	var sum1, sum2 uint32
	words := len(data) / 2
	p := data
	for words > 0 {
		n := min(words, 360) // sums stay below 2^32 for 360 words
		words -= n
		for i := 0; i < n; i++ {
			sum1 += uint32(p[0])<<8 | uint32(p[1])
			p = p[2:]
			sum2 += sum1
		}
		sum1 = sum1&0xffff + sum1>>16
		sum2 = sum2&0xffff + sum2>>16
	}
	if len(data)%2 == 1 {
		sum1 += uint32(p[0]) << 8
		sum2 += sum1
		sum1 = sum1&0xffff + sum1>>16
		sum2 = sum2&0xffff + sum2>>16
	}
	sum1 = sum1&0xffff + sum1>>16
	sum2 = sum2&0xffff + sum2>>16
	return sum2<<16 | sum1
}
