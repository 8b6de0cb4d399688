package codec

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// TestPeerReshape: the extension's example ("chunk_shape": [100, 50, 64,
// 3] with "shape": [[0, 1], [2], 3], here on a [4, 5, 6, 3] chunk),
// followed by a transpose that sees the reshaped [20, 6, 3] array: NumPy
// computes the stored bytes as np.transpose(a.reshape(20, 6, 3), (2, 0,
// 1)) ("ravel(B) == ravel(A)"), and the pipeline decodes them to a.
func TestPeerReshape(t *testing.T) {
	peertest.NeedPython(t)
	out := peertest.Oracle(t, "codec/peer_reshape.py")
	n := len(out) / 2
	want, stored := out[:n], out[n:]
	cs, err := ParseCodecList(json.RawMessage(`[{"name": "reshape", "configuration": {"shape": [[0, 1], [2], 3]}},
		{"name": "transpose", "configuration": {"order": [2, 0, 1]}}, {"name": "bytes", "configuration": {"endian": "little"}}]`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPipeline(cs, ArraySpec{Shape: []int{4, 5, 6, 3}, DataType: DataType{Name: "uint16", Size: 2}, FillValue: []byte{0, 0}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Decode(stored)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("Decode: %v (equal %v)", err, bytes.Equal(got, want))
	}
	if enc, err := p.Encode(want); err != nil || !bytes.Equal(enc, stored) {
		t.Errorf("Encode: %v", err)
	}
}

// TestReshapeShapes: the sizes -1 and input dimensions resolve, and the
// shapes the extension forbids are refused.
func TestReshapeShapes(t *testing.T) {
	in := ArraySpec{Shape: []int{4, 5, 6, 3}, DataType: DataType{Name: "uint8", Size: 1}}
	for _, c := range []struct {
		shape string
		want  []int // nil: an error
	}{
		{`[[0, 1], [2], 3]`, []int{20, 6, 3}},
		{`[-1, 3]`, []int{120, 3}},
		{`[[0, 1, 2, 3]]`, []int{360}},
		{`[4, -1, [3]]`, []int{4, 30, 3}},
		{`[7, -1]`, nil},        // 360 is no multiple of 7
		{`[[1], [0], 18]`, nil}, // "[[1], [0]]" is not allowed
		{`[[0, 2], 5, 3]`, nil}, // dimension 1 in between: not in place
		{`[360, 2]`, nil},       // too many elements
		{`[-1, -1]`, nil},       // -1 at most once
		{`[[0, 1], 9999999999999999, 0]`, nil},
		{`[]`, nil},
	} {
		cfg := Config{"shape": json.RawMessage(c.shape)}
		r, err := newReshape(cfg)
		var got ArraySpec
		if err == nil {
			got, err = r.(Reshape).EncodedSpec(in)
		}
		switch {
		case c.want == nil && err == nil:
			t.Errorf("%s: shape %v, want an error", c.shape, got.Shape)
		case c.want != nil && (err != nil || !equalInts(got.Shape, c.want)):
			t.Errorf("%s: %v %v, want %v", c.shape, got.Shape, err, c.want)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// FuzzReshape parses arbitrary shape configurations against arbitrary
// chunk shapes: an error, or a shape of the same number of elements.
func FuzzReshape(f *testing.F) {
	f.Add(`[[0, 1], [2], 3]`, uint8(4), uint8(5), uint8(6))
	f.Add(`[-1, [2]]`, uint8(1), uint8(0), uint8(255))
	f.Add(`[[2], [1, 0], -1]`, uint8(3), uint8(3), uint8(3))
	f.Fuzz(func(t *testing.T, shape string, a, b, c uint8) {
		r, err := newReshape(Config{"shape": json.RawMessage(shape)})
		if err != nil {
			return
		}
		in := ArraySpec{Shape: []int{int(a), int(b), int(c)}, DataType: DataType{Name: "uint8", Size: 1}}
		out, err := r.(Reshape).EncodedSpec(in)
		if err == nil && prod(out.Shape) != in.NumElements() {
			t.Fatalf("%v holds %d elements, %v %d", out.Shape, prod(out.Shape), in.Shape, in.NumElements())
		}
	})
}
