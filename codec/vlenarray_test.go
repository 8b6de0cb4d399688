package codec

import (
	"encoding/binary"
	"errors"
	"testing"
)

// TestVLenArrayBad: configurations and chunks VLenArray refuses.
func TestVLenArrayBad(t *testing.T) {
	for _, cfg := range []Config{nil, {"dtype": []byte(`"<c8"`)}, {"dtype": []byte(`5`)}, {"dtype": []byte(`"|O"`)}} {
		if _, err := New("vlen-array", cfg); err == nil {
			t.Errorf("%v: no error", cfg)
		}
	}
	c := VLenArray{DType: NumpyType{Kind: 'i', Size: 4}}
	spec := ArraySpec{Shape: []int{1}, DataType: DataType{Name: ObjectType}}
	odd := binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 1), 3)
	for _, data := range [][]byte{nil, {1, 0, 0, 0}, append(odd, 1, 2, 3)} {
		if _, err := c.Decode(data, spec); !errors.Is(err, ErrCorrupt) {
			t.Errorf("Decode(% x): %v, want ErrCorrupt", data, err)
		}
	}
	if _, err := c.Decode([]byte{0, 0, 0, 0}, ArraySpec{DataType: DataType{Name: "int32", Size: 4}}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("fixed-size type: %v", err)
	}
}

// FuzzVLenArray decodes arbitrary bytes: an error or the vlen layout of
// n elements, never a panic.
func FuzzVLenArray(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0}, uint8(1), byte('i'))
	f.Add([]byte{2, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0xc0, 0x7f, 0, 0, 0x80, 0xff}, uint8(2), byte('f'))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff}, uint8(3), byte('b'))
	f.Fuzz(func(t *testing.T, data []byte, n uint8, kind byte) {
		dt := []NumpyType{{Kind: 'i', Size: 2, Big: true}, {Kind: 'f', Size: 4}, {Kind: 'b', Size: 1}, {Kind: 'u', Size: 8}}[kind%4]
		out, err := VLenArray{DType: dt}.Decode(data, ArraySpec{Shape: []int{int(n)}, DataType: DataType{Name: ObjectType}})
		if err == nil {
			if _, err := splitVlen("check", out, int(n)); err != nil {
				t.Fatalf("output is not %d elements: %v", n, err)
			}
		}
	})
}
