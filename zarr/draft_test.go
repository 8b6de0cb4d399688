package zarr

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
	"github.com/zarrfs/zarrfs/store/memory"
)

func TestPeerPythonWritesDraft2022(t *testing.T) {
	peertest.NeedPython(t)
	root, refs := t.TempDir(), t.TempDir()
	out := peertest.Oracle(t, "zarr/write_draft.py", root, refs)
	ctx := context.Background()
	h := openDir(t, root)
	if h.Format() != FormatV3Draft2022 {
		t.Fatalf("Format = %v, want v3-draft-2022", h.Format())
	}
	rootNode, err := h.Node(ctx, "")
	if err != nil || rootNode.Err != nil {
		t.Fatalf("root: %v, %v", err, rootNode)
	}
	if got := strings.Join(docNames(rootNode), " "); got != "group.json zarr.json" {
		t.Errorf("root documents %q, want group.json zarr.json", got)
	}
	if !strings.Contains(string(rootNode.Attributes), `"draft"`) {
		t.Errorf("root attributes %s", rootNode.Attributes)
	}
	var kids []string
	children, err := h.Children(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range children {
		kids = append(kids, c.Name()+":"+c.Kind.String())
	}
	if got := strings.Join(kids, " "); !strings.HasPrefix(got, "a02:array a05:array") || !strings.Contains(got, "explicit:group implicit:group") || !strings.Contains(got, "strings:array") {
		t.Errorf("root children %q", got)
	}
	for _, p := range []string{"implicit", "implicit/deep"} {
		n, err := h.Node(ctx, p)
		if err != nil || n.Kind != KindGroup || len(n.Documents) != 0 || n.Err != nil {
			t.Errorf("implicit group %q: %v %+v", p, err, n)
		}
	}
	if n, err := h.Node(ctx, "explicit"); err != nil || n.Kind != KindGroup || strings.Join(docNames(n), " ") != "group.json" {
		t.Errorf("explicit group: %v %+v", err, n)
	}
	if _, err := h.Node(ctx, "nothing"); !errors.Is(err, ErrNotExist) {
		t.Errorf("missing node: %v, want ErrNotExist", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var c struct{ Name string }
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("python output %q: %v", line, err)
		}
		t.Run(strings.ReplaceAll(c.Name, "/", "_"), func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(refs, strings.ReplaceAll(c.Name, "/", "_")+".bin"))
			if err != nil {
				t.Fatal(err)
			}
			n, got := readArray(t, h, c.Name)
			if !bytes.Equal(got, want) {
				t.Errorf("content differs from python's z[...]:\n got %x\nwant %x", got, want)
			}
			if strings.Join(docNames(n), " ") != "array.json" {
				t.Errorf("documents %v", docNames(n))
			}
		})
	}
	t.Run("strings", func(t *testing.T) {
		var want []string
		b, err := os.ReadFile(filepath.Join(refs, "strings.json"))
		if err != nil || json.Unmarshal(b, &want) != nil {
			t.Fatal(err)
		}
		n, err := h.Node(ctx, "strings")
		if err != nil || n.Array == nil || n.Array.Err != nil {
			t.Fatalf("strings: %v %+v", err, n)
		}
		var got []string
		if err := n.Array.Elements(ctx, func(e []byte) error { got = append(got, string(e)); return nil }); err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("elements %q, want %q", got, want)
		}
	})
}

// f64s returns float64 values as little-endian bytes.
func f64s(v ...float64) []byte {
	var b []byte
	for _, f := range v {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
	}
	return b
}

