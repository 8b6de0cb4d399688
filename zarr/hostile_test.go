package zarr

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/store/memory"
)

// Hostile metadata documents live in testdata/hostile/meta, one file per
// case. The name says where the document goes: "v2-….zarray" is the
// .zarray of an array beside a good one in a v2 group, "v3-….zarr.json"
// the zarr.json of an array in a v3 group, "d22-….array.json" and
// "d22-….group.json" the document of an array or a group in a store of the
// 2022 v3 draft, "d19-….array" and "d19-….group" the same in a store of the
// 2019 draft, "d19-….zarr.json" and "d22-….zarr.json" the entry point of
// such a store, "v1-….meta" the meta document of a v1 store (which holds
// one array, at the root).

// hostileWant is the error a hostile document must give: a sentinel it
// matches and words its message contains.
type hostileWant struct {
	is  error
	msg string
}

var (
	invalid = func(msg string) hostileWant { return hostileWant{ErrInvalidMetadata, msg} }
	unsupp  = func(msg string) hostileWant { return hostileWant{ErrUnsupported, msg} }
)

// hostileMeta maps every file of testdata/hostile/meta to its error.
var hostileMeta = map[string]hostileWant{
	"v2-not-json.zarray":               invalid("not JSON"),
	"v2-not-object.zarray":             invalid("not JSON"),
	"v2-trailing-data.zarray":          invalid("data after the JSON object"),
	"v2-trailing-brace.zarray":         invalid("data after the JSON object"),
	"v2-duplicate-key.zarray":          invalid(`member "shape" appears twice`),
	"v2-case-variant-key.zarray":       invalid(`members "shape" and "Shape" differ only in case`),
	"v2-nested-duplicate-key.zarray":   invalid(`member "level" appears twice`),
	"v2-zarr-format-3.zarray":          invalid("zarr_format 3, want 2"),
	"v2-zarr-format-string.zarray":     invalid(`zarr_format "2", want 2`),
	"v2-zarr-format-missing.zarray":    invalid("no zarr_format"),
	"v2-shape-overflow.zarray":         invalid("overflows int64"),
	"v2-shape-int64-overflow.zarray":   invalid("is not an integer"),
	"v2-chunks-overflow.zarray":        invalid("overflows int64"),
	"v2-chunk-too-large.zarray":        unsupp("chunk limit"),
	"v2-shape-negative.zarray":         invalid("must be non-negative"),
	"v2-shape-non-integer.zarray":      invalid("is not an integer"),
	"v2-shape-exponent.zarray":         invalid("is not an integer"),
	"v2-shape-string.zarray":           invalid("is not an integer"),
	"v2-chunks-zero.zarray":            invalid("must be positive"),
	"v2-chunks-negative.zarray":        invalid("must be positive"),
	"v2-rank-33.zarray":                invalid("more than 32"),
	"v2-rank-mismatch.zarray":          invalid("differ in rank"),
	"v2-fill-out-of-range.zarray":      invalid("fill_value"),
	"v2-fill-negative-unsigned.zarray": invalid("fill_value"),
	"v2-fill-non-integer.zarray":       invalid("fill_value"),
	"v2-fill-string-for-int.zarray":    invalid("fill_value"),
	"v2-fill-too-long.zarray":          invalid("fill_value"),
	"v2-dtype-unknown.zarray":          unsupp("q9"),
	"v2-dtype-huge-string.zarray":      invalid("S99999999999999999999"),
	"v2-dtype-not-string.zarray":       invalid("dtype"),
	"v2-order-x.zarray":                invalid(`order "X"`),
	"v2-separator-backslash.zarray":    invalid("dimension_separator"),
	"v2-compressor-unknown.zarray":     unsupp(`codec "snappy2"`),
	"v2-compressor-no-id.zarray":       invalid(`has no "id"`),
	"v2-filter-not-object.zarray":      invalid("filters[0]"),

	"v3-not-json.zarr.json":          invalid("not JSON"),
	"v3-zarr-format-2.zarr.json":     invalid("zarr_format 2, want 3"),
	"v3-zarr-format-float.zarr.json": invalid("zarr_format 3.0, want 3"),
	"v3-node-type-unknown.zarr.json": invalid(`node_type "dataset"`),
	"v3-duplicate-key.zarr.json":     invalid(`member "fill_value" appears twice`),
	"v3-case-variant-key.zarr.json":  invalid(`members "fill_value" and "Fill_Value" differ only in case`),
	// Two attribute names of bytes that are not UTF-8, both read as U+FFFD.
	"v3-non-utf8-duplicate-key.zarr.json":     invalid("member \"\ufffd\" appears twice"),
	"v3-must-understand-member.zarr.json":     unsupp(`metadata member "future_extension"`),
	"v3-must-understand-true.zarr.json":       unsupp(`metadata member "future_extension"`),
	"v3-must-understand-codec.zarr.json":      unsupp(`codec "future_codec"`),
	"v3-shape-overflow.zarr.json":             invalid("overflows int64"),
	"v3-chunk-shape-overflow.zarr.json":       invalid("overflows int64"),
	"v3-shape-negative.zarr.json":             invalid("must be non-negative"),
	"v3-shape-non-integer.zarr.json":          invalid("is not an integer"),
	"v3-chunk-shape-zero.zarr.json":           invalid("must be positive"),
	"v3-rank-33.zarr.json":                    invalid("more than 32"),
	"v3-fill-out-of-range.zarr.json":          invalid("fill_value"),
	"v3-fill-nan-for-int.zarr.json":           invalid("fill_value"),
	"v3-fill-bad-hex.zarr.json":               invalid("fill_value"),
	"v3-fill-missing.zarr.json":               invalid("fill_value is missing"),
	"v3-chunk-grid-unknown.zarr.json":         unsupp(`chunk grid "hexagonal"`),
	"v3-rectilinear-short.zarr.json":          invalid("sum to 2, less than the length 4"),
	"v3-key-separator-bad.zarr.json":          invalid("separator"),
	"v3-data-type-unknown.zarr.json":          unsupp("float128"),
	"v3-codecs-empty.zarr.json":               invalid("non-empty list"),
	"v3-storage-transformer.zarr.json":        unsupp(`storage transformer "chunk-manifest-json"`),
	"v3-dimension-names-wrong-rank.zarr.json": invalid("dimension_names"),
	"v3-attributes-not-object.zarr.json":      invalid("attributes is not an object"),

	"d22-not-json.array.json":                  invalid("not JSON"),
	"d22-duplicate-key.array.json":             invalid(`member "shape" appears twice`),
	"d22-case-variant-key.array.json":          invalid(`members "shape" and "SHAPE" differ only in case`),
	"d22-shape-overflow.array.json":            invalid("overflows int64"),
	"d22-rank-33.array.json":                   invalid("more than 32"),
	"d22-chunks-zero.array.json":               invalid("must be positive"),
	"d22-shape-negative.array.json":            invalid("must be non-negative"),
	"d22-fill-out-of-range.array.json":         invalid("out of range"),
	"d22-must-understand-extension.array.json": unsupp("must_understand"),
	"d22-codec-unknown.array.json":             unsupp("snappy2"),
	"d22-layout-x.array.json":                  unsupp(`chunk memory layout "X"`),

	"d22-not-object.array.json":                    invalid("not JSON"),
	"d22-zarr-format-2.array.json":                 invalid("zarr_format 2"),
	"d22-zarr-format-not-uri.array.json":           invalid("is not a v3 draft URI"),
	"d22-zarr-format-v4.array.json":                unsupp("core version 4.0"),
	"d22-shape-int64-overflow.array.json":          invalid("is not an integer"),
	"d22-chunk-shape-overflow.array.json":          invalid("overflows int64"),
	"d22-shape-non-integer.array.json":             invalid("is not an integer"),
	"d22-shape-missing.array.json":                 invalid("shape is missing"),
	"d22-chunks-negative.array.json":               invalid("must be positive"),
	"d22-rank-mismatch.array.json":                 invalid("differ in rank"),
	"d22-fill-non-integer.array.json":              invalid("is not an integer"),
	"d22-fill-string-for-int.array.json":           invalid("fill_value"),
	"d22-fill-nan-for-int.array.json":              invalid("fill_value"),
	"d22-fill-bad-float.array.json":                invalid("fill_value"),
	"d22-must-understand-missing.array.json":       unsupp("must_understand"),
	"d22-extensions-not-list.array.json":           invalid("extensions"),
	"d22-data-type-unknown.array.json":             unsupp("<q9"),
	"d22-data-type-not-string.array.json":          invalid("data_type 42"),
	"d22-data-type-huge-string.array.json":         invalid("S99999999999999999999"),
	"d22-data-type-extension-unknown.array.json":   unsupp("float128"),
	"d22-data-type-fallback-not-name.array.json":   invalid("data_type fallback 42"),
	"d22-data-type-structured-bad.array.json":      invalid("structured dtype"),
	"d22-chunk-grid-not-object.array.json":         invalid("chunk_grid [2] is not an object"),
	"d22-chunk-grid-missing.array.json":            invalid("chunk_grid is missing"),
	"d22-chunk-grid-extension.array.json":          unsupp("chunk grid"),
	"d22-separator-backslash.array.json":           invalid("separator"),
	"d22-attributes-not-object.array.json":         invalid("attributes"),
	"d22-dimension-names-wrong-rank.array.json":    invalid("dimension_names"),
	"d22-unknown-member.array.json":                unsupp(`member "dtype"`),
	"d22-storage-transformer-unknown.array.json":   unsupp("storage transformer"),
	"d22-storage-transformers-not-list.array.json": invalid("storage_transformers"),
	"d22-sharding-per-shard-zero.array.json":       invalid("must be positive"),
	"d22-sharding-per-shard-rank.array.json":       invalid("does not match the rank"),
	"d22-sharding-per-shard-overflow.array.json":   invalid("chunks in a shard"),
	"d22-sharding-per-shard-missing.array.json":    invalid("chunks_per_shard is missing"),
	"d22-sharding-stack.array.json":                unsupp("a stack of 2 storage transformers"),
	"d22-codecs-not-list.array.json":               invalid("not a list"),
	"d22-codec-no-type.array.json":                 invalid(`has no "type"`),
	"d22-codec-transpose-after-gzip.array.json":    invalid("after the array is serialised"),
	"d22-codec-endian-twice.array.json":            invalid("already serialised"),
	"d22-not-json.group.json":                      invalid("not JSON"),
	"d22-not-object.group.json":                    invalid("not JSON"),
	"d22-duplicate-key.group.json":                 invalid(`member "attributes" appears twice`),
	"d22-zarr-format-2.group.json":                 invalid("zarr_format 2"),
	"d22-must-understand-extension.group.json":     unsupp("must_understand"),
	"d22-extensions-not-list.group.json":           invalid("extensions"),
	"d22-attributes-not-object.group.json":         invalid("attributes"),
	"d22-unknown-member.group.json":                unsupp(`member "shape"`),
	"d22-entry-encoding-not-object.zarr.json":      invalid("metadata_encoding"),
	"d22-entry-encoding-yaml.zarr.json":            unsupp("metadata encoding"),
	"d22-entry-suffix-slash.zarr.json":             invalid("holds a slash"),
	"d22-entry-must-understand.zarr.json":          unsupp("must_understand"),

	"d19-not-json.array":                          invalid("not JSON"),
	"d19-not-object.array":                        invalid("not JSON"),
	"d19-duplicate-key.array":                     invalid(`member "shape" appears twice`),
	"d19-case-variant-key.array":                  invalid(`members "shape" and "SHAPE" differ only in case`),
	"d19-zarr-format-2.array":                     invalid("zarr_format 2, want a v3 draft URI"),
	"d19-zarr-format-not-uri.array":               invalid(`zarr_format "zarr v3" is not a v3 draft URI`),
	"d19-zarr-format-v4.array":                    unsupp("core version 4.0"),
	"d19-shape-overflow.array":                    invalid("overflows int64"),
	"d19-shape-int64-overflow.array":              invalid("is not an integer"),
	"d19-chunk-shape-overflow.array":              invalid("overflows int64"),
	"d19-shape-negative.array":                    invalid("must be non-negative"),
	"d19-shape-non-integer.array":                 invalid("is not an integer"),
	"d19-shape-missing.array":                     invalid("shape is missing"),
	"d19-chunks-zero.array":                       invalid("must be positive"),
	"d19-chunks-negative.array":                   invalid("must be positive"),
	"d19-rank-33.array":                           invalid("more than 32"),
	"d19-rank-mismatch.array":                     invalid("differ in rank"),
	"d19-fill-out-of-range.array":                 invalid("out of range"),
	"d19-fill-non-integer.array":                  invalid("is not an integer"),
	"d19-fill-string-for-int.array":               invalid("fill_value"),
	"d19-fill-nan-for-int.array":                  invalid("fill_value"),
	"d19-fill-bad-float.array":                    invalid("fill_value"),
	"d19-must-understand-extension.array":         unsupp("must_understand"),
	"d19-must-understand-missing.array":           unsupp("must_understand"),
	"d19-extensions-not-list.array":               invalid("extensions"),
	"d19-data-type-unknown.array":                 unsupp("<q9"),
	"d19-data-type-not-string.array":              invalid("data_type 42"),
	"d19-data-type-huge-string.array":             invalid("S99999999999999999999"),
	"d19-data-type-extension-unknown.array":       unsupp("float128"),
	"d19-data-type-fallback-not-name.array":       invalid("data_type fallback 42"),
	"d19-data-type-structured-bad.array":          invalid("structured dtype"),
	"d19-chunk-grid-not-object.array":             invalid("chunk_grid [2] is not an object"),
	"d19-chunk-grid-missing.array":                invalid("chunk_grid is missing"),
	"d19-chunk-grid-extension.array":              unsupp("chunk grid"),
	"d19-separator-backslash.array":               invalid("separator"),
	"d19-layout-x.array":                          unsupp(`chunk memory layout "X"`),
	"d19-attributes-not-object.array":             invalid("attributes"),
	"d19-dimension-names-wrong-rank.array":        invalid("dimension_names"),
	"d19-unknown-member.array":                    unsupp(`member "dtype"`),
	"d19-storage-transformer-unknown.array":       unsupp("storage transformer"),
	"d19-compressor-unknown.array":                unsupp("snappy2"),
	"d19-compressor-no-codec.array":               invalid(`has no "codec"`),
	"d19-compressor-not-object.array":             invalid("compressor"),
	"d19-compressor-config-not-object.array":      invalid("configuration"),
	"d19-chunk-codecs-not-list.array":             invalid("not a list"),
	"d19-chunk-codecs-gzip-level-string.array":    invalid("level"),
	"d19-chunk-codecs-transpose-after-gzip.array": invalid("after the array is serialised"),
	"d19-not-json.group":                          invalid("not JSON"),
	"d19-not-object.group":                        invalid("not JSON"),
	"d19-duplicate-key.group":                     invalid(`member "attributes" appears twice`),
	"d19-zarr-format-2.group":                     invalid("zarr_format 2"),
	"d19-must-understand-extension.group":         unsupp("must_understand"),
	"d19-extensions-not-list.group":               invalid("extensions"),
	"d19-attributes-not-object.group":             invalid("attributes"),
	"d19-unknown-member.group":                    unsupp(`member "shape"`),
	"d19-entry-encoding-yaml.zarr.json":           unsupp("metadata encoding"),
	"d19-entry-must-understand.zarr.json":         unsupp("must_understand"),
	"d19-entry-extensions-not-list.zarr.json":     invalid("extensions"),
	"d19-entry-zarr-format-v4.zarr.json":          unsupp("v3 draft hierarchy"),

	"v1-not-json.meta":            invalid("not JSON"),
	"v1-zarr-format-2.meta":       invalid("zarr_format 2, want 1"),
	"v1-duplicate-key.meta":       invalid(`member "dtype" appears twice`),
	"v1-shape-overflow.meta":      invalid("overflows int64"),
	"v1-rank-33.meta":             invalid("more than 32"),
	"v1-chunks-zero.meta":         invalid("must be positive"),
	"v1-compression-unknown.meta": unsupp("snappy"),
}

