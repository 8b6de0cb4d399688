package codec

import (
	"encoding/binary"
	"fmt"
	"hash/adler32"
	"hash/crc32"
)

func init() {
	Register(checksumFactory("crc32c", false), "crc32c", "numcodecs.crc32c")
	Register(checksumFactory("crc32", true), "crc32", "numcodecs.crc32")
	Register(checksumFactory("adler32", true), "adler32", "numcodecs.adler32")
	Register(func(Config) (Codec, error) { return Fletcher32{}, nil }, "fletcher32", "numcodecs.fletcher32")
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checksums are the 32-bit checksums by codec name.
var checksums = map[string]func([]byte) uint32{
	"crc32c":  func(b []byte) uint32 { return crc32.Checksum(b, castagnoli) },
	"crc32":   crc32.ChecksumIEEE,
	"adler32": adler32.Checksum,
}

// Checksum32 is a bytes→bytes codec that stores a 32-bit checksum of the
// data, 4 bytes little-endian, before or after it: the v3 codec "crc32c"
// (after) and numcodecs' CRC32, Adler32 (before, by default) and CRC32C
// (after, by default). numcodecs' "location" configuration ("start" or
// "end") moves it.
type Checksum32 struct {
	Algorithm string // "crc32c", "crc32" or "adler32"
	AtStart   bool
}

func checksumFactory(algorithm string, atStart bool) Factory {
	return func(cfg Config) (Codec, error) {
		c := Checksum32{Algorithm: algorithm, AtStart: atStart}
		var location string
		if _, err := cfg.Decode(algorithm, "location", &location); err != nil {
			return nil, err
		}
		switch location {
		case "":
		case "start":
			c.AtStart = true
		case "end":
			c.AtStart = false
		default:
			return nil, fmt.Errorf("%s: location %q is neither \"start\" nor \"end\"", algorithm, location)
		}
		return c, nil
	}
}

// Name implements Codec.
func (c Checksum32) Name() string { return c.Algorithm }

// EncodedSize implements BytesToBytes.
func (Checksum32) EncodedSize(n int) int { return n + 4 }

// Encode implements BytesToBytes.
func (c Checksum32) Encode(data []byte) ([]byte, error) {
	sum := checksums[c.Algorithm](data)
	out := make([]byte, 0, len(data)+4)
	if c.AtStart {
		out = binary.LittleEndian.AppendUint32(out, sum)
		return append(out, data...), nil
	}
	out = append(out, data...)
	return binary.LittleEndian.AppendUint32(out, sum), nil
}

// Decode implements BytesToBytes. The result aliases data.
func (c Checksum32) Decode(data []byte, decodedSize int) ([]byte, error) {
	if len(data) < 4 {
		return nil, Corruptf(c.Algorithm, "%d bytes, too short for a checksum", len(data))
	}
	body, stored := data[:len(data)-4], data[len(data)-4:]
	if c.AtStart {
		body, stored = data[4:], data[:4]
	}
	if err := checkSize(c.Algorithm, len(body), decodedSize); err != nil {
		return nil, err
	}
	if got, want := checksums[c.Algorithm](body), binary.LittleEndian.Uint32(stored); got != want {
		return nil, Corruptf(c.Algorithm, "checksum %08x, stored %08x", got, want)
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