// TestDraftTestdata reads the hand-written stores testdata/draft2022 (the
// 2022 draft's layout and examples: meta/group.json, an implicit group
// foo, gzip by URI, the endian codec, "+Infinity", a datetime extension
// type, an unknown extension type read through its r16 fallback) and
// testdata/draft2019 (the 2019 draft's meta/root.group, meta/root/…/.array
// without suffix, data/… chunk keys with "." or the grid's separator,
// compressor and the earliest draft's chunk_codecs).
func TestDraftTestdata(t *testing.T) {
	nan, inf := math.Float64frombits(0x7ff8000000000000), math.Inf(1) // NumPy's NaN
	baz := f64s(0, 1, 2, nan, 10, 11, 12, nan, nan, nan, nan, 23)
	i64 := func(v ...uint64) []byte { return le(len(v), 8, func(i int) uint64 { return v[i] }) }
	f32 := func(v ...float32) []byte {
		return le(len(v), 4, func(i int) uint64 { return uint64(math.Float32bits(v[i])) })
	}
	for _, s := range []struct {
		dir      string
		format   Format
		children map[string]string // path → "kind child child …"
		arrays   map[string][]any  // path → NumPy type, content
	}{
		{"draft2022", FormatV3Draft2022,
			map[string]string{"": "group big raw when foo", "foo": "group baz bar"},
			map[string][]any{"foo/baz": {"<f8", baz}, "big": {"<f4", f32(1, 2, 3, 4, float32(inf), float32(inf))},
				"when": {"<M8[ns]", i64(1, 2, 0)}, "raw": {"|V2", []byte{1, 2, 3, 4}}}},
		{"draft2019", FormatV3Draft2019,
			map[string]string{"": "group old foo", "foo": "group baz"},
			map[string][]any{"foo/baz": {"<f8", baz}, "old": {"<M8[s]", i64(0, 0, 5, 0, 0, 6)}}},
	} {
		t.Run(s.dir, func(t *testing.T) {
			ctx := context.Background()
			h := openDir(t, filepath.Join("testdata", s.dir))
			if h.Format() != s.format {
				t.Fatalf("Format = %v, want %v", h.Format(), s.format)
			}
			root, err := h.Node(ctx, "")
			if err != nil || root.Err != nil || strings.Join(docNames(root), " ") != "group.json zarr.json" {
				t.Fatalf("root: %v %+v", err, root)
			}
			if string(compactJSON(root.Attributes)) != `{"spam":"ham","eggs":42}` {
				t.Errorf("root attributes %s", root.Attributes)
			}
			for p, want := range s.children {
				n, err := h.Node(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				kids, err := h.Children(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				got := []string{n.Kind.String()}
				for _, k := range kids {
					if k.Err != nil {
						t.Errorf("%s: %v", k.Path, k.Err)
					}
					got = append(got, k.Name())
				}
				// Groups sort after arrays in want only for readability; compare as sets.
				if g, w := strings.Fields(strings.Join(got, " ")), strings.Fields(want); len(g) != len(w) || !sameSet(g, w) {
					t.Errorf("node %q: kind and children %v, want %v", p, g, w)
				}
			}
			for p, want := range s.arrays {
				n, got := readArray(t, h, p)
				if n.Array.DataType().NumPy != want[0].(string) {
					t.Errorf("%s: NumPy type %q, want %q", p, n.Array.DataType().NumPy, want[0])
				}
				if !bytes.Equal(got, want[1].([]byte)) {
					t.Errorf("%s: content\n got %x\nwant %x", p, got, want[1])
				}
				if strings.Join(docNames(n), " ") != "array.json" {
					t.Errorf("%s: documents %v", p, docNames(n))
				}
			}
		})
	}
}

func sameSet(a, b []string) bool {
	m := map[string]int{}
	for _, s := range a {
		m[s]++
	}
	for _, s := range b {
		m[s]--
	}
	for _, v := range m {
		if v != 0 {
			return false
		}
	}
	return true
}

// draft2019URIs are the codec URIs the 2019 draft's metadata names.
var draft2019URIs = map[string]string{
	"blosc": "https://purl.org/zarr/spec/codecs/blosc/1.0",
	"gzip":  "https://purl.org/zarr/spec/codecs/gzip/1.0",
}

// writeDraft2019 writes a hierarchy as the 2019 draft describes it: the
// entry point zarr.json, meta/root.group, a group meta/root/g.group, and
// each array of arrays at its path as meta/root/PATH.array with its chunks
// at data/PATH/ named by the indices joined with the grid's separator
// (omitted from the grid: the default "."), compressed by the compressor
// the array document names by URI. It returns each array's expected content.
func writeDraft2019(t *testing.T, root string, arrays map[string]v1Store, data func(n int, s v1Store) []byte) map[string][]byte {
	t.Helper()
	write := func(key string, v any) {
		b, err := json.MarshalIndent(v, "", "    ")
		must(t, err)
		p := filepath.Join(root, filepath.FromSlash(key))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, b, 0o644))
	}
	write("zarr.json", map[string]any{"zarr_format": "https://purl.org/zarr/spec/protocol/core/3.0",
		"metadata_encoding": "application/json", "extensions": []any{}})
	write("meta/root.group", map[string]any{"extensions": []any{}, "attributes": map[string]any{"writer": "seed 000"}})
	write("meta/root/g.group", map[string]any{"extensions": []any{}, "attributes": map[string]any{}})
	want := map[string][]byte{}
	for path, s := range arrays {
		grid := map[string]any{"type": "regular", "chunk_shape": s.chunks}
		sep := "."
		if s.sep != "" {
			grid["separator"], sep = s.sep, s.sep
		}
		doc := map[string]any{"shape": s.shape, "data_type": s.dtype, "chunk_grid": grid, "chunk_memory_layout": s.order,
			"fill_value": s.fill, "extensions": []any{}, "attributes": map[string]any{}}
		if s.compression != "none" {
			doc["compressor"] = map[string]any{"codec": draft2019URIs[s.compression], "configuration": s.opts}
		}
		write("meta/root/"+path+".array", doc)
		n := 1
		for _, d := range s.shape {
			n *= int(d)
		}
		want[path] = writeChunks(t, filepath.Join(root, "data", filepath.FromSlash(path)), s, data(n, s), sep)
	}
	return want
}

