package meta

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/codec"
)

func TestDetectDraft(t *testing.T) {
	cases := []struct {
		doc    string
		format Format // 0: not a draft
		meta   string // metaKey("a", "array")
		err    error
	}{
		{`{"zarr_format": 3, "node_type": "group"}`, 0, "", nil},
		{`{"zarr_format": "https://purl.org/zarr/spec/protocol/core/3.0", "metadata_encoding": "application/json", "extensions": []}`,
			FormatV3Draft2019, "meta/root/a.array", nil},
		{`{"zarr_format": "http://purl.org/zarr/spec/protocol/core/3.0", "metadata_encoding": "application/json"}`,
			FormatV3Draft2019, "meta/root/a.array", nil},
		{`{"zarr_format": "https://purl.org/zarr/spec/protocol/core/3.0", "metadata_encoding": "https://purl.org/zarr/spec/protocol/core/3.0", "metadata_key_suffix": ".json", "extensions": []}`,
			FormatV3Draft2022, "meta/root/a.array.json", nil},
		{`{"zarr_format": "https://purl.org/zarr/spec/core/3.0", "metadata_encoding": {"type": "json", "metadata_key_suffix": ".js"}, "extensions": []}`,
			FormatV3Draft2022, "meta/a.array.js", nil},
		{`{"zarr_format": "https://purl.org/zarr/spec/core/3.0", "extensions": [{"extension": "x", "must_understand": true}]}`, 0, "", codec.ErrUnsupported},
		{`{"zarr_format": "https://purl.org/zarr/spec/core/3.0", "extensions": [{"extension": "x"}]}`, 0, "", codec.ErrUnsupported},
		{`{"zarr_format": "https://purl.org/zarr/spec/core/3.0", "metadata_encoding": {"type": "yaml"}}`, 0, "", codec.ErrUnsupported},
		{`{"zarr_format": "https://purl.org/zarr/spec/core/3.0", "metadata_encoding": "json"}`, 0, "", ErrInvalidMetadata},
		{`{"zarr_format": "https://purl.org/zarr/spec/protocol/core/3.0", "metadata_encoding": "application/xml"}`, 0, "", codec.ErrUnsupported},
		{`{"zarr_format": "https://purl.org/zarr/spec/protocol/core/3.0", "metadata_key_suffix": "/x"}`, 0, "", ErrInvalidMetadata},
		{`{"zarr_format": "https://example.org/zarr/4.0"}`, 0, "", codec.ErrUnsupported},
		{`{"zarr_format": "https://purl.org/zarr/spec/core/3.0", "extensions": {}}`, 0, "", ErrInvalidMetadata},
	}
	for _, c := range cases {
		l, err := DetectDraft([]byte(c.doc))
		switch {
		case c.err != nil:
			if !errors.Is(err, c.err) {
				t.Errorf("%s: error %v, want %v", c.doc, err, c.err)
			}
		case err != nil:
			t.Errorf("%s: %v", c.doc, err)
		case c.format == 0:
			if l != nil {
				t.Errorf("%s: detected as %v", c.doc, l.format)
			}
		case l == nil || l.format != c.format || l.MetaKey("a", KindArray) != c.meta:
			t.Errorf("%s: layout %+v, want %v with %s", c.doc, l, c.format, c.meta)
		}
	}
}

