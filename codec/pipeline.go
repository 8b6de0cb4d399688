package codec

import "fmt"

// Pipeline is a validated chain of codecs for one chunk shape, as a Zarr v3
// "codecs" list: array→array codecs, then one array→bytes codec, then
// bytes→bytes codecs. It is safe for concurrent use.
type Pipeline struct {
	arrayToArray []ArrayToArray
	arrayToBytes ArrayToBytes
	bytesToBytes []BytesToBytes
	// specs[i] is the spec entering arrayToArray[i]; specs[len] enters arrayToBytes.
	specs []ArraySpec
	// sizes[i] is the decoded size of bytesToBytes[i] (-1 unknown).
	sizes []int
}

// NewPipeline checks the order of codecs and precomputes the spec each one
// sees for a chunk described by spec.
func NewPipeline(codecs []Codec, spec ArraySpec) (*Pipeline, error) {
	p := &Pipeline{specs: make([]ArraySpec, 1, 1+len(codecs)), sizes: make([]int, 0, len(codecs))}
	p.specs[0] = spec
	for _, c := range codecs {
		switch c := c.(type) {
		case ArrayToArray:
			if p.arrayToBytes != nil {
				return nil, fmt.Errorf("codec pipeline: array→array codec %s after the array→bytes codec", c.Name())
			}
			next, err := c.EncodedSpec(p.specs[len(p.specs)-1])
			if err != nil {
				return nil, err
			}
			p.arrayToArray = append(p.arrayToArray, c)
			p.specs = append(p.specs, next)
		case ArrayToBytes:
			if p.arrayToBytes != nil {
				return nil, fmt.Errorf("codec pipeline: two array→bytes codecs (%s and %s)", p.arrayToBytes.Name(), c.Name())
			}
			p.arrayToBytes = c
			p.sizes = append(p.sizes, c.EncodedSize(p.specs[len(p.specs)-1]))
		case BytesToBytes:
			if p.arrayToBytes == nil {
				return nil, fmt.Errorf("codec pipeline: bytes→bytes codec %s before the array→bytes codec", c.Name())
			}
			prev := p.sizes[len(p.sizes)-1]
			next := -1
			if prev >= 0 {
				next = c.EncodedSize(prev)
			}
			p.bytesToBytes = append(p.bytesToBytes, c)
			p.sizes = append(p.sizes, next)
		default:
			return nil, fmt.Errorf("codec pipeline: %s is not an array→array, array→bytes or bytes→bytes codec", c.Name())
		}
	}
	if p.arrayToBytes == nil {
		return nil, fmt.Errorf("codec pipeline: no array→bytes codec")
	}
	return p, nil
}

// Spec returns the spec of the decoded chunk.
func (p *Pipeline) Spec() ArraySpec { return p.specs[0] }

// Codecs returns the codecs in encoding order.
func (p *Pipeline) Codecs() []Codec {
	var cs []Codec
	for _, c := range p.arrayToArray {
		cs = append(cs, c)
	}
	cs = append(cs, p.arrayToBytes)
	for _, c := range p.bytesToBytes {
		cs = append(cs, c)
	}
	return cs
}

// Decode turns a stored chunk into the decoded chunk: exactly
// Spec().ByteSize() bytes for fixed-size types.
func (p *Pipeline) Decode(data []byte) ([]byte, error) {
	var err error
	for i := len(p.bytesToBytes) - 1; i >= 0; i-- {
		want := p.sizes[i]
		if data, err = p.bytesToBytes[i].Decode(data, want); err != nil {
			return nil, err
		}
		if want >= 0 && len(data) != want {
			return nil, Corruptf(p.bytesToBytes[i].Name(), "decoded %d bytes, want %d", len(data), want)
		}
	}
	n := len(p.arrayToArray)
	if data, err = p.arrayToBytes.Decode(data, p.specs[n]); err != nil {
		return nil, err
	}
	if want := p.specs[n].ByteSize(); want >= 0 && len(data) != want {
		return nil, Corruptf(p.arrayToBytes.Name(), "decoded %d bytes, want %d", len(data), want)
	}
	for i := n - 1; i >= 0; i-- {
		if data, err = p.arrayToArray[i].Decode(data, p.specs[i]); err != nil {
			return nil, err
		}
	}
	return data, nil
}

