package codec

import (
	"encoding/json"
	"fmt"
)

func init() {
	Register(newConditional, conditionalName)
}

// conditionalName is the v3 name of the conditional codec, for messages.
const conditionalName = "conditional"

// conditionalMaxHeaderBits bounds header_bits: far more codecs than any
// chain holds, small enough that the header size is a plain int.
const conditionalMaxHeaderBits = 1 << 16

// Conditional is the bytes→bytes meta-codec "conditional" of the Zarr
// extension registry (codecs/conditional/README.md): a list of bytes→bytes
// codecs, each applied or skipped chunk by chunk, and a bitmask header of
// header_bits/8 bytes before each chunk's bytes saying which were applied.
// Bit i of the mask ("using a little-endian bit order") is bit i%8 of
// header byte i/8 and stands for codecs[i]; a 1 means the codec was
// applied. The reserved bits past the list "must be set to 0", so a chunk
// with one of them set is corrupt.
type Conditional struct {
	codecs      []BytesToBytes
	headerBytes int
}

// NewConditional returns the codec applying codecs under a header of
// headerBits bits: a multiple of 8, at least len(codecs).
func NewConditional(codecs []BytesToBytes, headerBits int) (*Conditional, error) {
	if headerBits < len(codecs) || headerBits%8 != 0 || headerBits > conditionalMaxHeaderBits {
		return nil, fmt.Errorf("%s: header_bits %d must be a multiple of 8 from %d to %d",
			conditionalName, headerBits, len(codecs), conditionalMaxHeaderBits)
	}
	return &Conditional{codecs: codecs, headerBytes: headerBits / 8}, nil
}

// newConditional builds the codec from its v3 configuration: codecs
// (required; bytes→bytes codecs only, as the spec says they "MUST all be")
// and header_bits, which defaults to ceil(len(codecs)/8)*8.
func newConditional(cfg Config) (Codec, error) {
	for k := range cfg {
		switch k {
		case "codecs", "header_bits":
		default:
			return nil, Unsupportedf("%s configuration member %q", conditionalName, k)
		}
	}
	raw, ok := cfg["codecs"]
	if !ok || string(raw) == "null" {
		return nil, fmt.Errorf("%s: configuration has no codecs", conditionalName)
	}
	exts, err := ParseCodecs(conditionalName+" codecs", json.RawMessage(raw))
	if err != nil {
		return nil, err
	}
	// Every codec keeps its place: a codec left out (must_understand
	// false) would move the later codecs onto the wrong bits.
	for i := range exts {
		exts[i].MustUnderstand = true
	}
	cs, err := NewCodecs(exts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", conditionalName, err)
	}
	bb := make([]BytesToBytes, len(cs))
	for i, c := range cs {
		b, ok := c.(BytesToBytes)
		if !ok {
			return nil, fmt.Errorf("%s: codecs[%d] %s is not a bytes→bytes codec", conditionalName, i, c.Name())
		}
		bb[i] = b
	}
	headerBits := (len(bb) + 7) / 8 * 8
	if _, err := cfg.Decode(conditionalName, "header_bits", &headerBits); err != nil {
		return nil, err
	}
	return NewConditional(bb, headerBits)
}

// Name implements Codec.
func (*Conditional) Name() string { return conditionalName }

// EncodedSize implements BytesToBytes: the header and the data, when no
// codec of the list changes the size; otherwise it depends on which codecs
// a chunk's header turns on.
func (c *Conditional) EncodedSize(decodedSize int) int {
	for _, in := range c.codecs {
		if in.EncodedSize(decodedSize) != decodedSize {
			return -1
		}
	}
	return c.headerBytes + decodedSize
}

// Encode implements BytesToBytes with the spec's default runtime bitmask,
// all 0s ("If no mask is set before encoding, it must default to all 0s"):
// a zero header and the data as it is.
func (c *Conditional) Encode(data []byte) ([]byte, error) {
	out := make([]byte, c.headerBytes, c.headerBytes+len(data))
	return append(out, data...), nil
}

// Decode implements BytesToBytes: it reads the header, then decodes the
// rest through the codecs whose bits are set, last codec first. Each one
// is told the size its output must have, as far as the sizes are known
// from decodedSize.
func (c *Conditional) Decode(data []byte, decodedSize int) ([]byte, error) {
	if len(data) < c.headerBytes {
		return nil, Corruptf(conditionalName, "chunk of %d bytes is shorter than its %d-byte header", len(data), c.headerBytes)
	}
	header, data := data[:c.headerBytes], data[c.headerBytes:]
	on := func(i int) bool { return header[i/8]>>(i%8)&1 == 1 }
	for i := len(c.codecs); i < 8*c.headerBytes; i++ {
		if on(i) {
			return nil, Corruptf(conditionalName, "header bit %d is set, but there are %d codecs", i, len(c.codecs))
		}
	}
	// sizes[i] is the size entering codecs[i] when encoding (-1 unknown).
	sizes := make([]int, len(c.codecs))
	size := decodedSize
	for i, in := range c.codecs {
		sizes[i] = size
		if on(i) && size >= 0 {
			size = in.EncodedSize(size)
		}
	}
	for i := len(c.codecs) - 1; i >= 0; i-- {
		if !on(i) {
			continue
		}
		in := c.codecs[i]
		out, err := in.Decode(data, sizes[i])
		if err != nil {
			return nil, Corruptf(conditionalName, "codecs[%d] %s: %w", i, in.Name(), err)
		}
		if sizes[i] >= 0 && len(out) != sizes[i] {
			return nil, Corruptf(conditionalName, "codecs[%d] %s decoded %d bytes, want %d", i, in.Name(), len(out), sizes[i])
		}
		data = out
	}
	if decodedSize >= 0 && len(data) != decodedSize {
		return nil, Corruptf(conditionalName, "decoded %d bytes, want %d", len(data), decodedSize)
	}
	if decodedSize < 0 && len(data) > UnknownSizeCap {
		return nil, Corruptf(conditionalName, "decoded %d bytes, more than the %d allowed", len(data), UnknownSizeCap)
	}
	return data, nil
}