// Good siblings: an int16 array of shape [4], chunks [2], holding 1 2 3 4.

// The fuzz targets seeded with these documents are in hostile_fuzz_test.go.

const (
	goodV2Array = `{"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "<i2", "compressor": null, "filters": null, "fill_value": 0, "order": "C"}`
	goodV3Array = `{"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "int16",
		"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
		"chunk_key_encoding": {"name": "default"}, "fill_value": 0,
		"codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}`
)

// goodDraftArray is the good sibling in a store of the 2022 v3 draft,
// goodDraft19Array in one of the 2019 draft.
const (
	goodDraftArray = `{"shape": [4], "data_type": "<i2", "chunk_grid": {"type": "regular", "chunk_shape": [2], "separator": "/"},
	"chunk_memory_layout": "C", "fill_value": 0, "extensions": [], "attributes": {}}`
	goodDraft19Array = `{"zarr_format": "http://purl.org/zarr/spec/protocol/core/3.0", "shape": [4], "data_type": "<i2",
	"chunk_grid": {"type": "regular", "chunk_shape": [2]}, "chunk_memory_layout": "C", "compressor": null,
	"fill_value": 0, "extensions": [], "attributes": {}}`
	draft19Entry = `{"zarr_format": "http://purl.org/zarr/spec/protocol/core/3.0", "metadata_encoding": "application/json", "extensions": []}`
	draft22Entry = `{"zarr_format": "https://purl.org/zarr/spec/core/3.0", "metadata_encoding": {"type": "json", "metadata_key_suffix": ".json"}, "extensions": []}`
)

