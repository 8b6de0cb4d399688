package meta

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// halfToFloat64 converts IEEE 754 binary16 bits to a float64.
func halfToFloat64(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	e := int(h>>10) & 0x1f
	m := float64(h & 0x3ff)
	switch e {
	case 0:
		return sign * m * 0x1p-24
	case 31:
		if m != 0 {
			return math.NaN()
		}
		return math.Inf(int(sign))
	}
	return sign * math.Ldexp(1+m/1024, e-15)
}

func TestHalfRoundTrip(t *testing.T) {
	// Every finite half converts to float64 and back to itself.
	for h := range uint32(1 << 16) {
		f := halfToFloat64(uint16(h))
		if math.IsNaN(f) {
			continue
		}
		if got := halfFromFloat64(f); got != uint16(h) {
			t.Fatalf("half %#04x → %v → %#04x", h, f, got)
		}
	}
	// Halfway cases round to even.
	if got := halfFromFloat64(1 + 1.0/2048); got != 0x3c00 {
		t.Errorf("1+2^-11 → %#04x, want 0x3c00", got)
	}
	if got := halfFromFloat64(1 + 3.0/2048); got != 0x3c02 {
		t.Errorf("1+3·2^-11 → %#04x, want 0x3c02", got)
	}
}

func FuzzParseV2Array(f *testing.F) {
	f.Add([]byte(`{"zarr_format": 2, "shape": [10, 20], "chunks": [5, 5], "dtype": "<f4", "compressor": {"id": "zlib", "level": 1}, "filters": null, "fill_value": "NaN", "order": "F"}`))
	f.Add([]byte(`{"zarr_format": 2, "shape": [], "chunks": [], "dtype": "|O", "filters": [{"id": "vlen-utf8"}], "fill_value": ""}`))
	f.Add([]byte(`{"zarr_format": 2, "shape": [3], "chunks": [1], "dtype": "<U3", "fill_value": "abc", "dimension_separator": "/"}`))
	f.Add([]byte(`{"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "<i2", "compressor": null, "filters": null, "fill_value": 0, "order": "C"}`))
	for _, b := range hostileSeeds(f, "v2-") {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		a, err := ParseV2Array(doc, json.RawMessage(`{"_ARRAY_DIMENSIONS": ["x"]}`))
		if err == nil && a.err == nil && a.Size() < 0 {
			t.Errorf("negative size %d", a.Size())
		}
	})
}

func FuzzParseV3Array(f *testing.F) {
	f.Add([]byte(`{"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "int8",
	"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
	"chunk_key_encoding": {"name": "default"}, "fill_value": 5, "codecs": [{"name": "bytes"}, {"name": "gzip", "configuration": {"level": 1}}]}`))
	f.Add([]byte(`{"zarr_format": 3, "node_type": "array", "shape": [2, 3], "data_type": {"name": "fixed_length_utf32", "configuration": {"length_bytes": 8}}, "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1, 2]}}, "chunk_key_encoding": {"name": "v2", "configuration": {"separator": "/"}}, "fill_value": "ab", "codecs": [{"name": "transpose", "configuration": {"order": [1, 0]}}, {"name": "bytes", "configuration": {"endian": "big"}}], "dimension_names": ["x", null]}`))
	f.Add([]byte(`{"zarr_format": 3, "node_type": "group", "x": {"must_understand": false}}`))
	f.Add([]byte(`{"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "int16",
		"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
		"chunk_key_encoding": {"name": "default"}, "fill_value": 0,
		"codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}`))
	for _, b := range hostileSeeds(f, "v3-") {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		n, err := ParseV3Node(doc)
		if err != nil || n.Kind != KindArray {
			return
		}
		if a, err := ParseV3Array(n); err == nil && a.err == nil && a.Size() < 0 {
			t.Errorf("negative size %d", a.Size())
		}
	})
}

func FuzzTypestr(f *testing.F) {
	for _, s := range []string{"<f4", ">i8", "|b1", "|S7", "<U7", "|V8", "<M8[ns]", "<m8[10s]", "|O"} {
		f.Add(s)
	}
	for _, m := range hostileMembers(f, "v2-", "dtype") {
		var s string
		if json.Unmarshal(m, &s) == nil {
			f.Add(s)
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		dt, err := parseTypestr(s)
		if err == nil && dt.kind != 'O' && (dt.Size <= 0 || dt.NumPy == "") {
			t.Errorf("%q parsed to %+v", s, dt)
		}
	})
}

