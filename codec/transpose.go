package codec

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
)

func init() {
	Register(newTranspose, "transpose")
}

// Transpose is the array→array codec "transpose": it permutes the
// dimensions of a chunk. Encoded shape[i] is decoded shape[Order[i]].
type Transpose struct {
	// Order is the permutation; nil with Reverse or neither for the old
	// string forms "F" (reverse the dimensions) and "C" (keep them).
	Order   []int
	Reverse bool
}

func newTranspose(cfg Config) (Codec, error) {
	raw, ok := cfg["order"]
	if !ok {
		return nil, fmt.Errorf("transpose: configuration has no order")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		switch s {
		case "C":
			return Transpose{}, nil
		case "F":
			return Transpose{Reverse: true}, nil
		}
		return nil, fmt.Errorf("transpose: order %q is neither \"C\", \"F\" nor a permutation", s)
	}
	var order []int
	if err := json.Unmarshal(raw, &order); err != nil {
		return nil, fmt.Errorf("transpose: order: %w", err)
	}
	if order == nil {
		order = []int{}
	}
	if err := checkPermutation(order); err != nil {
		return nil, err
	}
	return Transpose{Order: order}, nil
}

func checkPermutation(order []int) error {
	seen := make([]bool, len(order))
	for _, d := range order {
		if d < 0 || d >= len(order) || seen[d] {
			return fmt.Errorf("transpose: order %v is not a permutation of 0…%d", order, len(order)-1)
		}
		seen[d] = true
	}
	return nil
}

// Name implements Codec.
func (Transpose) Name() string { return "transpose" }

// perm returns the permutation for an array of rank n.
func (t Transpose) perm(n int) ([]int, error) {
	if t.Order != nil {
		if len(t.Order) != n {
			return nil, fmt.Errorf("transpose: order %v has %d dimensions, the chunk has %d", t.Order, len(t.Order), n)
		}
		return t.Order, nil
	}
	p := make([]int, n)
	for i := range p {
		p[i] = i
		if t.Reverse {
			p[i] = n - 1 - i
		}
	}
	return p, nil
}

// EncodedSpec implements ArrayToArray.
func (t Transpose) EncodedSpec(decoded ArraySpec) (ArraySpec, error) {
	p, err := t.perm(len(decoded.Shape))
	if err != nil {
		return ArraySpec{}, err
	}
	enc := decoded
	enc.Shape = make([]int, len(p))
	for i, d := range p {
		enc.Shape[i] = decoded.Shape[d]
	}
	return enc, nil
}

// Encode implements ArrayToArray.
func (t Transpose) Encode(chunk []byte, decoded ArraySpec) ([]byte, error) {
	p, err := t.perm(len(decoded.Shape))
	if err != nil {
		return nil, err
	}
	// B[pos] = A[apos] with apos[p[i]] = pos[i].
	return permute(chunk, decoded.Shape, p, decoded.DataType)
}

// Decode implements ArrayToArray.
func (t Transpose) Decode(chunk []byte, decoded ArraySpec) ([]byte, error) {
	p, err := t.perm(len(decoded.Shape))
	if err != nil {
		return nil, err
	}
	enc, err := t.EncodedSpec(decoded)
	if err != nil {
		return nil, err
	}
	inv := make([]int, len(p))
	for i, d := range p {
		inv[d] = i
	}
	return permute(chunk, enc.Shape, inv, decoded.DataType)
}

// permute returns the array of shape src[p[0]], src[p[1]] … whose element
// at pos is the element of data (shape srcShape, C order) at the position
// q with q[p[i]] = pos[i].
func permute(data []byte, srcShape []int, p []int, dt DataType) ([]byte, error) {
	n := 1
	for _, d := range srcShape {
		n *= d
	}
	if dt.Variable() {
		elems, err := splitVlen("transpose", data, n)
		if err != nil {
			return nil, err
		}
		out := make([]byte, 0, len(data))
		out = binary.LittleEndian.AppendUint32(out, uint32(n))
		forEachSource(srcShape, p, func(dst, src int) {
			out = binary.LittleEndian.AppendUint32(out, uint32(len(elems[src])))
			out = append(out, elems[src]...)
		})
		return out, nil
	}
	size := dt.Size
	if err := checkSize("transpose", len(data), n*size); err != nil {
		return nil, err
	}
	out := make([]byte, len(data))
	forEachSource(srcShape, p, func(dst, src int) {
		copy(out[dst*size:dst*size+size], data[src*size:src*size+size])
	})
	return out, nil
}

// forEachSource calls f(dst, src) for every element of the permuted array
// in C order: dst is its index there, src its index in the source array.
func forEachSource(srcShape []int, p []int, f func(dst, src int)) {
	rank := len(p)
	n := 1
	for _, d := range srcShape {
		n *= d
	}
	if n == 0 {
		return
	}
	if rank == 0 {
		f(0, 0)
		return
	}
	// Source strides in elements, then shape and strides seen in the
	// order of the permuted array.
	srcStride := make([]int, rank)
	s := 1
	for i := rank - 1; i >= 0; i-- {
		srcStride[i] = s
		s *= srcShape[i]
	}
	shape := make([]int, rank)
	stride := make([]int, rank)
	for i, d := range p {
		shape[i] = srcShape[d]
		stride[i] = srcStride[d]
	}
	idx := make([]int, rank)
	src := 0
	last := rank - 1
	for dst := 0; dst < n; {
		// Innermost dimension as a tight loop.
		for k := 0; k < shape[last]; k++ {
			f(dst, src+k*stride[last])
			dst++
		}
		// Carry into the outer dimensions.
		i := last - 1
		for ; i >= 0; i-- {
			idx[i]++
			src += stride[i]
			if idx[i] < shape[i] {
				break
			}
			src -= idx[i] * stride[i]
			idx[i] = 0
		}
		if i < 0 {
			return
		}
	}
}
