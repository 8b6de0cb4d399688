package codec

import (
	"bytes"
	"compress/bzip2"
	"fmt"

	dbzip2 "github.com/dsnet/compress/bzip2"
)

func init() {
	Register(newBZ2,
		"bz2",
		"numcodecs.bz2",
		"https://purl.org/zarr/spec/codec/bz2/1.0", // zarr-python 2.13 (v3 draft of 2022)
	)
}

// BZ2 is numcodecs' BZ2 codec: a bzip2 stream.
type BZ2 struct {
	Level int // 1 … 9
}

func newBZ2(cfg Config) (Codec, error) {
	c := BZ2{Level: 1} // numcodecs' default
	if _, err := cfg.Decode("bz2", "level", &c.Level); err != nil {
		return nil, err
	}
	if c.Level < 1 || c.Level > 9 {
		return nil, fmt.Errorf("bz2: level %d is not in 1…9", c.Level)
	}
	return c, nil
}

// Name implements Codec.
func (BZ2) Name() string { return "bz2" }

// EncodedSize implements BytesToBytes.
func (BZ2) EncodedSize(int) int { return -1 }

// Encode implements BytesToBytes.
func (c BZ2) Encode(data []byte) ([]byte, error) {
	var buf bytes.Buffer
	w, err := dbzip2.NewWriter(&buf, &dbzip2.WriterConfig{Level: c.Level})
	if err != nil {
		return nil, fmt.Errorf("bz2: %w", err)
	}
	if err := writeAll("bz2", w, data); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Decode implements BytesToBytes. Concatenated streams decode as one, as
// Python's bz2 module reads them.
func (BZ2) Decode(data []byte, decodedSize int) ([]byte, error) {
	return readExact(bzip2.NewReader(bytes.NewReader(data)), "bz2", decodedSize)
}