func FuzzFillValue(f *testing.F) {
	f.Add(`"float16"`, `"0x7e00"`, true)
	f.Add(`"complex128"`, `[1, "-Infinity"]`, true)
	f.Add(`"uint64"`, `18446744073709551615`, true)
	f.Add(`"r24"`, `[1, 2, 3]`, true)
	f.Add(`"<U3"`, `"abc"`, false)
	f.Add(`"|S2"`, `"YWI="`, false)
	for _, v3 := range []bool{false, true} {
		prefix, typeKey := "v2-", "dtype"
		if v3 {
			prefix, typeKey = "v3-", "data_type"
		}
		for _, doc := range hostileSeeds(f, prefix) {
			var obj map[string]json.RawMessage
			if json.Unmarshal(doc, &obj) == nil && obj[typeKey] != nil && obj["fill_value"] != nil {
				f.Add(string(obj[typeKey]), string(obj["fill_value"]), v3)
			}
		}
	}
	f.Fuzz(func(t *testing.T, dtypeJSON, fill string, v3 bool) {
		var dt dtype
		var err error
		format := FormatV2
		if v3 {
			format = FormatV3
			dt, err = parseV3DataType(json.RawMessage(dtypeJSON))
		} else {
			dt, err = parseV2DataType(json.RawMessage(dtypeJSON))
		}
		if err != nil || dt.Size > 1<<16 {
			return
		}
		b, err := parseFillValue(dt, json.RawMessage(fill), format)
		if err == nil && !dt.Variable() && len(b) != dt.Size {
			t.Errorf("fill %s for %s: %d bytes, want %d", fill, dtypeJSON, len(b), dt.Size)
		}
	})
}

// FuzzPlainMembers checks the one-pass readers of a .zarray's members
// against the general ones they spare: plainDims against parseDimsSlowly,
// plainString against json.Unmarshal, parseV2Codec against
// parseV2CodecSlowly and plainChainJSON against json.Marshal.
func FuzzPlainMembers(f *testing.F) {
	for _, s := range []string{`[131072, 1024]`, `[]`, `[ 1 ,2 ]`, `[0]`, `[-0]`, `[01]`, `[1.0]`, `[1e3]`, `[9223372036854775808]`,
		`[-1]`, `null`, `[1,]`, `"<f4"`, `"a\"b"`, `"\u00e9"`, `"é"`, `"C"`, `""`,
		`{"blocksize": 0, "clevel": 5, "cname": "lz4", "id": "blosc", "shuffle": 1}`, `{"id": "zlib", "level": 1}`,
		`{"id": "x", "a": [1, 2], "b": "<&>", "c": {"d": null}, "é": 1}`, `{"id": "", "a": 1}`, `{"id": 5}`, `{"id": "a", "id": "b"}`,
		`{"id": "a\u0062", "ID": 1, "k": "\u2028"}`, `{"id": "<x>", "k": 1}`} {
		f.Add([]byte(s))
	}
	f.Add([]byte("[" + strings.Repeat("1,", 32) + "1]"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, positive := range []bool{false, true} {
			if dims, ok := plainDims(raw, positive); ok {
				want, err := parseDimsSlowly("dims", raw, positive)
				if err != nil || !slices.Equal(dims, want) || dims == nil {
					t.Fatalf("plainDims(%q, %v) = %v; slowly %v, %v", raw, positive, dims, want, err)
				}
			}
		}
		if s, ok := plainString(raw); ok {
			var want string
			if err := json.Unmarshal(raw, &want); err != nil || s != want {
				t.Fatalf("plainString(%q) = %q; json.Unmarshal %q, %v", raw, s, want, err)
			}
		}
		if !json.Valid(raw) {
			return // parseV2Codec reads members of valid documents
		}
		got, gotErr := parseV2Codec("codec", raw)
		want, wantErr := parseV2CodecSlowly("codec", raw)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || got.id != want.id || len(got.cfg) != len(want.cfg) {
			t.Fatalf("parseV2Codec(%q) = %v, %v; slowly %v, %v", raw, got, gotErr, want, wantErr)
		}
		for k, v := range want.cfg {
			if !bytes.Equal(got.cfg[k], v) {
				t.Fatalf("parseV2Codec(%q): %q is %q, slowly %q", raw, k, got.cfg[k], v)
			}
		}
		if gotErr != nil {
			return
		}
		for _, chain := range [][]v2Codec{{got}, {got, got}} {
			b, ok := plainChainJSON(chain[1:], &chain[0])
			wantJSON, err := marshalChainJSON(chain[1:], &chain[0])
			if err != nil {
				t.Fatal(err)
			}
			if ok && !bytes.Equal(b, wantJSON) {
				t.Fatalf("plainChainJSON(%q) = %s; json.Marshal %s", raw, b, wantJSON)
			}
		}
	})
}

