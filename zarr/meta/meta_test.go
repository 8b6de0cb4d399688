package meta

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/codec"
	"github.com/zarrfs/zarrfs/internal/pyjson"
)

// TestSplitObject: splitObject splits documents as encoding/json decodes
// them (sameMembers); FuzzDecodeObject checks the same on any valid JSON.
func TestSplitObject(t *testing.T) {
	for _, doc := range []string{
		`{}`,
		` { } `,
		`{"a":1}`,
		"{\n\t\"zarr_format\" : 2 ,\r\n \"shape\": [100, 200], \"dtype\": \"<f4\", \"fill_value\": -1.5e3}\n",
		`{"a": {"b": [1, {"c": "}]\\"}]}, "d": "x\"y", "e": [], "f": {}}`,
		`{"\u0061": 1, "b\"": null, "c\\": true, "d\/": false}`,
		`{"é": "ü", "\ud83d\ude00": 1}`,
		"{\"\xff\xfe\": 1}",
		`{"a": 1, "a": 2}`,
		`{"n": -0.5E+10}`,
		`{"s": ""}`,
		`null`,
		`[{"a": 1}]`,
		`"{}"`,
		`3`,
	} {
		if !json.Valid([]byte(doc)) {
			t.Fatalf("test document %q is not valid JSON", doc)
		}
		sameMembers(t, []byte(doc))
	}
}

// TestCheckMemberNamesMany: repeated and case-variant names are found
// among few members and among many (where checkMemberNames keeps them in
// maps), at the top level and below.
func TestCheckMemberNamesMany(t *testing.T) {
	members := func(n int, extra string) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range n {
			fmt.Fprintf(&b, `"m%d": %d, `, i, i)
		}
		return b.String() + extra + "}"
	}
	for _, n := range []int{0, 3, 15, 16, 17, 40} {
		for _, c := range []struct {
			extra, err string
		}{
			{`"a": 1, "b": 2`, ""},
			{`"a": 1, "A": 2`, `members "a" and "A" differ only in case`},
			{`"M0": 1`, `members "m0" and "M0" differ only in case`},
			{`"m1": 1`, `member "m1" appears twice`},
			{`"x": {"a": 1, "A": 2}`, ""},
			{`"x": ` + members(n, `"m0": 0`), `member "m0" appears twice`},
		} {
			doc := members(n, c.extra)
			if n < 2 && strings.Contains(c.err, `"m`) {
				continue // no m0 and m1 to repeat
			}
			err := pyjson.CheckNames([]byte(doc))
			if got := fmt.Sprint(err); (c.err == "") != (err == nil) || c.err != "" && got != c.err {
				t.Errorf("%d members + %s: %v, want %q", n, c.extra, err, c.err)
			}
		}
	}
}

// v3ZarrJSON returns a valid zarr.json with members replaced or (value
// "DELETE") removed.
func v3ZarrJSON(t *testing.T, changes map[string]string) []byte {
	t.Helper()
	doc := map[string]json.RawMessage{
		"zarr_format":        json.RawMessage(`3`),
		"node_type":          json.RawMessage(`"array"`),
		"shape":              json.RawMessage(`[10, 20]`),
		"data_type":          json.RawMessage(`"float32"`),
		"chunk_grid":         json.RawMessage(`{"name": "regular", "configuration": {"chunk_shape": [5, 5]}}`),
		"chunk_key_encoding": json.RawMessage(`{"name": "default", "configuration": {"separator": "/"}}`),
		"fill_value":         json.RawMessage(`0`),
		"codecs":             json.RawMessage(`[{"name": "bytes", "configuration": {"endian": "little"}}]`),
		"attributes":         json.RawMessage(`{}`),
	}
	return editDoc(t, doc, changes)
}

// v2Zarray returns a valid .zarray with members replaced or removed.
func v2Zarray(t *testing.T, changes map[string]string) []byte {
	t.Helper()
	doc := map[string]json.RawMessage{
		"zarr_format": json.RawMessage(`2`),
		"shape":       json.RawMessage(`[10, 20]`),
		"chunks":      json.RawMessage(`[5, 5]`),
		"dtype":       json.RawMessage(`"<f4"`),
		"compressor":  json.RawMessage(`null`),
		"filters":     json.RawMessage(`null`),
		"fill_value":  json.RawMessage(`0`),
		"order":       json.RawMessage(`"C"`),
	}
	return editDoc(t, doc, changes)
}

