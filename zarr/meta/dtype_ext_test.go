package meta

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/codec"
)

func TestStructuredErrors(t *testing.T) {
	for _, c := range []struct {
		v2, v3 string
		want   error
	}{
		{v2: `[]`, want: ErrInvalidMetadata},
		{v2: `[["a"]]`, want: ErrInvalidMetadata},
		{v2: `[["a", "<i4"], ["a", "<f8"]]`, want: ErrInvalidMetadata},
		{v2: `[["a", "<x4"]]`, want: codec.ErrUnsupported},
		{v2: `[["a", "|O"]]`, want: codec.ErrUnsupported},
		{v2: `[["a", "<i4", [-1]]]`, want: ErrInvalidMetadata},
		{v2: `[["a", "|S1073741824", [4]]]`, want: ErrInvalidMetadata},
		{v2: `[["a", "<i4", [0]]]`, want: ErrInvalidMetadata},
		{v3: `{"name": "struct", "configuration": {"fields": []}}`, want: ErrInvalidMetadata},
		{v3: `{"name": "struct", "configuration": {"fields": [{"name": "a", "data_type": "string"}]}}`, want: ErrInvalidMetadata},
		{v3: `{"name": "struct", "configuration": {"fields": [["a", "int8"]]}}`, want: ErrInvalidMetadata},
		{v3: `{"name": "struct", "configuration": {"fields": [{"name": "a", "data_type": "int9"}]}}`, want: codec.ErrUnsupported},
		{v3: `{"name": "struct", "configuration": {"fields": [{"name": "", "data_type": "int8"}]}}`, want: ErrInvalidMetadata},
		{v3: `{"name": "null_terminated_bytes", "configuration": {"length_bytes": 0}}`, want: ErrInvalidMetadata},
	} {
		var err error
		if c.v2 != "" {
			_, err = parseV2DataType(json.RawMessage(c.v2))
		} else {
			_, err = parseV3DataType(json.RawMessage(c.v3))
		}
		if !errors.Is(err, c.want) {
			t.Errorf("%s%s: error %v, want %v", c.v2, c.v3, err, c.want)
		}
	}
}

func TestStructFillAndBytes(t *testing.T) {
	dt, err := parseV2DataType(json.RawMessage(`[["a", ">i2"], ["b", [["c", "<u2"], ["d", ">U1"]], [2]]]`))
	must(t, err)
	if dt.Size != 2+2*(2+4) || dt.NumPy != "[('a', '<i2'), ('b', [('c', '<u2'), ('d', '<U1')], (2,))]" {
		t.Fatalf("type %+v", dt)
	}
	stored := []byte{0, 1, 2, 0, 0, 0, 0, 0x41, 3, 0, 0, 0, 0, 0x42}
	logical := []byte{1, 0, 2, 0, 0x41, 0, 0, 0, 3, 0, 0x42, 0, 0, 0}
	fill, err := parseFillValue(dt, json.RawMessage(`"AAECAAAAAEEDAAAAAEI="`), FormatV2)
	if err != nil || !bytes.Equal(fill, logical) {
		t.Errorf("fill %x, %v; want %x", fill, err, logical)
	}
	c, err := bytesCodec(dt, false)
	must(t, err)
	spec := codec.ArraySpec{Shape: []int{1}, DataType: dt.codecType()}
	dec, err := c.(codec.ArrayToBytes).Decode(stored, spec)
	if err != nil || !bytes.Equal(dec, logical) {
		t.Errorf("decode %x, %v; want %x", dec, err, logical)
	}
	if enc, err := c.(codec.ArrayToBytes).Encode(logical, spec); err != nil || !bytes.Equal(enc, stored) {
		t.Errorf("encode %x, %v; want %x", enc, err, stored)
	}
	if _, err := c.(codec.ArrayToBytes).Decode(stored[1:], spec); !errors.Is(err, codec.ErrCorrupt) {
		t.Errorf("short chunk: %v", err)
	}
	for _, bad := range []string{`"AAEC"`, `{"a": 1}`, `7`} {
		if _, err := parseFillValue(dt, json.RawMessage(bad), FormatV2); !errors.Is(err, ErrInvalidMetadata) {
			t.Errorf("fill %s: %v", bad, err)
		}
	}
}

