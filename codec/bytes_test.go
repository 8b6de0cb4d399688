package codec

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestBytesCodec(t *testing.T) {
	cases := []struct {
		name   string
		config string
		dt     DataType
		in     []byte
		want   []byte
	}{
		{"int16 big", `{"endian":"big"}`, DataType{"int16", 2}, []byte{1, 2, 3, 4}, []byte{2, 1, 4, 3}},
		{"int16 little", `{"endian":"little"}`, DataType{"int16", 2}, []byte{1, 2, 3, 4}, []byte{1, 2, 3, 4}},
		{"uint8 no endian", `{}`, DataType{"uint8", 1}, []byte{1, 2}, []byte{1, 2}},
		{"bool big", `{"endian":"big"}`, DataType{"bool", 1}, []byte{1, 0}, []byte{1, 0}},
		{"float32 big", `{"endian":"big"}`, DataType{"float32", 4}, []byte{1, 2, 3, 4, 5, 6, 7, 8}, []byte{4, 3, 2, 1, 8, 7, 6, 5}},
		{"float64 big", `{"endian":"big"}`, DataType{"float64", 8}, []byte{1, 2, 3, 4, 5, 6, 7, 8}, []byte{8, 7, 6, 5, 4, 3, 2, 1}},
		{"complex64 big", `{"endian":"big"}`, DataType{"complex64", 8}, []byte{1, 2, 3, 4, 5, 6, 7, 8}, []byte{4, 3, 2, 1, 8, 7, 6, 5}},
		{"complex128 big", `{"endian":"big"}`, DataType{"complex128", 16},
			[]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
			[]byte{8, 7, 6, 5, 4, 3, 2, 1, 16, 15, 14, 13, 12, 11, 10, 9}},
		{"r16 big", `{"endian":"big"}`, DataType{"r16", 2}, []byte{1, 2, 3, 4}, []byte{1, 2, 3, 4}},
		{"utf32 big", `{"endian":"big"}`, DataType{"fixed_length_utf32", 8}, []byte{1, 2, 3, 4, 5, 6, 7, 8}, []byte{4, 3, 2, 1, 8, 7, 6, 5}},
		{"int16 rank 0", `{"endian":"big"}`, DataType{"int16", 2}, []byte{1, 2}, []byte{2, 1}},
		{"odd size 3 big", `{"endian":"big"}`, DataType{"x3", 3}, []byte{1, 2, 3}, []byte{3, 2, 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCodec(t, "bytes", tc.config).(ArrayToBytes)
			spec := ArraySpec{Shape: []int{len(tc.in) / tc.dt.Size}, DataType: tc.dt}
			if tc.name == "int16 rank 0" {
				spec.Shape = nil
			}
			if got := c.EncodedSize(spec); got != len(tc.in) {
				t.Errorf("EncodedSize = %d, want %d", got, len(tc.in))
			}
			orig := append([]byte(nil), tc.in...)
			dec, err := c.Decode(tc.in, spec)
			if err != nil {
				t.Fatal(err)
			}
			equalBytes(t, "decode", dec, tc.want)
			enc, err := c.Encode(tc.want, spec)
			if err != nil {
				t.Fatal(err)
			}
			equalBytes(t, "encode", enc, tc.in)
			equalBytes(t, "input unchanged", tc.in, orig)
		})
	}
}

func TestBytesCodecErrors(t *testing.T) {
	if _, err := New("bytes", Config{"endian": json.RawMessage(`"middle"`)}); err == nil {
		t.Error("endian middle accepted")
	}
	if _, err := New("endian", Config{"endian": json.RawMessage(`1`)}); err == nil {
		t.Error("endian 1 accepted")
	}
	c := BytesCodec{Big: true}
	spec := ArraySpec{Shape: []int{2}, DataType: DataType{"int32", 4}}
	for _, n := range []int{0, 7, 9} {
		if _, err := c.Decode(make([]byte, n), spec); !errors.Is(err, ErrCorrupt) {
			t.Errorf("decode %d bytes of 2 int32: %v, want ErrCorrupt", n, err)
		}
	}
	if _, err := c.Decode(nil, ArraySpec{Shape: []int{1}, DataType: DataType{"string", 0}}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("variable-length type: %v, want ErrUnsupported", err)
	}
	if _, err := c.Decode(make([]byte, 8), ArraySpec{Shape: []int{1}, DataType: DataType{"struct", 8}}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("big-endian struct: %v, want ErrUnsupported", err)
	}
}

// newCodec builds a codec from its name and JSON configuration.
func newCodec(t testing.TB, name, config string) Codec {
	t.Helper()
	var cfg Config
	if err := json.Unmarshal([]byte(config), &cfg); err != nil {
		t.Fatal(err)
	}
	c, err := New(name, cfg)
	if err != nil {
		t.Fatalf("New(%s, %s): %v", name, config, err)
	}
	return c
}

func FuzzBytesDecode(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4}, 2, uint8(4))
	for _, b := range hostileSeeds(f, "raw-") {
		f.Add(b, 4096, uint8(2))
	}
	f.Fuzz(func(t *testing.T, data []byte, n int, size uint8) {
		if n < 0 || n > 1<<16 || size == 0 {
			return
		}
		spec := ArraySpec{Shape: []int{n}, DataType: DataType{"x", int(size)}}
		out, err := BytesCodec{Big: true}.Decode(data, spec)
		if err == nil && len(out) != spec.ByteSize() {
			t.Fatalf("Decode gave %d bytes, want %d", len(out), spec.ByteSize())
		}
	})
}