func TestDraft2019Written(t *testing.T) {
	arrays := map[string]v1Store{
		"g/a": {shape: []int64{7, 5}, chunks: []int64{3, 2}, dtype: "<i4", item: 4, order: "C", compression: "gzip",
			opts: map[string]any{"level": 1}, fill: 9, fillElem: le(1, 4, func(int) uint64 { return 9 }), missing: map[string]bool{"1.1": true}},
		"g/deep/b": {shape: []int64{4, 3, 2}, chunks: []int64{2, 2, 2}, dtype: ">f8", item: 8, swap: 8, order: "F", compression: "blosc",
			opts: map[string]any{"cname": "zstd", "clevel": 1, "shuffle": 1}, fill: "NaN",
			fillElem: le(1, 8, func(int) uint64 { return 0x7ff8000000000000 }), sep: "/", missing: map[string]bool{"0/1/0": true}},
		"c": {shape: []int64{5}, chunks: []int64{2}, dtype: "|S2", item: 2, order: "C", compression: "none",
			fill: nil, fillElem: []byte{0, 0}, missing: map[string]bool{"2": true}},
	}
	root := t.TempDir()
	want := writeDraft2019(t, root, arrays, func(n int, s v1Store) []byte {
		return le(n, s.item, func(i int) uint64 { return uint64(i*37+1) * 0x0101010101 })
	})
	h := openDir(t, root)
	if h.Format() != FormatV3Draft2019 {
		t.Fatalf("Format = %v", h.Format())
	}
	for path, w := range want {
		_, got := readArray(t, h, path)
		if !bytes.Equal(got, w) {
			t.Errorf("%s: content\n got %x\nwant %x", path, got, w)
		}
	}
	ctx := context.Background()
	for p, kids := range map[string]string{"": "c g", "g": "a deep", "g/deep": "b"} {
		nodes, err := h.Children(ctx, p)
		must(t, err)
		var names []string
		for _, n := range nodes {
			names = append(names, n.Name())
		}
		if strings.Join(names, " ") != kids {
			t.Errorf("children of %q: %v, want %s", p, names, kids)
		}
	}
	if n, err := h.Node(ctx, "g/deep"); err != nil || n.Kind != KindGroup || len(n.Documents) != 0 {
		t.Errorf("implicit group g/deep: %v %+v", err, n)
	}
}

// TestDraftRootArray reads hierarchies whose root is an array: its
// document is meta/root.array (2019) or meta/array.json (2022) and its
// chunk keys are "data/" and the chunk identifier.
func TestDraftRootArray(t *testing.T) {
	ctx := t.Context()
	for _, c := range []struct{ entry, doc, docKey, chunkKey string }{
		{`{"zarr_format": "https://purl.org/zarr/spec/protocol/core/3.0", "metadata_encoding": "application/json", "extensions": []}`,
			`{"shape": [3], "data_type": "|u1", "chunk_grid": {"type": "regular", "chunk_shape": [2]}, "chunk_memory_layout": "C", "fill_value": 9, "extensions": [], "attributes": {}}`,
			"meta/root.array", "data/0"},
		{`{"zarr_format": "https://purl.org/zarr/spec/core/3.0", "metadata_encoding": {"type": "json", "metadata_key_suffix": ".json"}, "extensions": []}`,
			`{"shape": [3], "data_type": "uint8", "chunk_grid": {"type": "regular", "chunk_shape": [2], "separator": "/"}, "chunk_memory_layout": "C", "fill_value": 9, "extensions": [], "attributes": {}}`,
			"meta/array.json", "data/c0"},
	} {
		st := memory.New()
		must(t, st.Set(ctx, "zarr.json", []byte(c.entry)))
		must(t, st.Set(ctx, c.docKey, []byte(c.doc)))
		must(t, st.Set(ctx, c.chunkKey, []byte{1, 2}))
		h, err := Open(ctx, st, Options{})
		must(t, err)
		n, got := readArray(t, h, "")
		if !bytes.Equal(got, []byte{1, 2, 9}) || strings.Join(docNames(n), " ") != "array.json zarr.json" {
			t.Errorf("%s: content %v, documents %v", c.docKey, got, docNames(n))
		}
	}
}