func FuzzParseStructured(f *testing.F) {
	f.Add([]byte(`[["a", ">i2"], ["b", [["c", "<u2"], ["d", ">U1"]], [2]]]`))
	f.Add([]byte(`[["x", "<f8", 3], ["", "|V3"]]`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		dt, err := parseStructured(doc)
		if err != nil {
			if !errors.Is(err, ErrInvalidMetadata) && !errors.Is(err, codec.ErrUnsupported) {
				t.Fatalf("error %v", err)
			}
			return
		}
		if dt.Size <= 0 || dt.Size > maxStringItem || !strings.HasPrefix(dt.NumPy, "[(") {
			t.Fatalf("type %+v", dt)
		}
		b := make([]byte, 2*dt.Size)
		swapFields(b, dt.fields)
	})
}

func FuzzParseV3Struct(f *testing.F) {
	f.Add([]byte(`{"fields": [{"name": "point", "data_type": {"name": "struct", "configuration": {"fields": [{"name": "x", "data_type": "int8"}]}}}, {"name": "t", "data_type": "float32"}]}`))
	f.Add([]byte(`{"fields": [["a", "uint16"], ["b", "float16"]]}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		var cfg codec.Config
		if json.Unmarshal(doc, &cfg) != nil {
			return
		}
		for _, name := range []string{"struct", "structured"} {
			dt, err := parseV3Struct(name, cfg)
			if err != nil {
				if !errors.Is(err, ErrInvalidMetadata) && !errors.Is(err, codec.ErrUnsupported) {
					t.Fatalf("error %v", err)
				}
				continue
			}
			if dt.Size <= 0 || dt.Size > maxStringItem {
				t.Fatalf("type %+v", dt)
			}
			_, _ = parseFillValue(dt, json.RawMessage(`{"a": 1}`), FormatV3)
		}
	})
}

// TestDataTypeKind: each data type's kind, size and unit, as the views of
// foreign formats read them (they used to parse the NumPy string again).
func TestDataTypeKind(t *testing.T) {
	for _, c := range []struct {
		v2, v3     string // a v2 typestr or a v3 data_type document
		kind       byte
		size       int
		unit, nump string
	}{
		{v2: "<f4", kind: 'f', size: 4, nump: "<f4"},
		{v2: ">i2", kind: 'i', size: 2, nump: "<i2"},
		{v2: "|b1", kind: 'b', size: 1, nump: "|b1"},
		{v2: "|S7", kind: 'S', size: 7, nump: "|S7"},
		{v2: "<U7", kind: 'U', size: 28, nump: "<U7"},
		{v2: "|V3", kind: 'V', size: 3, nump: "|V3"},
		{v2: "<M8[ns]", kind: 'M', size: 8, unit: "ns", nump: "<M8[ns]"},
		{v2: "<m8[10s]", kind: 'm', size: 8, unit: "10s", nump: "<m8[10s]"},
		{v3: `"uint64"`, kind: 'u', size: 8, nump: "<u8"},
		{v3: `"complex_float64"`, kind: 'c', size: 16, nump: "<c16"},
		{v3: `"r24"`, kind: 'V', size: 3, nump: "|V3"},
		{v3: `{"name": "fixed_length_utf32", "configuration": {"length_bytes": 8}}`, kind: 'U', size: 8, nump: "<U2"},
		{v3: `{"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 10}}`, kind: 'M', size: 8, unit: "10s", nump: "<M8[10s]"},
		{v3: `"bfloat16"`, size: 2, nump: "bfloat16"},
		{v3: `"string"`},
	} {
		var dt dtype
		var err error
		if c.v2 != "" {
			dt, err = parseTypestr(c.v2)
		} else {
			dt, err = parseV3DataType(json.RawMessage(c.v3))
		}
		if err != nil {
			t.Errorf("%s%s: %v", c.v2, c.v3, err)
			continue
		}
		got := dt.DataType
		if got.Kind != c.kind || got.Size != c.size || got.Unit != c.unit || got.NumPy != c.nump {
			t.Errorf("%s%s: kind %q size %d unit %q numpy %q; want %q %d %q %q", c.v2, c.v3, got.Kind, got.Size, got.Unit, got.NumPy, c.kind, c.size, c.unit, c.nump)
		}
	}
	st, err := parseV2DataType(json.RawMessage(`[["a", "<i4"], ["b", "<f8"]]`))
	if err != nil || st.Kind != 0 {
		t.Errorf("structured type: kind %q, %v; want none", st.Kind, err)
	}
}
