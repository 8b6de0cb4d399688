package codec

import (
	"encoding/json"
	"fmt"
)

func init() {
	Register(newReshape, "reshape")
}

// Reshape is the "reshape" codec of zarr-extensions (codecs/reshape): an
// array→array codec that gives the chunk another shape of the same
// elements in the same C order, so that encoding and decoding leave the
// bytes as they are; only the shape the next codec sees changes.
type Reshape struct {
	// Shape is per output dimension a size (> 0), -1 (the one the others
	// leave), or the input dimensions whose product it is (Dims).
	Shape []int
	Dims  [][]int // nil where Shape gives the size
}

func newReshape(cfg Config) (Codec, error) {
	var raw []json.RawMessage
	for k := range cfg {
		if k != "shape" {
			return nil, fmt.Errorf("reshape: unknown configuration member %q", k)
		}
	}
	if ok, err := cfg.Decode("reshape", "shape", &raw); err != nil || !ok || len(raw) == 0 {
		return nil, fmt.Errorf("reshape: shape must be a non-empty list")
	}
	c := Reshape{Shape: make([]int, len(raw)), Dims: make([][]int, len(raw))}
	auto, last := false, -1
	for i, r := range raw {
		if n, ok := plainInt(r); ok {
			if n == -1 && !auto {
				auto = true
			} else if n < 1 {
				return nil, fmt.Errorf("reshape: shape[%d] = %d is neither positive nor the one -1", i, n)
			}
			c.Shape[i] = n
			continue
		}
		if err := json.Unmarshal(r, &c.Dims[i]); err != nil {
			return nil, fmt.Errorf("reshape: shape[%d] %s is neither a size nor a list of input dimensions", i, jsonText(r))
		}
		for _, d := range c.Dims[i] {
			if d <= last {
				return nil, fmt.Errorf("reshape: input dimensions must rise strictly across shape")
			}
			last = d
		}
	}
	return c, nil
}

// Name implements Codec.
func (Reshape) Name() string { return "reshape" }

// EncodedSpec implements ArrayToArray: the output shape for the input
// chunk shape, checked as the extension requires.
func (c Reshape) EncodedSpec(decoded ArraySpec) (ArraySpec, error) {
	in := decoded.Shape
	total := decoded.NumElements()
	out := make([]int, len(c.Shape))
	auto := -1
	known := 1
	for i := range c.Shape {
		switch {
		case c.Dims[i] != nil:
			out[i] = 1
			for _, d := range c.Dims[i] {
				if d >= len(in) {
					return ArraySpec{}, fmt.Errorf("reshape: input dimension %d of a %d-dimensional chunk", d, len(in))
				}
				out[i] *= in[d]
			}
		case c.Shape[i] == -1:
			auto = i
			continue
		default:
			out[i] = c.Shape[i]
		}
		if out[i] == 0 || known > total/out[i] { // known × out[i] would pass total
			return ArraySpec{}, fmt.Errorf("reshape: shape %v does not hold the %d elements of %v", out, total, in)
		}
		known *= out[i]
	}
	if auto >= 0 {
		if known == 0 || total%known != 0 {
			return ArraySpec{}, fmt.Errorf("reshape: no size for -1 makes %v hold the %d elements of %v", out, total, in)
		}
		out[auto] = total / known
		known = total
	}
	if known != total {
		return ArraySpec{}, fmt.Errorf("reshape: shape %v does not hold the %d elements of %v", out, total, in)
	}
	// Output dimensions given by input dimensions must line up with them:
	// the elements before and after are the same in both shapes.
	for i, dims := range c.Dims {
		if len(dims) == 0 {
			continue
		}
		// prod(B_shape[:i]) == prod(A_shape[:dims[0]]) and
		// prod(B_shape[i+1:]) == prod(A_shape[dims[k-1]+1:]), as the
		// extension requires (all products are at most total).
		if prod(out[:i]) != prod(in[:dims[0]]) || prod(out[i+1:]) != prod(in[dims[len(dims)-1]+1:]) {
			return ArraySpec{}, fmt.Errorf("reshape: output dimension %d is not input dimensions %v in place", i, dims)
		}
	}
	spec := decoded
	spec.Shape = out
	return spec, nil
}

// Encode implements ArrayToArray: the bytes are unchanged.
func (c Reshape) Encode(chunk []byte, decoded ArraySpec) ([]byte, error) {
	return c.same(chunk, decoded)
}

// Decode implements ArrayToArray: the bytes are unchanged.
func (c Reshape) Decode(chunk []byte, decoded ArraySpec) ([]byte, error) {
	return c.same(chunk, decoded)
}

func (c Reshape) same(chunk []byte, decoded ArraySpec) ([]byte, error) {
	if _, err := c.EncodedSpec(decoded); err != nil {
		return nil, err
	}
	if n := decoded.ByteSize(); n >= 0 {
		if err := checkSize("reshape", len(chunk), n); err != nil {
			return nil, err
		}
	}
	return chunk, nil
}

// prod returns the product of dims (1 for none).
func prod(dims []int) int {
	n := 1
	for _, d := range dims {
		n *= d
	}
	return n
}