// Encode turns a decoded chunk into the bytes to store.
func (p *Pipeline) Encode(chunk []byte) ([]byte, error) {
	if want := p.specs[0].ByteSize(); want >= 0 && len(chunk) != want {
		return nil, fmt.Errorf("codec pipeline: encode %d bytes, want %d", len(chunk), want)
	}
	var err error
	for i, c := range p.arrayToArray {
		if chunk, err = c.Encode(chunk, p.specs[i]); err != nil {
			return nil, err
		}
	}
	if chunk, err = p.arrayToBytes.Encode(chunk, p.specs[len(p.arrayToArray)]); err != nil {
		return nil, err
	}
	for _, c := range p.bytesToBytes {
		if chunk, err = c.Encode(chunk); err != nil {
			return nil, err
		}
	}
	return chunk, nil
}

// CanDecodeInto reports whether DecodeInto can decode this pipeline's
// chunks into a caller's buffer: fixed-size elements, no array→array
// codec, and either an array→bytes codec that decodes into a buffer
// (ArrayDecoderInto) or the bytes codec after a first bytes→bytes codec
// (the last to decode) that does (DecoderInto, or one of the codecs
// decodeInto knows). A chain of the little-endian bytes codec alone
// decodes to its input, with no copy to save, and answers false.
func (p *Pipeline) CanDecodeInto() bool {
	if len(p.arrayToArray) > 0 || p.specs[0].ByteSize() <= 0 {
		return false
	}
	if _, ok := p.arrayToBytes.(ArrayDecoderInto); ok {
		return true
	}
	b, ok := p.arrayToBytes.(BytesCodec)
	if !ok {
		return false
	}
	if len(p.bytesToBytes) == 0 {
		return b.Big
	}
	_, into := p.bytesToBytes[0].(DecoderInto)
	return b.Big || into
}

// DecodeInto decodes a stored chunk into dst, which must be exactly
// Spec().ByteSize() bytes; call it only when CanDecodeInto. Like Decode,
// it fails with an error matching ErrCorrupt unless data decodes to
// exactly that size. dst's contents are undefined on failure.
func (p *Pipeline) DecodeInto(dst, data []byte) error {
	if !p.CanDecodeInto() {
		return fmt.Errorf("codec pipeline: chain %s cannot decode into a buffer", p.names())
	}
	spec := p.specs[0]
	if len(dst) != spec.ByteSize() {
		return fmt.Errorf("codec pipeline: decode into %d bytes, want %d", len(dst), spec.ByteSize())
	}
	var err error
	for i := len(p.bytesToBytes) - 1; i >= 1; i-- {
		want := p.sizes[i]
		if data, err = p.bytesToBytes[i].Decode(data, want); err != nil {
			return err
		}
		if want >= 0 && len(data) != want {
			return Corruptf(p.bytesToBytes[i].Name(), "decoded %d bytes, want %d", len(data), want)
		}
	}
	if ad, ok := p.arrayToBytes.(ArrayDecoderInto); ok {
		if len(p.bytesToBytes) > 0 {
			want := p.sizes[0]
			if data, err = p.bytesToBytes[0].Decode(data, want); err != nil {
				return err
			}
			if want >= 0 && len(data) != want {
				return Corruptf(p.bytesToBytes[0].Name(), "decoded %d bytes, want %d", len(data), want)
			}
		}
		return ad.DecodeInto(dst, data, spec)
	}
	b := p.arrayToBytes.(BytesCodec)
	if len(p.bytesToBytes) > 0 {
		c := p.bytesToBytes[0]
		if !b.Big {
			return c.(DecoderInto).DecodeInto(dst, data)
		}
		if data, err = c.Decode(data, p.sizes[0]); err != nil {
			return err
		}
	}
	if err := checkSize("bytes", len(data), len(dst)); err != nil {
		return err
	}
	unit, err := SwapUnit(spec.DataType)
	if err != nil {
		return err
	}
	swapInto(dst, data, unit)
	return nil
}

// names lists the pipeline's codecs, for messages.
func (p *Pipeline) names() string {
	var s []byte
	for i, c := range p.Codecs() {
		if i > 0 {
			s = append(s, ", "...)
		}
		s = append(s, c.Name()...)
	}
	return "[" + string(s) + "]"
}