var goodData = []byte{1, 0, 2, 0, 3, 0, 4, 0}

// hostileStore returns the keys of a store holding the hostile document
// doc, named as in testdata/hostile/meta, beside a good array "good"; it
// returns the path of the hostile node too.
func hostileStore(name string, doc []byte) (keys map[string][]byte, path string) {
	switch {
	case strings.HasPrefix(name, "v2-"):
		return map[string][]byte{
			".zgroup":      []byte(`{"zarr_format": 2}`),
			"good/.zarray": []byte(goodV2Array), "good/0": goodData[:4], "good/1": goodData[4:],
			"bad/.zarray": doc, "bad/0": goodData[:4],
		}, "bad"
	case strings.HasPrefix(name, "v3-"):
		return map[string][]byte{
			"zarr.json":      []byte(`{"zarr_format": 3, "node_type": "group"}`),
			"good/zarr.json": []byte(goodV3Array), "good/c/0": goodData[:4], "good/c/1": goodData[4:],
			"bad/zarr.json": doc, "bad/c/0": goodData[:4],
		}, "bad"
	case strings.HasPrefix(name, "d22-"):
		keys := map[string][]byte{
			"zarr.json":            []byte(draft22Entry),
			"meta/group.json":      []byte(`{"attributes": {}}`),
			"meta/good.array.json": []byte(goodDraftArray),
			"data/good/c0":         goodData[:4], "data/good/c1": goodData[4:],
			"data/bad/c0": goodData[:4],
		}
		switch {
		case strings.HasSuffix(name, ".zarr.json"):
			keys["zarr.json"] = doc
			return keys, ""
		case strings.HasSuffix(name, ".group.json"):
			keys["meta/bad.group.json"] = doc
		default:
			keys["meta/bad.array.json"] = doc
		}
		return keys, "bad"
	case strings.HasPrefix(name, "d19-"):
		keys := map[string][]byte{
			"zarr.json":            []byte(draft19Entry),
			"meta/root.group":      []byte(`{"zarr_format": "http://purl.org/zarr/spec/protocol/core/3.0", "extensions": [], "attributes": {}}`),
			"meta/root/good.array": []byte(goodDraft19Array),
			"data/good/0":          goodData[:4], "data/good/1": goodData[4:],
			"data/bad/0": goodData[:4],
		}
		switch {
		case strings.HasSuffix(name, ".zarr.json"):
			keys["zarr.json"] = doc
			return keys, ""
		case strings.HasSuffix(name, ".group"):
			keys["meta/root/bad.group"] = doc
		default:
			keys["meta/root/bad.array"] = doc
		}
		return keys, "bad"
	case strings.HasPrefix(name, "v1-"):
		return map[string][]byte{"meta": doc, "0": goodData[:4]}, ""
	}
	return nil, ""
}

