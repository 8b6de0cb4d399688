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
