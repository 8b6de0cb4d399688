package codec

import (
	"encoding/base64"
	"fmt"
)

func init() {
	Register(newBase64, "base64", "numcodecs.base64")
}

// Base64 is numcodecs' Base64 codec: the bytes as standard base64 text
// (with padding), as Python's base64.standard_b64encode writes them.
type Base64 struct{}

func newBase64(cfg Config) (Codec, error) {
	for k := range cfg {
		return nil, fmt.Errorf("base64: unknown configuration member %q", k)
	}
	return Base64{}, nil
}

// Name implements Codec.
func (Base64) Name() string { return "base64" }

// EncodedSize implements BytesToBytes.
func (Base64) EncodedSize(n int) int { return base64.StdEncoding.EncodedLen(n) }

// Encode implements BytesToBytes.
func (Base64) Encode(data []byte) ([]byte, error) {
	out := make([]byte, base64.StdEncoding.EncodedLen(len(data)))
	base64.StdEncoding.Encode(out, data)
	return out, nil
}

// Decode implements BytesToBytes. The output is at most three quarters of
// the input, which the store has already delivered, so nothing is
// allocated on a header's word.
func (Base64) Decode(data []byte, decodedSize int) ([]byte, error) {
	out := make([]byte, base64.StdEncoding.DecodedLen(len(data)))
	n, err := base64.StdEncoding.Decode(out, data)
	if err != nil {
		return nil, Corruptf("base64", "%w", err)
	}
	if err := checkSize("base64", n, decodedSize); err != nil {
		return nil, err
	}
	return out[:n], nil
}