// FuzzPlainNumbers checks the one-pass readers of fill values against the
// general ones: putInt against putIntSlowly, and the value putFloat reads
// (floatValue) against encoding/json's (floatValueSlowly).
func FuzzPlainNumbers(f *testing.F) {
	for _, s := range []string{`0`, `-0`, `1`, `-1`, `255`, `256`, `-128`, `-129`, `01`, `1.0`, `1e3`, `18446744073709551615`,
		`9223372036854775807`, `-9223372036854775808`, `0.0`, `1e400`, `-1.5e-3`, `"NaN"`, `"Infinity"`, `"-Infinity"`, `"0x7fc00000"`,
		`"0x7e00"`, `"abc"`, `"\u004eaN"`, ` 1`, `null`, `true`, `[1]`, `-`, `""`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, size := range []int{1, 2, 4, 8} {
			for _, unsigned := range []bool{false, true} {
				got, want := make([]byte, size), make([]byte, size)
				gotErr, wantErr := putInt(got, unsigned, raw), putIntSlowly(want, unsigned, raw)
				if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || gotErr == nil && !bytes.Equal(got, want) {
					t.Fatalf("putInt(%q, %d bytes, unsigned %v) = %x, %v; slowly %x, %v", raw, size, unsigned, got, gotErr, want, wantErr)
				}
			}
		}
		s, n, isString, err := floatValue(raw)
		ws, wn, wIsString, wErr := floatValueSlowly(raw)
		if s != ws || n != wn || isString != wIsString || fmt.Sprint(err) != fmt.Sprint(wErr) {
			t.Fatalf("floatValue(%q) = %q, %q, %v, %v; slowly %q, %q, %v, %v", raw, s, n, isString, err, ws, wn, wIsString, wErr)
		}
	})
}

// floatValueSlowly is floatValue with encoding/json alone, as putFloat
// read its value before it read plain strings and numbers itself.
func floatValueSlowly(raw json.RawMessage) (s string, n json.Number, isString bool, err error) {
	if json.Unmarshal(raw, &s) == nil {
		return s, "", true, nil
	}
	if err := json.Unmarshal(raw, &n); err != nil {
		return "", "", false, fmt.Errorf("not a number")
	}
	return "", n, false, nil
}

// FuzzArrayDimensions checks dimensionNamesFromAttrs, which reads usual
// attributes in one pass (plainArrayDimensions), against encoding/json.
func FuzzArrayDimensions(f *testing.F) {
	for _, d := range v2Docs {
		f.Add([]byte(d.attr))
	}
	for _, s := range []string{`{"_ARRAY_DIMENSIONS": ["x", "y"]}`, `{"_array_dimensions": ["x"]}`, `{"_ARRAY_DIMENSIONS": ["x", null]}`,
		`{"_ARRAY_DIMENSIONS": []}`, `{"_ARRAY_DIMENSIONS": "x"}`, `{"_ARRAY_DIMENSIONS": ["\u00e9", "é"]}`, `{"_ARRAY_DIMENSIONS": [1]}`,
		`{"_ARRAY_DIMENSIONS": ["x"], "_ARRAY_DIMENSIONS": ["y"]}`, `{"_ARRAY_DIMENSIONſ": ["x"]}`, `{"a": NaN, "_ARRAY_DIMENSIONS": ["x"]}`, `{}`, `[]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, attrs []byte) {
		for rank := range 4 {
			got, want := dimensionNamesFromAttrs(attrs, rank), dimensionNamesSlowly(attrs, rank)
			if !slices.Equal(got, want) || (got == nil) != (want == nil) {
				t.Fatalf("dimensionNamesFromAttrs(%q, %d) = %q; encoding/json %q", attrs, rank, got, want)
			}
		}
	})
}