// plainNodeType returns the kind a document's node_type names plainly
// ("array" or "group", exactly as written), or KindUnknown.
func plainNodeType(doc []byte) Kind {
	var obj map[string]json.RawMessage
	if len(doc) > MaxDocumentSize || json.Unmarshal(doc, &obj) != nil {
		return KindUnknown
	}
	switch string(obj["node_type"]) {
	case `"array"`:
		return KindArray
	case `"group"`:
		return KindGroup
	}
	return KindUnknown
}

// nodeError returns the error that reading a node's data gives.
func nodeError(n *Node) error {
	switch {
	case n.Err != nil:
		return n.Err
	case n.Array != nil && n.Array.Err != nil:
		return n.Array.Err
	case n.Array == nil:
		return errors.New("not an array")
	}
	return nil
}

// checkHostileNode opens a store with a hostile node and checks its error,
// that the node still lists with its document as stored, and that the
// good sibling reads normally.
func checkHostileNode(t *testing.T, name string, doc []byte, want hostileWant) {
	t.Helper()
	ctx := context.Background()
	keys, path := hostileStore(name, doc)
	if keys == nil {
		t.Fatalf("%s: no store layout for this name", name)
	}
	st, err := memory.FromMap(keys)
	if err != nil {
		t.Fatal(err)
	}
	h, err := Open(ctx, st, Options{})
	if err != nil && path == "" {
		// The root's document is read by Open: a v1 store (one array, at
		// the root) whose meta cannot be read fails as a whole.
		if !errors.Is(err, want.is) || !strings.Contains(err.Error(), want.msg) {
			t.Errorf("Open: %q, want an error matching %v and containing %q", err, want.is, want.msg)
		}
		return
	}
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	n, err := h.Node(ctx, path)
	if err != nil {
		t.Fatalf("Node(%q): %v", path, err)
	}
	got := nodeError(n)
	if got == nil {
		t.Fatalf("node %q: no error, want one matching %v", path, want.is)
	}
	if !errors.Is(got, want.is) || !strings.Contains(got.Error(), want.msg) {
		t.Errorf("node %q: error %q, want one matching %v and containing %q", path, got, want.is, want.msg)
	}
	// The errno the mount gives follows from the class: EOPNOTSUPP for
	// unsupported, EIO otherwise. The two classes must not overlap.
	if errors.Is(got, ErrUnsupported) && errors.Is(got, ErrInvalidMetadata) {
		t.Errorf("node %q: error %q is both unsupported and invalid", path, got)
	}
	// A broken array whose kind can be told still shows as an array (whose
	// data then fails to read), not as an empty group; a broken draft
	// group document is a group.
	draftArray := strings.HasSuffix(name, ".array") || strings.HasSuffix(name, ".array.json")
	if (strings.HasPrefix(name, "v2-") || strings.HasPrefix(name, "v1-") || draftArray || strings.HasPrefix(name, "v3-") && plainNodeType(doc) == KindArray) && n.Kind != KindArray {
		t.Errorf("node %q: kind %v, want array", path, n.Kind)
	}
	if (strings.HasSuffix(name, ".group") || strings.HasSuffix(name, ".group.json")) && n.Kind != KindGroup {
		t.Errorf("node %q: kind %v, want group", path, n.Kind)
	}
	// A v3 document whose node type cannot be told makes a node of
	// unknown kind, not a group.
	if strings.HasPrefix(name, "v3-") && plainNodeType(doc) == KindUnknown && n.Kind != KindUnknown {
		t.Errorf("node %q: kind %v, want unknown", path, n.Kind)
	}
	if n.Array != nil && n.Array.Err == nil {
		t.Errorf("node %q: usable array despite %v", path, got)
	}
	if len(doc) <= MaxDocumentSize && (len(n.Documents) == 0 || !bytes.Equal(n.Documents[0].Data, doc)) {
		t.Errorf("node %q: documents %d, first not the stored document", path, len(n.Documents))
	}
	if path == "" {
		return
	}
	children, err := h.Children(ctx, "")
	if err != nil {
		t.Fatalf("Children: %v", err)
	}
	var names []string
	for _, c := range children {
		names = append(names, c.Name())
	}
	if strings.Join(names, ",") != "bad,good" {
		t.Errorf("children %v, want [bad good]", names)
	}
	g, err := h.Node(ctx, "good")
	if err != nil || g.Array == nil || g.Array.Err != nil {
		t.Fatalf("good sibling: %v %+v", err, g)
	}
	buf := make([]byte, len(goodData))
	if k, err := g.Array.ReadAt(ctx, buf, 0); err != nil || k != len(buf) || !bytes.Equal(buf, goodData) {
		t.Errorf("good sibling: read %d %v: % x", k, err, buf)
	}
}

