package codec

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// TestPeerScaleOffsetCastValue decodes (or encodes) each example through
// a v3 pipeline and compares with NumPy.
func TestPeerScaleOffsetCastValue(t *testing.T) {
	peertest.NeedPython(t)
	var cases []struct {
		Name, DType, Direction, Stored, Decoded string
		Fill                                    json.RawMessage
		Codecs                                  json.RawMessage
	}
	if err := json.Unmarshal(peertest.Oracle(t, "codec/cast_examples_numpy.py"), &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) != 5 {
		t.Fatalf("%d cases", len(cases))
	}
	for _, c := range cases {
		stored, _ := hex.DecodeString(c.Stored)
		decoded, _ := hex.DecodeString(c.Decoded)
		nt, _ := ParseNumpyType(c.DType)
		dt := DataType{Name: c.DType, Size: nt.Size}
		n := len(decoded) / dt.Size
		numT, _ := numTypeNamed(c.DType)
		fill, err := numT.parse(c.Fill)
		if err != nil {
			t.Fatal(err)
		}
		fillBytes := make([]byte, dt.Size)
		numT.store(fillBytes, fill)
		cs, err := ParseCodecList(c.Codecs)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		p, err := NewPipeline(cs, ArraySpec{Shape: []int{n}, DataType: dt, FillValue: fillBytes})
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if c.Direction == "encode" {
			got, err := p.Encode(decoded)
			if err != nil || !bytes.Equal(got, stored) {
				t.Errorf("%s: Encode = % x, %v\nwant % x", c.Name, got, err, stored)
			}
			continue
		}
		got, err := p.Decode(stored)
		if err != nil || !sameFloats(got, decoded, dt) {
			t.Errorf("%s: Decode = % x, %v\nwant % x", c.Name, got, err, decoded)
		}
	}
}

// sameFloats compares decoded arrays byte for byte, any NaN equal to any.
func sameFloats(a, b []byte, dt DataType) bool {
	if len(a) != len(b) {
		return false
	}
	t, _ := numTypeNamed(dt.Name)
	for k := 0; k < len(a); k += t.size {
		if !t.equal(t.load(a[k:]), t.load(b[k:])) {
			return false
		}
	}
	return true
}

// TestCastValueErrors: what the extensions make errors.
func TestCastValueErrors(t *testing.T) {
	for _, codecs := range []string{
		`[{"name": "cast_value", "configuration": {}}, "bytes"]`,
		`[{"name": "cast_value", "configuration": {"data_type": "uint8", "rounding": "up"}}, "bytes"]`,
		`[{"name": "cast_value", "configuration": {"data_type": "uint8", "extra": 1}}, "bytes"]`,
		`[{"name": "scale_offset", "configuration": {"factor": 2}}, "bytes"]`,
		// "wrap": "Only permitted when data_type is an integral type".
		`[{"name": "cast_value", "configuration": {"data_type": "bfloat16", "out_of_range": "wrap"}}, "bytes"]`,
	} {
		if _, err := ParseCodecList(json.RawMessage(codecs)); err == nil {
			t.Errorf("%s: no error", codecs)
		}
	}
	u8 := ArraySpec{Shape: []int{1}, DataType: DataType{Name: "uint8", Size: 1}}
	// 200 as int8 without out_of_range: an error; NaN to an integer: an error.
	c := CastValue{DataType: "int8", Rounding: "nearest-even"}
	if _, err := c.Encode([]byte{200}, u8); !errors.Is(err, ErrCorrupt) {
		t.Errorf("200 to int8: %v", err)
	}
	f64 := ArraySpec{Shape: []int{1}, DataType: DataType{Name: "float64", Size: 8}}
	if _, err := (CastValue{DataType: "uint8"}).Encode([]byte{0, 0, 0, 0, 0, 0, 0xf8, 0x7f}, f64); !errors.Is(err, ErrCorrupt) {
		t.Errorf("NaN to uint8: %v", err)
	}
	// 7 / 2 in uint8: not an integer.
	if _, err := (ScaleOffset{Scale: json.RawMessage("2")}).Decode([]byte{7}, u8); !errors.Is(err, ErrCorrupt) {
		t.Errorf("7 / 2: %v", err)
	}
	// 250 + 10 in uint8 overflows.
	if _, err := (ScaleOffset{Offset: json.RawMessage("10")}).Decode([]byte{250}, u8); !errors.Is(err, ErrCorrupt) {
		t.Errorf("250 + 10: %v", err)
	}
	// A float4_e2m1fn has neither NaN nor infinity: NaN and 1 / 0 are
	// errors, not some code.
	f4 := ArraySpec{Shape: []int{1}, DataType: DataType{Name: "float4_e2m1fn", Size: 1}}
	if _, err := (ScaleOffset{Offset: json.RawMessage(`"NaN"`)}).Decode([]byte{2}, f4); err == nil {
		t.Errorf("NaN offset on float4_e2m1fn: no error")
	}
	if _, err := (ScaleOffset{Scale: json.RawMessage("0")}).Decode([]byte{2}, f4); !errors.Is(err, ErrCorrupt) {
		t.Errorf("1 / 0 in float4_e2m1fn: %v", err)
	}
	if _, err := (ScaleOffset{}).Decode(make([]byte, 8), ArraySpec{Shape: []int{1}, DataType: DataType{Name: "complex64", Size: 8}}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("complex64: %v", err)
	}
}

// FuzzCastValue decodes arbitrary bytes through scale_offset and
// cast_value between arbitrary integer, float and ML types: an error or
// exactly the decoded size, never a panic.
func FuzzCastValue(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8}, uint8(0), uint8(3), uint8(2), int8(-3), int8(3))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xf0, 0x7f}, uint8(9), uint8(1), uint8(1), int8(0), int8(0))
	f.Add([]byte{0x80, 0x7f, 0xff, 0x00, 0x7e, 0x01, 0x7c, 0xfc}, uint8(16), uint8(19), uint8(1), int8(-1), int8(-2))
	names := []string{"int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float32", "float64",
		"float16", "bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fnuz", "float8_e5m2",
		"float8_e5m2fnuz", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn", "int2", "uint2", "int4", "uint4",
		"float8_e4m3fn"}
	f.Fuzz(func(t *testing.T, data []byte, from, to, oor uint8, off, scale int8) {
		ft, tt := names[int(from)%len(names)], names[int(to)%len(names)]
		c := CastValue{DataType: tt, Rounding: "nearest-even", OutOfRange: []string{"", "clamp", "wrap"}[oor%3]}
		spec := ArraySpec{Shape: []int{4}, DataType: DataType{Name: ft}}
		nt, _ := numTypeNamed(ft)
		spec.DataType.Size = nt.size
		enc := c.target()
		if len(data) < 4*enc.Size {
			return
		}
		out, err := c.Decode(data[:4*enc.Size], spec)
		if err == nil && len(out) != spec.ByteSize() {
			t.Fatalf("cast to %d bytes, want %d", len(out), spec.ByteSize())
		}
		if err == nil {
			so := ScaleOffset{Offset: json.RawMessage(fmtInt(int(off))), Scale: json.RawMessage(fmtInt(int(scale)))}
			if o, err := so.Decode(out, spec); err == nil && len(o) != len(out) {
				t.Fatalf("scale_offset changed the size")
			}
		}
	})
}

func fmtInt(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