// editDoc returns doc as JSON with the members changes names replaced, or
// removed where the change is "DELETE".
func editDoc(t *testing.T, doc map[string]json.RawMessage, changes map[string]string) []byte {
	t.Helper()
	for k, v := range changes {
		if v == "DELETE" {
			delete(doc, k)
		} else {
			doc[k] = json.RawMessage(v)
		}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatalf("test document %v: %v", changes, err)
	}
	return b
}

// arrayError parses doc and returns the error that makes the node or its
// contents unusable, or nil.
func arrayError(format Format, doc []byte) (*Array, error) {
	var a *Array
	var err error
	if format == FormatV2 {
		a, err = ParseV2Array(doc, nil)
	} else {
		var n V3Node
		if n, err = ParseV3Node(doc); err == nil {
			if n.Kind != KindArray {
				return nil, fmt.Errorf("not an array")
			}
			a, err = ParseV3Array(n)
		}
	}
	if err == nil && a.err != nil {
		err = a.err
	}
	return a, err
}

func TestArrayMetadataErrors(t *testing.T) {
	big := make([]string, 33)
	for i := range big {
		big[i] = "1"
	}
	rank33 := "[" + strings.Join(big, ",") + "]"
	type tc struct {
		name     string
		format   Format
		doc      []byte
		sentinel error  // nil: valid
		contains string // in the error message
	}
	cases := []tc{
		{"v3 valid", FormatV3, v3ZarrJSON(t, nil), nil, ""},
		{"v3 not JSON", FormatV3, []byte(`{"zarr_format": 3,`), ErrInvalidMetadata, "not JSON"},
		{"v3 not an object", FormatV3, []byte(`[3]`), ErrInvalidMetadata, "not JSON"},
		{"v3 trailing data", FormatV3, []byte(`{"zarr_format": 3} {}`), ErrInvalidMetadata, "after the JSON object"},
		{"v3 zarr_format 2", FormatV3, v3ZarrJSON(t, map[string]string{"zarr_format": "2"}), ErrInvalidMetadata, "zarr_format 2, want 3"},
		{"v3 no zarr_format", FormatV3, v3ZarrJSON(t, map[string]string{"zarr_format": "DELETE"}), ErrInvalidMetadata, "no zarr_format"},
		{"v3 node_type", FormatV3, v3ZarrJSON(t, map[string]string{"node_type": `"dataset"`}), ErrInvalidMetadata, `node_type "dataset"`},
		{"v3 negative shape", FormatV3, v3ZarrJSON(t, map[string]string{"shape": "[10, -1]"}), ErrInvalidMetadata, "shape[1] = -1 must be non-negative"},
		{"v3 fractional shape", FormatV3, v3ZarrJSON(t, map[string]string{"shape": "[10, 2.5]"}), ErrInvalidMetadata, "shape[1] = 2.5 is not an integer"},
		{"v3 string shape", FormatV3, v3ZarrJSON(t, map[string]string{"shape": `[10, "20"]`}), ErrInvalidMetadata, "is not an integer"},
		{"v3 shape not a list", FormatV3, v3ZarrJSON(t, map[string]string{"shape": `10`}), ErrInvalidMetadata, "not a list of integers"},
		{"v3 zero chunk", FormatV3, v3ZarrJSON(t, map[string]string{"chunk_grid": `{"name": "regular", "configuration": {"chunk_shape": [5, 0]}}`}), ErrInvalidMetadata, "chunk_shape[1] = 0 must be positive"},
		{"v3 chunk rank", FormatV3, v3ZarrJSON(t, map[string]string{"chunk_grid": `{"name": "regular", "configuration": {"chunk_shape": [5]}}`}), ErrInvalidMetadata, "differ in rank"},
		{"v3 rank 33", FormatV3, v3ZarrJSON(t, map[string]string{"shape": rank33}), ErrInvalidMetadata, "33 dimensions, more than 32"},
		{"v3 overflow", FormatV3, v3ZarrJSON(t, map[string]string{"shape": "[1099511627776, 1099511627776]", "data_type": `"float64"`}), ErrInvalidMetadata, "overflows"},
		{"v3 huge chunk", FormatV3, v3ZarrJSON(t, map[string]string{"chunk_grid": `{"name": "regular", "configuration": {"chunk_shape": [100000, 100000]}}`}), codec.ErrUnsupported, "chunk limit"},
		{"v3 fill 300 uint8", FormatV3, v3ZarrJSON(t, map[string]string{"data_type": `"uint8"`, "fill_value": "300"}), ErrInvalidMetadata, "300 is out of range [0, 255]"},
		{"v3 fill -1 uint64", FormatV3, v3ZarrJSON(t, map[string]string{"data_type": `"uint64"`, "fill_value": "-1"}), ErrInvalidMetadata, "out of range"},
		{"v3 fill 1.5 int8", FormatV3, v3ZarrJSON(t, map[string]string{"data_type": `"int8"`, "fill_value": "1.5"}), ErrInvalidMetadata, "not an integer"},
		{"v3 fill string float", FormatV3, v3ZarrJSON(t, map[string]string{"fill_value": `"nan"`}), ErrInvalidMetadata, "not a number, NaN"},
		{"v3 fill short hex", FormatV3, v3ZarrJSON(t, map[string]string{"fill_value": `"0x7fc0"`}), ErrInvalidMetadata, "needs 8 digits"},
		{"v3 fill missing", FormatV3, v3ZarrJSON(t, map[string]string{"fill_value": "DELETE"}), ErrInvalidMetadata, "fill_value is missing"},
		{"v3 unknown codec", FormatV3, v3ZarrJSON(t, map[string]string{"codecs": `[{"name": "bytes"}, {"name": "frobnicate"}]`}), codec.ErrUnsupported, `codec "frobnicate"`},
		{"v3 unknown optional codec", FormatV3, v3ZarrJSON(t, map[string]string{"codecs": `[{"name": "bytes"}, {"name": "frobnicate", "must_understand": false}]`}), nil, ""},
		{"v3 two array→bytes", FormatV3, v3ZarrJSON(t, map[string]string{"codecs": `[{"name": "bytes"}, {"name": "bytes"}]`}), ErrInvalidMetadata, "two array→bytes"},
		{"v3 no codecs", FormatV3, v3ZarrJSON(t, map[string]string{"codecs": `[]`}), ErrInvalidMetadata, "non-empty list"},
		{"v3 codec extra member", FormatV3, v3ZarrJSON(t, map[string]string{"codecs": `[{"name": "bytes", "foo": 1}]`}), ErrInvalidMetadata, `unknown member "foo"`},
		{"v3 unknown key", FormatV3, v3ZarrJSON(t, map[string]string{"frob": `{"x": 1}`}), codec.ErrUnsupported, `metadata member "frob"`},
		{"v3 unknown key must_understand true", FormatV3, v3ZarrJSON(t, map[string]string{"frob": `{"must_understand": true}`}), codec.ErrUnsupported, `"frob"`},
		{"v3 unknown key optional", FormatV3, v3ZarrJSON(t, map[string]string{"frob": `{"must_understand": false, "x": 1}`}), nil, ""},
		{"v3 storage transformer", FormatV3, v3ZarrJSON(t, map[string]string{"storage_transformers": `[{"name": "sharding"}]`}), codec.ErrUnsupported, `storage transformer "sharding"`},
		{"v3 empty storage transformers", FormatV3, v3ZarrJSON(t, map[string]string{"storage_transformers": `[]`}), nil, ""},
		{"v3 unknown data type", FormatV3, v3ZarrJSON(t, map[string]string{"data_type": `"float7_e3m3"`}), codec.ErrUnsupported, `data type "float7_e3m3"`},
		{"v3 raw bits not bytes", FormatV3, v3ZarrJSON(t, map[string]string{"data_type": `"r7"`}), ErrInvalidMetadata, "multiple of 8"},
		{"v3 chunk grid", FormatV3, v3ZarrJSON(t, map[string]string{"chunk_grid": `{"name": "hexagonal", "configuration": {}}`}), codec.ErrUnsupported, `chunk grid "hexagonal"`},
		{"v3 rectilinear without kind", FormatV3, v3ZarrJSON(t, map[string]string{"chunk_grid": `{"name": "rectilinear", "configuration": {}}`}), ErrInvalidMetadata, `kind must be "inline"`},
		{"v3 key encoding", FormatV3, v3ZarrJSON(t, map[string]string{"chunk_key_encoding": `{"name": "morton"}`}), codec.ErrUnsupported, `chunk key encoding "morton"`},
		{"v3 separator", FormatV3, v3ZarrJSON(t, map[string]string{"chunk_key_encoding": `{"name": "default", "configuration": {"separator": "-"}}`}), ErrInvalidMetadata, "separator"},
		{"v3 dimension_names length", FormatV3, v3ZarrJSON(t, map[string]string{"dimension_names": `["x"]`}), ErrInvalidMetadata, "dimension_names"},
		{"v3 attributes not object", FormatV3, v3ZarrJSON(t, map[string]string{"attributes": `[]`}), ErrInvalidMetadata, "attributes is not an object"},
		{"v3 too big", FormatV3, append(v3ZarrJSON(t, nil), make([]byte, MaxDocumentSize)...), ErrInvalidMetadata, "over the"},

		{"v2 valid", FormatV2, v2Zarray(t, nil), nil, ""},
		{"v2 not JSON", FormatV2, []byte("zarr"), ErrInvalidMetadata, "not JSON"},
		{"v2 zarr_format 3", FormatV2, v2Zarray(t, map[string]string{"zarr_format": "3"}), ErrInvalidMetadata, "zarr_format 3, want 2"},
		{"v2 negative shape", FormatV2, v2Zarray(t, map[string]string{"shape": "[-10, 20]"}), ErrInvalidMetadata, "shape[0] = -10 must be non-negative"},
		{"v2 fractional chunks", FormatV2, v2Zarray(t, map[string]string{"chunks": "[5, 5.0]"}), ErrInvalidMetadata, "chunks[1] = 5.0 is not an integer"},
		{"v2 zero chunk", FormatV2, v2Zarray(t, map[string]string{"chunks": "[0, 5]"}), ErrInvalidMetadata, "chunks[0] = 0 must be positive"},
		{"v2 rank 33", FormatV2, v2Zarray(t, map[string]string{"shape": rank33, "chunks": rank33}), ErrInvalidMetadata, "more than 32"},
		{"v2 overflow", FormatV2, v2Zarray(t, map[string]string{"shape": "[1099511627776, 1099511627776]", "dtype": `"<f8"`}), ErrInvalidMetadata, "overflows"},
		{"v2 fill 300 u1", FormatV2, v2Zarray(t, map[string]string{"dtype": `"|u1"`, "fill_value": "300"}), ErrInvalidMetadata, "300 is out of range [0, 255]"},
		{"v2 fill -129 i1", FormatV2, v2Zarray(t, map[string]string{"dtype": `"|i1"`, "fill_value": "-129"}), ErrInvalidMetadata, "out of range [-128, 127]"},
		{"v2 bad order", FormatV2, v2Zarray(t, map[string]string{"order": `"K"`}), ErrInvalidMetadata, "order"},
		{"v2 bad separator", FormatV2, v2Zarray(t, map[string]string{"dimension_separator": `"_"`}), ErrInvalidMetadata, "dimension_separator"},
		{"v2 bad dtype", FormatV2, v2Zarray(t, map[string]string{"dtype": `"<x4"`}), codec.ErrUnsupported, `data type "<x4"`},
		{"v2 bad dtype order", FormatV2, v2Zarray(t, map[string]string{"dtype": `"=f4"`}), ErrInvalidMetadata, "byte order"},
		{"v2 dtype size", FormatV2, v2Zarray(t, map[string]string{"dtype": `"<f3"`}), codec.ErrUnsupported, `"<f3"`},
		{"v2 structured", FormatV2, v2Zarray(t, map[string]string{"dtype": `[["a", "|O"]]`}), codec.ErrUnsupported, "structured"},
		{"v2 unknown compressor", FormatV2, v2Zarray(t, map[string]string{"compressor": `{"id": "frob"}`}), codec.ErrUnsupported, `codec "frob"`},
		{"v2 compressor without id", FormatV2, v2Zarray(t, map[string]string{"compressor": `{"level": 1}`}), ErrInvalidMetadata, `no "id"`},
		{"v2 object without codec", FormatV2, v2Zarray(t, map[string]string{"dtype": `"|O"`}), codec.ErrUnsupported, "object codec"},
		{"v2 object categorize <U4", FormatV2, v2Zarray(t, map[string]string{"dtype": `"|O"`, "filters": `[{"id": "categorize", "labels": ["a"], "dtype": "<U1", "astype": "|u1"}]`}), codec.ErrUnsupported, "only |O"},
		{"v2 object categorize astype", FormatV2, v2Zarray(t, map[string]string{"dtype": `"|O"`, "filters": `[{"id": "categorize", "labels": ["a"], "dtype": "|O", "astype": "<f8"}]`}), codec.ErrUnsupported, "astype"},
		{"v2 object categorize labels", FormatV2, v2Zarray(t, map[string]string{"dtype": `"|O"`, "filters": `[{"id": "categorize", "labels": [1], "dtype": "|O"}]`}), codec.ErrUnsupported, "labels"},
		{"v2 object pickle", FormatV2, v2Zarray(t, map[string]string{"dtype": `"|O"`, "filters": `[{"id": "pickle"}]`}), codec.ErrUnsupported, `"pickle"`},
		{"v2 datetime without unit", FormatV2, v2Zarray(t, map[string]string{"dtype": `"<M8"`}), ErrInvalidMetadata, "[unit]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := arrayError(c.format, c.doc)
			if c.sentinel == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if !errors.Is(err, c.sentinel) {
				t.Fatalf("error %v does not match %v", err, c.sentinel)
			}
			if !strings.Contains(err.Error(), c.contains) {
				t.Errorf("error %q does not mention %q", err, c.contains)
			}
		})
	}
}

