package zarr

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/dir"
	"github.com/zarrfs/zarrfs/store/memory"
)

func memStore(t *testing.T, m map[string]string) *memory.Store {
	t.Helper()
	b := map[string][]byte{}
	for k, v := range m {
		b[k] = []byte(v)
	}
	st, err := memory.FromMap(b)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

const v3Group = `{"zarr_format": 3, "node_type": "group", "attributes": {"title": "root"}}`

func v3Array(codecs string) string {
	return `{"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "int8",
	"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
	"chunk_key_encoding": {"name": "default"}, "fill_value": 5, "codecs": ` + codecs + `}`
}

// childSummary describes children as "name:kind[:err]" for comparison.
func childSummary(nodes []*Node) []string {
	var out []string
	for _, n := range nodes {
		s := n.Name() + ":" + n.Kind.String()
		if n.Err != nil {
			s += ":err"
		}
		if n.Array != nil && n.Array.Err != nil {
			s += ":array-err"
		}
		out = append(out, s)
	}
	return out
}

func TestHierarchyV3BrokenSiblings(t *testing.T) {
	ctx := context.Background()
	st := memStore(t, map[string]string{
		"zarr.json":            v3Group,
		"good/zarr.json":       v3Array(`[{"name": "bytes"}]`),
		"good/c/0":             "\x01\x02",
		"bad/zarr.json":        `{not json`,
		"unsup/zarr.json":      v3Array(`[{"name": "bytes"}, {"name": "frobnicate"}]`),
		"mu/zarr.json":         `{"zarr_format": 3, "node_type": "group", "frob": 1}`,
		"sub/zarr.json":        v3Group,
		"sub/deep/zarr.json":   v3Array(`[{"name": "bytes"}]`),
		"__private/zarr.json":  v3Group,
		"notanode/x":           "data",
		"wrongfmt/zarr.json":   `{"zarr_format": 2, "node_type": "group"}`,
		"sub/deep/c/1":         "\x07\x08",
		"sub/deep/extra/thing": "x",
	})
	h, err := Open(ctx, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	kids, err := h.Children(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"bad:unknown:err", "good:array", "mu:group:err", "sub:group", "unsup:array:array-err", "wrongfmt:group:err"}
	if got := childSummary(kids); !slices.Equal(got, want) {
		t.Errorf("children = %v, want %v", got, want)
	}
	for _, n := range kids {
		switch n.Name() {
		case "bad":
			if !errors.Is(n.Err, ErrInvalidMetadata) || !strings.Contains(n.Err.Error(), "not JSON") {
				t.Errorf("bad: %v", n.Err)
			}
			if len(n.Documents) != 1 || string(n.Documents[0].Data) != "{not json" {
				t.Errorf("bad: documents %v", n.Documents)
			}
		case "unsup":
			if !errors.Is(n.Array.Err, ErrUnsupported) || !strings.Contains(n.Array.Err.Error(), "frobnicate") {
				t.Errorf("unsup: %v", n.Array.Err)
			}
			if _, err := n.Array.ReadAt(ctx, make([]byte, 4), 0); !errors.Is(err, ErrUnsupported) {
				t.Errorf("unsup ReadAt: %v", err)
			}
		case "mu":
			if !errors.Is(n.Err, ErrUnsupported) || !strings.Contains(n.Err.Error(), `"frob"`) {
				t.Errorf("mu: %v", n.Err)
			}
		}
	}
	deep, err := h.Node(ctx, "/sub/deep/")
	if err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 4)
	if _, err := deep.Array.ReadAt(ctx, got, 0); err != nil {
		t.Fatal(err)
	}
	if string(got) != "\x05\x05\x07\x08" {
		t.Errorf("deep = %x, want 05050708", got)
	}
	if _, err := h.Node(ctx, "sub/nothing"); !errors.Is(err, ErrNotExist) {
		t.Errorf("missing node: %v", err)
	}
	if _, err := h.Node(ctx, "good/c"); !errors.Is(err, ErrNotExist) {
		t.Errorf("chunk prefix as node: %v", err)
	}
	root, err := h.Node(ctx, "")
	if err != nil || root.Kind != KindGroup || root.Name() != "" || !strings.Contains(string(root.Attributes), "root") {
		t.Errorf("root = %+v, %v", root, err)
	}
	if kids, err := h.Children(ctx, "good"); err != nil || len(kids) != 0 {
		t.Errorf("children of an array = %v, %v", kids, err)
	}
}

func TestHierarchyV2(t *testing.T) {
	ctx := context.Background()
	arr := `{"zarr_format": 2, "shape": [3], "chunks": [2], "dtype": "<i2", "compressor": null,
	"filters": null, "fill_value": 9, "order": "C"}`
	st := memStore(t, map[string]string{
		".zgroup":          `{"zarr_format": 2}`,
		".zattrs":          `{"a": 1}`,
		"x/.zarray":        arr,
		"x/.zattrs":        `{"_ARRAY_DIMENSIONS": ["t"]}`,
		"x/0":              "\x01\x00\x02\x00",
		"y/.zarray":        `{"zarr_format": 2, "shape": [-3]}`,
		"z/.zgroup":        `{"zarr_format": 2}`,
		"z/w/.zarray":      arr,
		"badattrs/.zgroup": `{"zarr_format": 2}`,
		"badattrs/.zattrs": `[1]`,
	})
	h, err := Open(ctx, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	kids, err := h.Children(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"badattrs:group:err", "x:array", "y:array:err", "z:group"}
	if got := childSummary(kids); !slices.Equal(got, want) {
		t.Errorf("children = %v, want %v", got, want)
	}
	x := kids[1]
	if names := []string{x.Documents[0].Name, x.Documents[1].Name}; !slices.Equal(names, []string{".zarray", ".zattrs"}) {
		t.Errorf("x documents %v", names)
	}
	if !slices.Equal(x.Array.DimensionNames(), []string{"t"}) {
		t.Errorf("dimension names %v", x.Array.DimensionNames())
	}
	got := make([]byte, 6)
	if _, err := x.Array.ReadAt(ctx, got, 0); err != nil {
		t.Fatal(err)
	}
	if string(got) != "\x01\x00\x02\x00\x09\x00" {
		t.Errorf("x = %x", got)
	}
	if !strings.Contains(kids[2].Err.Error(), "shape[0] = -3") || !strings.Contains(kids[2].Err.Error(), `"/y"`) {
		t.Errorf("y error %v does not name the node and the cause", kids[2].Err)
	}
}

// countingStore counts Get and GetRange calls (concurrent ones too: reads
// of several chunks run in parallel).
type countingStore struct {
	store.Store
	gets atomic.Int64
}

func (c *countingStore) Get(ctx context.Context, key string) ([]byte, error) {
	c.gets.Add(1)
	return c.Store.Get(ctx, key)
}

func (c *countingStore) GetRange(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	c.gets.Add(1)
	return c.Store.GetRange(ctx, key, r)
}

func TestConsolidatedV2(t *testing.T) {
	ctx := context.Background()
	cons := map[string]any{
		"zarr_consolidated_format": 1,
		"metadata": map[string]any{
			".zgroup":     map[string]any{"zarr_format": 2},
			"a/.zgroup":   map[string]any{"zarr_format": 2},
			"a/.zattrs":   map[string]any{"k": "v"},
			"a/b/.zarray": map[string]any{"zarr_format": 2, "shape": []int{2}, "chunks": []int{2}, "dtype": "|u1", "compressor": nil, "filters": nil, "fill_value": 3, "order": "C"},
		},
	}
	doc, _ := json.Marshal(cons)
	mem := memStore(t, map[string]string{".zmetadata": string(doc), "a/b/0": "\x01\x02"})
	st := &countingStore{Store: mem}
	h, err := Open(ctx, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := st.gets.Load(); n != 2 {
		t.Errorf("Open made %d reads, want 2 (zarr.json, .zmetadata)", n)
	}
	st.gets.Store(0)
	root, err := h.Node(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	kids, err := h.Children(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := childSummary(kids); !slices.Equal(got, []string{"a:group"}) {
		t.Errorf("children %v", got)
	}
	gk, err := h.Children(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if got := childSummary(gk); !slices.Equal(got, []string{"b:array"}) {
		t.Errorf("children of a %v", got)
	}
	if n := st.gets.Load(); n != 0 {
		t.Errorf("%d store reads for metadata after Open, want 0", n)
	}
	var names []string
	for _, d := range root.Documents {
		names = append(names, d.Name)
	}
	if !slices.Equal(names, []string{".zgroup", ".zmetadata"}) {
		t.Errorf("root documents %v", names)
	}
	if a := kids[0]; string(a.Documents[1].Data) != "{\n    \"k\": \"v\"\n}" {
		t.Errorf("a/.zattrs re-serialised as %q", a.Documents[1].Data)
	}
	got := make([]byte, 2)
	if _, err := gk[0].Array.ReadAt(ctx, got, 0); err != nil || string(got) != "\x01\x02" {
		t.Errorf("b = %x, %v", got, err)
	}
}

func TestConsolidatedV3(t *testing.T) {
	ctx := context.Background()
	root := `{"zarr_format": 3, "node_type": "group", "attributes": {},
	"consolidated_metadata": {"kind": "inline", "must_understand": false, "metadata": {
		"g": {"zarr_format": 3, "node_type": "group", "attributes": {"x": 1}},
		"g/arr": ` + v3Array(`[{"name": "bytes"}]`) + `}}}`
	mem := memStore(t, map[string]string{"zarr.json": root})
	st := &countingStore{Store: mem}
	h, err := Open(ctx, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	kids, err := h.Children(ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	if got := childSummary(kids); !slices.Equal(got, []string{"arr:array"}) {
		t.Fatalf("children of g %v", got)
	}
	got := make([]byte, 4)
	if _, err := kids[0].Array.ReadAt(ctx, got, 0); err != nil || string(got) != "\x05\x05\x05\x05" {
		t.Errorf("arr = %x, %v", got, err)
	}
	// One read for zarr.json, two for the (missing) chunks of arr.
	if n := st.gets.Load(); n != 3 {
		t.Errorf("%d store reads, want 3", n)
	}
	if d := kids[0].Documents[0]; d.Name != "zarr.json" || !strings.HasPrefix(string(d.Data), "{\n  \"") {
		t.Errorf("re-serialised document %s %q", d.Name, d.Data)
	}
}

func TestDocumentTooLarge(t *testing.T) {
	ctx := context.Background()
	big := `{"zarr_format": 3, "node_type": "group", "attributes": {"x": "` + strings.Repeat("a", MaxDocumentSize) + `"}}`
	st := memStore(t, map[string]string{"zarr.json": v3Group, "big/zarr.json": big, "ok/zarr.json": v3Group})
	h, err := Open(ctx, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	kids, err := h.Children(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := childSummary(kids); !slices.Equal(got, []string{"big:unknown:err", "ok:group"}) {
		t.Errorf("children %v", got)
	}
	if err := kids[0].Err; !errors.Is(err, ErrInvalidMetadata) || !strings.Contains(err.Error(), "limit") {
		t.Errorf("big: %v", err)
	}
}

func TestBrokenConsolidatedV2(t *testing.T) {
	ctx := context.Background()
	st := memStore(t, map[string]string{".zmetadata": `{"zarr_consolidated_format": 1}`, ".zgroup": `{"zarr_format": 2}`, "a/.zgroup": `{"zarr_format": 2}`})
	h, err := Open(ctx, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	kids, err := h.Children(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := childSummary(kids); !slices.Equal(got, []string{"a:group"}) {
		t.Errorf("children %v", got)
	}
	root, err := h.Node(ctx, "")
	if err != nil || len(root.Documents) != 2 || root.Documents[1].Name != ".zmetadata" {
		t.Errorf("root %+v, %v", root, err)
	}
	only := memStore(t, map[string]string{".zmetadata": `[]`})
	if _, err := Open(ctx, only, Options{}); !errors.Is(err, ErrInvalidMetadata) {
		t.Errorf("Open with only a broken .zmetadata: %v", err)
	}
}

func TestOpenNothing(t *testing.T) {
	if _, err := Open(context.Background(), memory.New(), Options{}); !errors.Is(err, ErrNotExist) {
		t.Errorf("Open of an empty store: %v", err)
	}
}

// getOnly hides every interface of a store but store.Store.
type getOnly struct{ store.Store }

func TestChildrenWithoutListing(t *testing.T) {
	ctx := context.Background()
	st := getOnly{memStore(t, map[string]string{"zarr.json": v3Group, "a/zarr.json": v3Group})}
	h, err := Open(ctx, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Children(ctx, ""); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Children of an unlistable store: %v, want ErrUnsupported", err)
	}
	if n, err := h.Node(ctx, "a"); err != nil || n.Kind != KindGroup {
		t.Errorf("Node a = %v, %v", n, err)
	}
}

func TestModTime(t *testing.T) {
	ctx := context.Background()
	st := memStore(t, map[string]string{"zarr.json": v3Group})
	h, err := Open(ctx, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	n, err := h.Node(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Stat(ctx, "zarr.json")
	if err != nil {
		t.Fatal(err)
	}
	if !n.ModTime.Equal(info.ModTime) || n.ModTime.IsZero() {
		t.Errorf("ModTime %v, store says %v", n.ModTime, info.ModTime)
	}
}

// statCounter counts the Stat calls made to a directory store.
type statCounter struct {
	*dir.Store
	stats atomic.Int32
}

func (s *statCounter) Stat(ctx context.Context, key string) (store.Info, error) {
	s.stats.Add(1)
	return s.Store.Stat(ctx, key)
}

// TestModTimeFromRead: a store that describes what it reads (the directory
// store) gives a node its modification time with the read of its document,
// without a Stat.
func TestModTimeFromRead(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	ds, err := dir.Open(root, dir.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	for key, doc := range map[string]string{".zgroup": `{"zarr_format": 2}`, "x/.zarray": `{"zarr_format": 2, "shape": [3], "chunks": [2],
		"dtype": "<i2", "compressor": null, "filters": null, "fill_value": 9, "order": "C"}`} {
		if err := ds.Set(ctx, key, []byte(doc)); err != nil {
			t.Fatal(err)
		}
	}
	when := time.Date(2021, 2, 3, 4, 5, 6, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(root, "x", ".zarray"), when, when); err != nil {
		t.Fatal(err)
	}
	st := &statCounter{Store: ds}
	h, err := Open(ctx, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	n, err := h.Node(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	if !n.ModTime.Equal(when) {
		t.Errorf("ModTime %v, want %v", n.ModTime, when)
	}
	if k := st.stats.Load(); k != 0 {
		t.Errorf("%d Stat calls, want none", k)
	}
}

// TestConsolidatedStoredDocuments: on a consolidated store the documents
// are the bytes the store holds (GDAL writes compact documents and an
// indented .zmetadata), fetched at their first use and never at load;
// only a document the store does not hold is re-serialised.
func TestConsolidatedStoredDocuments(t *testing.T) {
	ctx := context.Background()
	zarray := `{"zarr_format":2,"shape":[2],"chunks":[2],"dtype":"<f4","compressor":null,"filters":null,"fill_value":NaN,"order":"C"}`
	zattrs := `{"_ARRAY_DIMENSIONS":["x"],"m":NaN}`
	zmeta := "{\n  \"zarr_consolidated_format\":1,\n  \"metadata\":{\n    \".zgroup\":{\"zarr_format\":2},\n" +
		"    \"a/.zarray\":" + zarray + ",\n    \"a/.zattrs\":" + zattrs + ",\n" +
		"    \"only/.zgroup\":{\"zarr_format\":2}\n  }\n}"
	mem := memStore(t, map[string]string{".zmetadata": zmeta, ".zgroup": `{"zarr_format":2}`, "a/.zarray": zarray, "a/.zattrs": zattrs})
	st := &countingStore{Store: mem}
	h, err := Open(ctx, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := h.Node(ctx, "a")
	if err != nil || a.Err != nil {
		t.Fatal(err, a.Err)
	}
	only, err := h.Node(ctx, "only")
	if err != nil {
		t.Fatal(err)
	}
	st.gets.Store(0)
	if _, err := h.Children(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if n := st.gets.Load(); n != 0 {
		t.Errorf("loading the nodes read %d documents, want none", n)
	}
	for i, want := range []string{zarray, zattrs} {
		if string(a.Documents[i].Data) == want {
			t.Errorf("%s: Data is already the stored document", a.Documents[i].Name)
		}
		for range 2 {
			b, err := a.Documents[i].Bytes(ctx)
			if err != nil || string(b) != want {
				t.Errorf("%s: %q, %v; want the stored %q", a.Documents[i].Name, b, err, want)
			}
		}
	}
	if n := st.gets.Load(); n != 2 {
		t.Errorf("%d reads for two documents read twice, want 2", n)
	}
	// A document the store does not hold is shown re-serialised.
	if b, err := only.Documents[0].Bytes(ctx); err != nil || string(b) != "{\n    \"zarr_format\": 2\n}" {
		t.Errorf("only/.zgroup: %q, %v", b, err)
	}
}
