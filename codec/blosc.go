package codec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/zarrfs/zarrfs/codec/blosc"
)

func init() {
	Register(newBlosc,
		"blosc", // v3 name and v2 numcodecs id
		"numcodecs.blosc",
		"https://purl.org/zarr/spec/codec/blosc/1.0",  // zarr-python 2.13 (v3 draft of 2022)
		"https://purl.org/zarr/spec/codecs/blosc/1.0", // v3 draft of 2019 (blosc codec spec)
	)
}

// numcodecs' shuffle codes; BloscAutoShuffle picks bitshuffle for 1-byte items
// and byte shuffle otherwise.
const (
	BloscAutoShuffle = -1
	BloscNoShuffle   = 0
	BloscByteShuffle = 1
	BloscBitShuffle  = 2
)

// Blosc is the bytes→bytes codec "blosc": Blosc1 chunks as c-blosc 1.x
// and numcodecs.Blosc write them, decoded and encoded in pure Go by package
// codec/blosc.
type Blosc struct {
	CName  string // inner codec: blosclz, lz4, lz4hc, snappy, zlib, zstd
	CLevel int    // 0..9
	// Shuffle is numcodecs' code: BloscAutoShuffle, BloscNoShuffle, BloscByteShuffle or
	// BloscBitShuffle. The v3 names "noshuffle", "shuffle" and "bitshuffle" map
	// to the last three.
	Shuffle int
	// TypeSize is the element size used when encoding (the v3 "typesize";
	// 1 when absent — the engine may set it from the array's data type for
	// v2 metadata, where numcodecs takes it from the array). Decoding reads
	// it from each chunk's header.
	TypeSize  int
	BlockSize int // 0: chosen as c-blosc does

	compressor blosc.Compressor
}

func newBlosc(cfg Config) (Codec, error) {
	c := Blosc{CName: "lz4", CLevel: 5, Shuffle: BloscByteShuffle, TypeSize: 1} // numcodecs' defaults
	if _, err := cfg.Decode("blosc", "cname", &c.CName); err != nil {
		return nil, err
	}
	if _, err := cfg.Decode("blosc", "clevel", &c.CLevel); err != nil {
		return nil, err
	}
	if raw, ok := cfg["shuffle"]; ok && string(raw) != "null" {
		sh, err := parseBloscShuffle(raw)
		if err != nil {
			return nil, err
		}
		c.Shuffle = sh
	}
	if _, err := cfg.Decode("blosc", "typesize", &c.TypeSize); err != nil {
		return nil, err
	}
	if _, err := cfg.Decode("blosc", "blocksize", &c.BlockSize); err != nil {
		return nil, err
	}
	comp, err := blosc.ParseCompressor(c.CName)
	if err != nil {
		return nil, Unsupportedf("blosc cname %q", c.CName)
	}
	c.compressor = comp
	if c.CLevel < 0 || c.CLevel > 9 {
		return nil, fmt.Errorf("blosc: clevel %d is not in 0…9", c.CLevel)
	}
	if c.TypeSize < 1 {
		return nil, fmt.Errorf("blosc: typesize %d, want at least 1", c.TypeSize)
	}
	if c.BlockSize < 0 {
		return nil, fmt.Errorf("blosc: blocksize %d is negative", c.BlockSize)
	}
	return c, nil
}

// parseBloscShuffle reads "shuffle" as a numcodecs integer (-1, 0, 1, 2),
// a v3 name ("noshuffle", "shuffle", "bitshuffle") or one of the strings
// GDAL writes, its option values ("NONE", "BYTE", "BIT", any case) or a
// code in a string ("2"). zarr-python and GDAL read all of them. Decoding
// takes the shuffle from each chunk's header, so the member only matters
// for encoding.
func parseBloscShuffle(raw json.RawMessage) (int, error) {
	switch string(raw) { // the usual codes, as json.Unmarshal reads them below
	case "-1":
		return BloscAutoShuffle, nil
	case "0":
		return BloscNoShuffle, nil
	case "1":
		return BloscByteShuffle, nil
	case "2":
		return BloscBitShuffle, nil
	}
	var name string
	if err := json.Unmarshal(raw, &name); err == nil {
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "noshuffle", "none", "0":
			return BloscNoShuffle, nil
		case "shuffle", "byte", "1":
			return BloscByteShuffle, nil
		case "bitshuffle", "bit", "2":
			return BloscBitShuffle, nil
		case "-1":
			return BloscAutoShuffle, nil
		}
		return 0, fmt.Errorf("blosc: shuffle %q is not noshuffle, shuffle, bitshuffle, NONE, BYTE, BIT or a code", name)
	}
	var code int
	if err := json.Unmarshal(raw, &code); err != nil || code < BloscAutoShuffle || code > BloscBitShuffle {
		return 0, fmt.Errorf("blosc: shuffle %s is not -1, 0, 1, 2 or a shuffle name", raw)
	}
	return code, nil
}