func TestV2DataTypes(t *testing.T) {
	cases := []struct {
		in, name, numpy string
		size            int
		big             bool
	}{
		{"<f4", "float32", "<f4", 4, false},
		{">f4", "float32", "<f4", 4, true},
		{">i8", "int64", "<i8", 8, true},
		{"|b1", "bool", "|b1", 1, false},
		{"|u1", "uint8", "|u1", 1, false},
		{"<c8", "complex64", "<c8", 8, false},
		{">c16", "complex128", "<c16", 16, true},
		{"<f2", "float16", "<f2", 2, false},
		{"|S7", "r56", "|S7", 7, false},
		{"<U7", "fixed_length_utf32", "<U7", 28, false},
		{">U2", "fixed_length_utf32", "<U2", 8, true},
		{"|V8", "r64", "|V8", 8, false},
		{"<M8[ns]", "numpy.datetime64", "<M8[ns]", 8, false},
		{">m8[s]", "numpy.timedelta64", "<m8[s]", 8, true},
		{"<M8[10ms]", "numpy.datetime64", "<M8[10ms]", 8, false},
	}
	for _, c := range cases {
		got, err := parseTypestr(c.in)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if got.Name != c.name || got.NumPy != c.numpy || got.Size != c.size || got.bigEndian != c.big {
			t.Errorf("%s = %+v, want name %s numpy %s size %d big %v", c.in, got, c.name, c.numpy, c.size, c.big)
		}
	}
	for _, bad := range []string{"", "<", "f4", "<f", "<f-4", "<M8[parsec]", "<S0", "<U", "<i3"} {
		if _, err := parseTypestr(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestFillValues(t *testing.T) {
	cases := []struct {
		format   Format
		dtype    string // v2 typestr or v3 data_type JSON
		fill     string
		want     string // hex of the little-endian element; "" for an error
		contains string
	}{
		{FormatV3, `"uint64"`, `18446744073709551615`, "ffffffffffffffff", ""},
		{FormatV3, `"int64"`, `-9223372036854775808`, "0000000000000080", ""},
		{FormatV3, `"int64"`, `9223372036854775808`, "", "out of range"},
		{FormatV3, `"uint8"`, `300`, "", "out of range"},
		{FormatV3, `"int16"`, `-2`, "feff", ""},
		{FormatV3, `"bool"`, `true`, "01", ""},
		{FormatV3, `"bool"`, `"yes"`, "", "not a boolean"},
		{FormatV3, `"float32"`, `"NaN"`, "0000c07f", ""},
		{FormatV3, `"float32"`, `"0x7fc00001"`, "0100c07f", ""},
		{FormatV3, `"float64"`, `"Infinity"`, "000000000000f07f", ""},
		{FormatV3, `"float64"`, `"-Infinity"`, "000000000000f0ff", ""},
		{FormatV3, `"float64"`, `0.1`, "9a9999999999b93f", ""},
		{FormatV3, `"float32"`, `0.1`, "cdcccc3d", ""},
		{FormatV3, `"float16"`, `1.5`, "003e", ""},
		{FormatV3, `"float16"`, `65504`, "ff7b", ""},
		{FormatV3, `"float16"`, `1e6`, "007c", ""},
		{FormatV3, `"float16"`, `5.960464477539063e-08`, "0100", ""},
		{FormatV3, `"float16"`, `"0x7e00"`, "007e", ""},
		{FormatV3, `"complex64"`, `[1, "NaN"]`, "0000803f0000c07f", ""},
		{FormatV3, `"complex128"`, `[1]`, "", "[real, imaginary]"},
		{FormatV3, `"r16"`, `[1, 255]`, "01ff", ""},
		{FormatV3, `"r16"`, `[1, 256]`, "", "not in [0, 255]"},
		{FormatV3, `"r16"`, `[1, 2, 3]`, "", "do not fit"},
		{FormatV3, `{"name": "fixed_length_utf32", "configuration": {"length_bytes": 8}}`, `"é"`, "e900000000000000", ""},
		{FormatV3, `{"name": "fixed_length_utf32", "configuration": {"length_bytes": 4}}`, `"ab"`, "", "do not fit"},
		{FormatV3, `{"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 1}}`, `"NaT"`, "0000000000000080", ""},
		{FormatV2, `"<i4"`, `null`, "00000000", ""},
		{FormatV2, `">i4"`, `1`, "01000000", ""},
		{FormatV2, `"<f8"`, `"NaN"`, "000000000000f87f", ""},
		{FormatV2, `"<c8"`, `[1.0, -1.0]`, "0000803f000080bf", ""},
		{FormatV2, `"|S3"`, `"YWI="`, "616200", ""},
		{FormatV2, `"|S3"`, `0`, "300000", ""},
		{FormatV2, `"|V2"`, `"AQID"`, "", "do not fit"},
		{FormatV2, `"<U2"`, `"ab"`, "6100000062000000", ""},
		{FormatV2, `"<M8[ns]"`, `-1`, "ffffffffffffffff", ""},
		{FormatV2, `"|b1"`, `false`, "00", ""},
		// GDAL writes 64-bit integer fills as strings; zarr-python reads them.
		{FormatV2, `"<u8"`, `"18446744073709551614"`, "feffffffffffffff", ""},
		{FormatV2, `"<i8"`, `"-5"`, "fbffffffffffffff", ""},
		{FormatV2, `"<u8"`, `"1.5"`, "", "not a number"},
		{FormatV2, `"<u8"`, `"18446744073709551616"`, "", "out of range"},
		{FormatV3, `"uint64"`, `"18446744073709551614"`, "", "not a number"},
		{FormatV2, `"<i2"`, `1e2`, "6400", ""},
		{FormatV2, `"<u2"`, `"7"`, "0700", ""},
	}
	for _, c := range cases {
		var dt dtype
		var err error
		if c.format == FormatV2 {
			dt, err = parseV2DataType(json.RawMessage(c.dtype))
		} else {
			dt, err = parseV3DataType(json.RawMessage(c.dtype))
		}
		if err != nil {
			t.Errorf("%s: %v", c.dtype, err)
			continue
		}
		got, err := parseFillValue(dt, json.RawMessage(c.fill), c.format)
		if c.want == "" {
			if !errors.Is(err, ErrInvalidMetadata) || !strings.Contains(err.Error(), c.contains) {
				t.Errorf("%s fill %s: error %v, want one mentioning %q", c.dtype, c.fill, err, c.contains)
			}
			continue
		}
		if err != nil || hex.EncodeToString(got) != c.want {
			t.Errorf("%s fill %s = %x, %v; want %s", c.dtype, c.fill, got, err, c.want)
		}
	}
}

func TestChunkKeys(t *testing.T) {
	cases := []struct {
		keys chunkKeys
		idx  []int64
		want string
	}{
		{chunkKeys{prefix: "c", sep: "/"}, []int64{1, 0}, "c/1/0"},
		{chunkKeys{prefix: "c", sep: "."}, []int64{1, 0}, "c.1.0"},
		{chunkKeys{prefix: "c", sep: "/"}, nil, "c"},
		{chunkKeys{sep: "."}, []int64{1, 0}, "1.0"},
		{chunkKeys{sep: "/"}, []int64{12, 3, 4}, "12/3/4"},
		{chunkKeys{sep: "."}, nil, "0"},
	}
	for _, c := range cases {
		if got := c.keys.key(c.idx); got != c.want {
			t.Errorf("%+v %v = %q, want %q", c.keys, c.idx, got, c.want)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