func TestHostileMetadata(t *testing.T) {
	dir := filepath.Join("testdata", "hostile", "meta")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		seen[name] = true
		want, ok := hostileMeta[name]
		if !ok {
			t.Errorf("%s: no expected error in hostileMeta", name)
			continue
		}
		doc, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		t.Run(name, func(t *testing.T) { checkHostileNode(t, name, doc, want) })
	}
	for name := range hostileMeta {
		if !seen[name] {
			t.Errorf("hostileMeta names %s, which is not in %s", name, dir)
		}
	}
}

// TestHostileMetadataHuge: documents over MaxDocumentSize are refused
// without being read whole (built at test time: 100 MiB is too large to
// keep in the repository).
func TestHostileMetadataHuge(t *testing.T) {
	huge := bytes.Repeat([]byte(" "), 100<<20)
	copy(huge, goodV2Array)
	t.Run("v2-100MiB.zarray", func(t *testing.T) {
		checkHostileNode(t, "v2-100MiB.zarray", huge, invalid("limit for metadata documents"))
	})
	over := huge[:MaxDocumentSize+1]
	for _, name := range []string{"v3-over-limit.zarr.json", "v1-over-limit.meta"} {
		t.Run(name, func(t *testing.T) {
			checkHostileNode(t, name, over, invalid("limit for metadata documents"))
		})
	}
	// Just over the limit is refused, just under it is read.
	for _, size := range []int{MaxDocumentSize, MaxDocumentSize + 1} {
		doc := bytes.Repeat([]byte(" "), size)
		copy(doc, goodV2Array)
		keys, _ := hostileStore("v2-", doc)
		st, _ := memory.FromMap(keys)
		h, err := Open(context.Background(), st, Options{})
		if err != nil {
			t.Fatal(err)
		}
		n, err := h.Node(context.Background(), "bad")
		if err != nil {
			t.Fatal(err)
		}
		if refused := n.Err != nil; refused != (size > MaxDocumentSize) {
			t.Errorf("%d-byte document: error %v", size, n.Err)
		}
	}
}