// Name implements Codec.
func (Blosc) Name() string { return "blosc" }

// EncodedSize implements BytesToBytes.
func (Blosc) EncodedSize(int) int { return -1 }

// Encode implements BytesToBytes. The chunk decodes with c-blosc 1.x.
func (c Blosc) Encode(data []byte) ([]byte, error) {
	sh := c.Shuffle
	if sh == BloscAutoShuffle {
		sh = BloscByteShuffle
		if c.TypeSize == 1 {
			sh = BloscBitShuffle
		}
	}
	out, err := blosc.Compress(data, blosc.Options{
		Compressor: c.compressor,
		Level:      c.CLevel,
		Shuffle:    blosc.Shuffle(sh),
		TypeSize:   c.TypeSize,
		BlockSize:  c.BlockSize,
	})
	if err != nil {
		return nil, fmt.Errorf("blosc: %w", err)
	}
	return out, nil
}

// Decode implements BytesToBytes. The header's decoded size is checked
// against decodedSize (or UnknownSizeCap) before anything is allocated.
func (Blosc) Decode(data []byte, decodedSize int) ([]byte, error) {
	n, err := blosc.DecodedSize(data)
	if err != nil {
		return nil, bloscError(err)
	}
	if err := checkSize("blosc", n, decodedSize); err != nil {
		return nil, err
	}
	// With no size to check against (vlen chunks), refuse a claim no
	// chunk of this length can make good before allocating it: no inner
	// codec expands more than zstd does (128 KiB per 3 bytes).
	if decodedSize < 0 && int64(n) > zstdMaxOutput(len(data)) {
		return nil, Corruptf("blosc", "chunk of %d bytes claims %d", len(data), n)
	}
	out := make([]byte, n)
	if err := blosc.Decompress(out, data); err != nil {
		return nil, bloscError(err)
	}
	return out, nil
}

var _ DecoderInto = Blosc{}

// DecodeInto implements DecoderInto; the chunk's header must claim
// len(dst) bytes.
func (Blosc) DecodeInto(dst, data []byte) error {
	if err := blosc.Decompress(dst, data); err != nil {
		return bloscError(err)
	}
	return nil
}

// DecodeParts implements PartialDecoder: it reads the whole stored chunk
// and decodes only the blocks that hold the parts, once each (the parts'
// span, from the first to the last, in one range).
func (Blosc) DecodeParts(ctx context.Context, r RangeReader, decoded ArraySpec, dsts [][]byte, offs []int64) error {
	if len(dsts) == 0 {
		return nil
	}
	data, err := r.Read(ctx)
	if err != nil {
		return err
	}
	n, err := blosc.DecodedSize(data)
	if err != nil {
		return bloscError(err)
	}
	if want := decoded.ByteSize(); n != want {
		return Corruptf("blosc", "decoded size %d, want %d", n, want)
	}
	if len(dsts) == 1 {
		if err := blosc.DecompressRange(dsts[0], data, int(offs[0])); err != nil {
			return bloscError(err)
		}
		return nil
	}
	first, last := partsSpan(dsts, offs)
	span := make([]byte, last-first)
	if err := blosc.DecompressRange(span, data, int(first)); err != nil {
		return bloscError(err)
	}
	for i, dst := range dsts {
		copy(dst, span[offs[i]-first:])
	}
	return nil
}

// bloscError turns an error of package blosc into this package's kinds,
// keeping it as the cause: a *blosc.Error's reason is the message.
func bloscError(err error) error {
	var be *blosc.Error
	switch {
	case errors.Is(err, blosc.ErrUnsupported):
		return Unsupportedf("%w", err)
	case errors.As(err, &be):
		return &CorruptError{Codec: "blosc", Reason: be.Reason, Err: err}
	}
	return Corruptf("blosc", "%w", err)
}
