package codec

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// TestPeerPackBitsV3 decodes the NumPy-computed encodings with the v3
// packbits codec as a v3 chain names it, and encodes the decoded values
// back to the same bytes.
func TestPeerPackBitsV3(t *testing.T) {
	peertest.NeedPython(t)
	out := peertest.Oracle(t, "codec/packbits_numpy.py")
	names := map[string]string{"|b1": "bool", "<i2": "int16", "<i4": "int32", "|u1": "uint8", "<u8": "uint64",
		"<f4": "float32", "<c8": "complex64", "<f8": "float64"}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	cases := 0
	for sc.Scan() {
		var c struct {
			Name, DType, Encoded, Decoded string
			N                             int
			Config                        json.RawMessage
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		cases++
		enc, _ := hex.DecodeString(c.Encoded)
		dec, _ := hex.DecodeString(c.Decoded)
		cs, err := ParseCodecList(json.RawMessage(`[{"name": "packbits", "configuration": ` + string(c.Config) + `}]`))
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		pb, ok := cs[0].(PackBitsV3)
		if !ok {
			t.Fatalf("%s: packbits in a v3 chain is %T, want PackBitsV3", c.Name, cs[0])
		}
		spec := ArraySpec{Shape: []int{c.N}, DataType: DataType{Name: names[c.DType], Size: len(dec) / c.N}}
		if got := pb.EncodedSize(spec); got != len(enc) {
			t.Errorf("%s: EncodedSize %d, want %d", c.Name, got, len(enc))
		}
		got, err := pb.Decode(enc, spec)
		if err != nil || !bytes.Equal(got, dec) {
			t.Errorf("%s: Decode = %x, %v\nwant %x", c.Name, got, err, dec)
		}
		back, err := pb.Encode(dec, spec)
		if err != nil || !bytes.Equal(back, enc) {
			t.Errorf("%s: Encode = %x, %v\nwant %x", c.Name, back, err, enc)
		}
	}
	if cases != 9 {
		t.Fatalf("%d cases from NumPy, want 9", cases)
	}
}

// TestPackBitsV3Bad: configurations and chunks the codec refuses.
func TestPackBitsV3Bad(t *testing.T) {
	for _, cfg := range []string{
		`{"padding_encoding": "start"}`, `{"first_bit": -1}`, `{"first_bit": 5, "last_bit": 4}`,
		`{"last_bit": "3"}`, `{"bits": 3}`,
	} {
		if _, err := ParseCodecList(json.RawMessage(`[{"name": "packbits", "configuration": ` + cfg + `}]`)); err == nil {
			t.Errorf("%s: no error", cfg)
		}
	}
	pb := PackBitsV3{Padding: "first_byte", LastBit: -1}
	b13 := ArraySpec{Shape: []int{13}, DataType: DataType{Name: "bool", Size: 1}}
	for _, data := range [][]byte{nil, {3, 0}, {3, 0, 0, 0}, {4, 0, 0}} {
		if _, err := pb.Decode(data, b13); !errors.Is(err, ErrCorrupt) {
			t.Errorf("Decode(% x): %v, want ErrCorrupt", data, err)
		}
	}
	if _, err := (PackBitsV3{LastBit: 8}).Decode([]byte{0}, ArraySpec{Shape: []int{1}, DataType: DataType{Name: "uint8", Size: 1}}); err == nil {
		t.Errorf("last_bit 8 of uint8: no error")
	}
	if _, err := (PackBitsV3{LastBit: -1}).Decode([]byte{0}, ArraySpec{Shape: []int{1}, DataType: DataType{Name: "r8", Size: 1}}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("r8: %v, want ErrUnsupported", err)
	}
}

// FuzzPackBitsV3 decodes arbitrary bytes under arbitrary configurations:
// an error or exactly the decoded size, never a panic.
func FuzzPackBitsV3(f *testing.F) {
	f.Add([]byte{3, 0xff, 0x1f}, uint8(0), uint8(0), uint8(255), uint8(0), uint8(13))
	f.Add([]byte{0xff, 0xff, 0xff}, uint8(1), uint8(2), uint8(9), uint8(2), uint8(2))
	f.Add([]byte{}, uint8(2), uint8(0), uint8(255), uint8(5), uint8(0))
	types := []DataType{{"bool", 1}, {"int16", 2}, {"uint8", 1}, {"complex64", 8}, {"int64", 8}, {"int4", 1}, {"float32", 4}}
	f.Fuzz(func(t *testing.T, data []byte, pad, first, last, typ, n uint8) {
		pb := PackBitsV3{Padding: []string{"none", "first_byte", "last_byte"}[int(pad)%3], FirstBit: int(first % 70), LastBit: int(last)}
		if last == 255 {
			pb.LastBit = -1
		}
		spec := ArraySpec{Shape: []int{int(n)}, DataType: types[int(typ)%len(types)]}
		out, err := pb.Decode(data, spec)
		if err == nil && len(out) != spec.ByteSize() {
			t.Fatalf("decoded %d bytes, want %d", len(out), spec.ByteSize())
		}
	})
}