// Consolidated metadata naming paths that fail key validation: those
// entries name no node and do not list; the good ones still work.
func TestHostileConsolidatedPaths(t *testing.T) {
	ctx := context.Background()
	bad := []string{"../../x", "/etc", "a//b", "a\\b", "./c", "d/..", "nul\x00"}
	dir := filepath.Join("testdata", "hostile", "consolidated")
	for _, name := range []string{"zmetadata-bad-paths.json", "v3-bad-paths.zarr.json"} {
		t.Run(name, func(t *testing.T) {
			doc, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			keys := map[string][]byte{"good/0": goodData[:4], "good/1": goodData[4:], "good/c/0": goodData[:4], "good/c/1": goodData[4:]}
			if strings.HasPrefix(name, "v3-") {
				keys["zarr.json"] = doc
			} else {
				keys[".zmetadata"] = doc
			}
			st, err := memory.FromMap(keys)
			if err != nil {
				t.Fatal(err)
			}
			h, err := Open(ctx, st, Options{})
			if err != nil {
				t.Fatal(err)
			}
			children, err := h.Children(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, c := range children {
				names = append(names, c.Name())
			}
			sort.Strings(names)
			if strings.Join(names, ",") != "good" {
				t.Errorf("children %q, want only good", names)
			}
			for _, p := range bad {
				if n, err := h.Node(ctx, p); err == nil && n.Err == nil && n.Path != "" && n.Path != "d" {
					t.Errorf("Node(%q) = %q, a node named by an invalid consolidated path", p, n.Path)
				}
			}
			g, err := h.Node(ctx, "good")
			if err != nil || g.Array == nil || g.Array.Err != nil {
				t.Fatalf("good: %v", err)
			}
			buf := make([]byte, 8)
			if _, err := g.Array.ReadAt(ctx, buf, 0); err != nil || !bytes.Equal(buf, goodData) {
				t.Errorf("good: %v % x", err, buf)
			}
		})
	}
}

// hostileSeeds returns the files of testdata/hostile/meta whose names
// start with prefix, for fuzz corpora.