func TestParseDraftArrayInvalid(t *testing.T) {
	l := &Draft{format: FormatV3Draft2022, metaRoot: "meta", suffix: ".json", dataRoot: "data", chunkPrefix: "c", defaultSep: "/"}
	grid := `"chunk_grid": {"type": "regular", "chunk_shape": [2]}`
	cases := []struct {
		name, doc   string
		unsupported bool
	}{
		{"no shape", `{"data_type": "<f8", ` + grid + `}`, false},
		{"grid rank", `{"shape": [4, 4], "data_type": "<f8", ` + grid + `}`, false},
		{"grid type", `{"shape": [4], "data_type": "<f8", "chunk_grid": {"type": "rectilinear", "chunk_shape": [2]}}`, true},
		{"separator", `{"shape": [4], "data_type": "<f8", "chunk_grid": {"type": "regular", "chunk_shape": [2], "separator": "-"}}`, false},
		{"layout", `{"shape": [4], "data_type": "<f8", "chunk_memory_layout": "K", ` + grid + `}`, true},
		{"codec", `{"shape": [4], "data_type": "<f8", "codecs": [{"configuration": {}}], ` + grid + `}`, false},
		{"unknown codec", `{"shape": [4], "data_type": "<f8", "codecs": [{"type": "https://example.org/c"}], ` + grid + `}`, true},
		{"unknown member", `{"shape": [4], "data_type": "<f8", "spare": 1, ` + grid + `}`, true},
		{"type", `{"shape": [4], "data_type": 7, ` + grid + `}`, false},
		{"unknown type", `{"shape": [4], "data_type": {"extension": "x", "type": "q", "fallback": "q2"}, ` + grid + `}`, true},
		{"fill", `{"shape": [4], "data_type": "<i4", "fill_value": "x", ` + grid + `}`, false},
		{"transformer", `{"shape": [4], "data_type": "<i4", "storage_transformers": [{"extension": "s", "type": "sharding"}], ` + grid + `}`, true},
		{"extension", `{"shape": [4], "data_type": "<i4", "extensions": [{"extension": "e", "must_understand": true}], ` + grid + `}`, true},
		{"two serialisers", `{"shape": [4], "data_type": ">i4", "codecs": [{"type": "https://purl.org/zarr/spec/codecs/endian/1.0"}], ` + grid + `}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			obj, err := DecodeObject("array.json", []byte(c.doc))
			if err != nil {
				t.Fatal(err)
			}
			if err := checkDraftExtensions("array.json", obj["extensions"]); err != nil {
				if !c.unsupported || !errors.Is(err, codec.ErrUnsupported) {
					t.Fatalf("extensions: %v", err)
				}
				return
			}
			a, err := parseDraftArray(l, "array.json", obj, "a")
			if c.unsupported {
				if err == nil && a != nil && errors.Is(a.err, codec.ErrUnsupported) || errors.Is(err, codec.ErrUnsupported) {
					return
				}
				t.Fatalf("parseDraftArray = %+v, %v; want unsupported", a, err)
			}
			if !errors.Is(err, ErrInvalidMetadata) {
				t.Fatalf("parseDraftArray = %+v, %v; want ErrInvalidMetadata", a, err)
			}
		})
	}
}

func FuzzDetectDraft(f *testing.F) {
	for _, s := range []string{"draft2022", "draft2019"} {
		b, err := os.ReadFile(filepath.Join("..", "testdata", s, "zarr.json"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		l, err := DetectDraft(doc)
		if err != nil && (l != nil || !errors.Is(err, ErrInvalidMetadata) && !errors.Is(err, codec.ErrUnsupported)) {
			t.Fatalf("DetectDraft = %+v, %v", l, err)
		}
		if l != nil && strings.Contains(l.suffix, "/") {
			t.Fatalf("suffix %q", l.suffix)
		}
	})
}

func FuzzParseDraftArray(f *testing.F) {
	for _, p := range []string{"draft2022/meta/foo/baz.array.json", "draft2022/meta/big.array.json", "draft2022/meta/raw.array.json",
		"draft2019/meta/root/old.array"} {
		b, err := os.ReadFile(filepath.Join("..", "testdata", p))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, b := range hostileSeeds(f, "d22-") {
		f.Add(b)
	}
	l := &Draft{format: FormatV3Draft2022, metaRoot: "meta/root", suffix: ".json", dataRoot: "data/root", chunkPrefix: "c", defaultSep: "/"}
	f.Fuzz(func(t *testing.T, doc []byte) {
		obj, err := DecodeObject("array.json", doc)
		if err != nil {
			return
		}
		a, err := parseDraftArray(l, "array.json", obj, "a")
		if err == nil && a == nil {
			t.Fatal("nil array without an error")
		}
		if err != nil && !errors.Is(err, ErrInvalidMetadata) && !errors.Is(err, codec.ErrUnsupported) {
			t.Fatalf("error %v is neither invalid metadata nor unsupported", err)
		}
	})
}

func TestDraftFillForms(t *testing.T) {
	l := &Draft{format: FormatV3Draft2022, metaRoot: "meta", suffix: ".json", dataRoot: "data", chunkPrefix: "c", defaultSep: "/"}
	for _, c := range []struct{ typ, fill, want string }{
		{`"float32"`, `"0b01111111110000000000000000000001"`, "0100c07f"},
		{`"float16"`, `"0b0111110000000000"`, "007c"},
		{`"float64"`, `"+Infinity"`, "000000000000f07f"},
		{`"complex64"`, `["0b00111111100000000000000000000000", "+Infinity"]`, "0000803f0000807f"},
		{`"complex128"`, `["NaN", "-Infinity"]`, "000000000000f87f000000000000f0ff"},
		{`"<f2"`, `"0x7e00"`, "007e"},
	} {
		doc := `{"shape": [1], "data_type": ` + c.typ + `, "chunk_grid": {"type": "regular", "chunk_shape": [1]}, "fill_value": ` + c.fill + `}`
		obj, err := DecodeObject("array.json", []byte(doc))
		must(t, err)
		a, err := parseDraftArray(l, "array.json", obj, "a")
		if err != nil || a.err != nil {
			t.Errorf("%s %s: %v %v", c.typ, c.fill, err, a)
			continue
		}
		if got := fmt.Sprintf("%x", a.fill); got != c.want {
			t.Errorf("%s %s: fill %s, want %s", c.typ, c.fill, got, c.want)
		}
	}
	for _, bad := range []string{`"0b0101"`, `"0b2"`, `["0b1", 0]`} {
		doc := `{"shape": [1], "data_type": "float32", "chunk_grid": {"type": "regular", "chunk_shape": [1]}, "fill_value": ` + bad + `}`
		obj, err := DecodeObject("array.json", []byte(doc))
		must(t, err)
		if _, err := parseDraftArray(l, "array.json", obj, "a"); !errors.Is(err, ErrInvalidMetadata) {
			t.Errorf("fill %s: %v, want ErrInvalidMetadata", bad, err)
		}
	}
}
