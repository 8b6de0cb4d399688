package zarr

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/internal/treegen"
	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/dir"
	httpstore "github.com/zarrfs/zarrfs/store/http"
	"github.com/zarrfs/zarrfs/store/memory"
	"github.com/zarrfs/zarrfs/store/remote/remotetest"
)

// largeTree is the hierarchy of issue 42: 100,000 arrays in 1,000 groups,
// whose .zmetadata (37 MB) is over the 16 MiB limit for single documents.
var largeTree = treegen.Tree{Arrays: 100000}

// largeZmetadata returns the tree's .zmetadata, made once.
var largeZmetadata = sync.OnceValue(func() []byte {
	var b bytes.Buffer
	if err := largeTree.WriteConsolidated(&b); err != nil {
		panic(err)
	}
	return b.Bytes()
})

// walkLarge lists every group of the large tree and returns the number
// of arrays found.
func walkLarge(t *testing.T, h *Hierarchy) int {
	t.Helper()
	ctx := context.Background()
	groups, err := h.Children(ctx, "")
	if err != nil || len(groups) != largeTree.Groups() {
		t.Fatalf("root: %d children, %v; want %d", len(groups), err, largeTree.Groups())
	}
	arrays := 0
	for _, g := range groups {
		kids, err := h.Children(ctx, g.Path)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range kids {
			if k.Kind != KindArray || k.Err != nil || k.Array == nil || k.Array.Err != nil {
				t.Fatalf("%s: kind %v, err %v", k.Path, k.Kind, k.Err)
			}
			arrays++
		}
	}
	return arrays
}

// A consolidated hierarchy of 100,000 arrays opens and lists; the arrays
// it describes are not kept once listed (parsed again when asked for,
// with the same id: their cached chunks stay theirs).
func TestOpenLargeConsolidated(t *testing.T) {
	ctx := context.Background()
	zm := largeZmetadata()
	if len(zm) <= MaxDocumentSize {
		t.Fatalf(".zmetadata is %d bytes, not over the %d-byte limit", len(zm), MaxDocumentSize)
	}
	st := memory.New()
	st.Set(ctx, ".zmetadata", zm)
	st.Set(ctx, ".zgroup", []byte(treegen.GroupDoc))
	start := time.Now()
	h, err := Open(ctx, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("opened in %v", time.Since(start))
	if n := walkLarge(t, h); n != largeTree.Arrays {
		t.Errorf("%d arrays, want %d", n, largeTree.Arrays)
	}
	t.Logf("opened and listed in %v", time.Since(start))
	h.mu.Lock()
	kept := len(h.nodes)
	h.mu.Unlock()
	if want := 1 + largeTree.Groups(); kept != want {
		t.Errorf("the hierarchy keeps %d nodes, want the %d groups", kept, want)
	}
	p := largeTree.Path(12345)
	a, err := h.Node(ctx, p)
	if err != nil || a.Array == nil || a.Array.Shape()[0] != 64 {
		t.Fatalf("%s: %v, %v", p, a != nil && a.Array != nil, err)
	}
	h.recent = recentNodes{} // forget it: the next Node parses it again
	b, err := h.Node(ctx, p)
	if err != nil || b == a || b.Array.id != a.Array.id {
		t.Errorf("%s parsed again: same node %v, ids %d and %d, %v", p, b == a, a.Array.id, b.Array.id, err)
	}
	root, err := h.Node(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	// The root shows .zmetadata as stored, though kept compacted.
	i := slices.IndexFunc(root.Documents, func(d Document) bool { return d.Name == ".zmetadata" })
	if i < 0 {
		t.Fatalf("root documents %v: no .zmetadata", root.Documents)
	}
	if got, err := root.Documents[i].Bytes(ctx); err != nil || !bytes.Equal(got, zm) {
		t.Errorf(".zmetadata: %d bytes, %v; want the %d stored", len(got), err, len(zm))
	}
}

// Consolidated metadata over Options.ConsolidatedLimit is not used: the
// store is listed instead, and one line says so.
func TestConsolidatedOverLimit(t *testing.T) {
	ctx := context.Background()
	d := t.TempDir()
	tree := treegen.Tree{Arrays: 250, GroupSize: 50, Documents: true}
	if err := tree.Write(d); err != nil {
		t.Fatal(err)
	}
	st, err := dir.Open(d, dir.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	h, err := Open(ctx, st, Options{ConsolidatedLimit: 10000, Logf: func(f string, a ...any) { lines = append(lines, fmt.Sprintf(f, a...)) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "over the 10000-byte limit") {
		t.Errorf("logged %q; want one line saying .zmetadata is over the limit", lines)
	}
	if h.consolidated != nil || h.Format() != FormatV2 {
		t.Fatalf("format %v, consolidated %v; want v2, listed", h.Format(), h.consolidated != nil)
	}
	groups, err := h.Children(ctx, "")
	if err != nil || len(groups) != tree.Groups() {
		t.Fatalf("root: %d children, %v", len(groups), err)
	}
	kids, err := h.Children(ctx, groups[4].Path)
	if err != nil || len(kids) != 50 || kids[49].Array == nil {
		t.Fatalf("%s: %d children, %v", groups[4].Path, len(kids), err)
	}
	// A store close by: its arrays are not kept either, and are loaded
	// again under the same id.
	h.mu.Lock()
	kept := len(h.nodes)
	h.recent = recentNodes{}
	h.mu.Unlock()
	if kept != 1+tree.Groups() {
		t.Errorf("the hierarchy keeps %d nodes, want the %d groups", kept, 1+tree.Groups())
	}
	again, err := h.Node(ctx, kids[49].Path)
	if err != nil || again == kids[49] || again.Array.id != kids[49].Array.id {
		t.Errorf("%s loaded again: same node %v, ids %d and %d, %v", kids[49].Path, again == kids[49], kids[49].Array.id, again.Array.id, err)
	}
	// Without the documents, the store shows only its root group.
	bare := t.TempDir()
	if err := (treegen.Tree{Arrays: 250}).Write(bare); err != nil {
		t.Fatal(err)
	}
	if st, err = dir.Open(bare, dir.Options{}); err != nil {
		t.Fatal(err)
	}
	if h, err = Open(ctx, st, Options{ConsolidatedLimit: 10000}); err != nil {
		t.Fatal(err)
	}
	if kids, err := h.Children(ctx, ""); err != nil || len(kids) != 0 {
		t.Errorf("bare store: %d children, %v", len(kids), err)
	}
}

// A v3 root zarr.json whose inline consolidated metadata makes it larger
// than MaxDocumentSize opens: the root is parsed without it, its
// children come from it; over the limit, the store is listed.
func TestV3LargeInlineConsolidated(t *testing.T) {
	ctx := context.Background()
	const n = 60000
	arr := `{"zarr_format": 3, "node_type": "array", "shape": [64], "data_type": "float32", ` +
		`"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [8]}}, ` +
		`"chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}}, ` +
		`"fill_value": "NaN", "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}], ` +
		`"attributes": {"long_name": "a variable with a longish name"}, "dimension_names": ["x"]}`
	var b bytes.Buffer
	b.WriteString(`{"zarr_format": 3, "node_type": "group", "attributes": {"title": "large"}, "consolidated_metadata": {"kind": "inline", "must_understand": false, "metadata": {`)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		if i%100 == 0 {
			fmt.Fprintf(&b, `"g%04d": {"zarr_format": 3, "node_type": "group"}, `, i/100)
		}
		fmt.Fprintf(&b, `"g%04d/a%03d": %s`, i/100, i%100, arr)
	}
	b.WriteString(`}}}`)
	doc := b.Bytes()
	if len(doc) <= MaxDocumentSize {
		t.Fatalf("zarr.json is %d bytes, not over %d", len(doc), MaxDocumentSize)
	}
	st := memory.New()
	st.Set(ctx, "zarr.json", doc)
	h, err := Open(ctx, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	root, err := h.Node(ctx, "")
	if err != nil || root.Kind != KindGroup || root.Err != nil || !strings.Contains(string(root.Attributes), "large") {
		t.Fatalf("root: %v, %v", root != nil && root.Err == nil, err)
	}
	groups, err := h.Children(ctx, "")
	if err != nil || len(groups) != n/100 {
		t.Fatalf("root: %d children, %v", len(groups), err)
	}
	kids, err := h.Children(ctx, "g0123")
	if err != nil || len(kids) != 100 || kids[7].Array == nil || kids[7].Array.DataType().NumPy != "<f4" {
		t.Fatalf("g0123: %d children, %v", len(kids), err)
	}
	// Over the limit: the root, without its consolidated metadata, and
	// a listing of the store (which holds no other document here).
	var lines []string
	if h, err = Open(ctx, st, Options{ConsolidatedLimit: 8 << 20, Logf: func(f string, a ...any) { lines = append(lines, fmt.Sprintf(f, a...)) }}); err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 || h.consolidated != nil {
		t.Errorf("logged %q, consolidated %v; want one line, listed", lines, h.consolidated != nil)
	}
	if root, err = h.Node(ctx, ""); err != nil || root.Kind != KindGroup || root.Err != nil {
		t.Fatalf("root over the limit: %v, %v", root != nil && root.Err == nil, err)
	}
}

// A remote consolidated hierarchy of 100,000 arrays opens with one read
// of its .zmetadata (besides the zarr.json it probes for at the same
// time) and lists every group without a request more.
func TestRemoteLargeConsolidated(t *testing.T) {
	ctx := context.Background()
	srv := &remotetest.Server{Data: map[string][]byte{
		"root.zarr/.zmetadata": largeZmetadata(),
		"root.zarr/.zgroup":    []byte(treegen.GroupDoc),
	}}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Release()
		ts.Close()
	})
	st, err := httpstore.New(ts.URL+"/root.zarr", httpstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h, err := Open(ctx, st, Options{Remote: true, Concurrency: 16})
	if err != nil {
		t.Fatal(err)
	}
	paths := srv.Paths()
	slices.Sort(paths)
	if len(paths) != 2 || !strings.HasPrefix(paths[0], "GET /root.zarr/.zmetadata") || !strings.HasPrefix(paths[1], "GET /root.zarr/zarr.json") {
		t.Errorf("open: %q; want one GET of .zmetadata (and zarr.json, probed with it)", paths)
	}
	srv.Counts()
	if n := walkLarge(t, h); n != largeTree.Arrays {
		t.Errorf("%d arrays, want %d", n, largeTree.Arrays)
	}
	time.Sleep(100 * time.Millisecond) // anything listed ahead in the background
	if paths := srv.Paths(); len(paths) != 0 {
		t.Errorf("listing made %d requests (%q …); want none", len(paths), paths[:min(len(paths), 5)])
	}
	var _ store.Store = st
}

// BenchmarkOpenLargeConsolidated measures opening the 100,000-array
// hierarchy of issue 42 from a memory store (the .zmetadata read,
// compacted and walked), and listing the root: what a mount waits for
// before it answers.
func BenchmarkOpenLargeConsolidated(b *testing.B) {
	ctx := context.Background()
	st := memory.New()
	st.Set(ctx, ".zmetadata", largeZmetadata())
	st.Set(ctx, ".zgroup", []byte(treegen.GroupDoc))
	b.ReportAllocs()
	for b.Loop() {
		h, err := Open(ctx, st, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := h.Children(ctx, ""); err != nil {
			b.Fatal(err)
		}
	}
}

// Consolidated metadata of many tiny members, within the size limit but
// whose index would be many times its size, is not used either.
func TestConsolidatedTooManyMembers(t *testing.T) {
	ctx := context.Background()
	var b bytes.Buffer
	b.WriteString(`{"zarr_consolidated_format": 1, "metadata": {".zgroup": {"zarr_format": 2}`)
	for i := range 5000 {
		fmt.Fprintf(&b, `, "%d/.zattrs": {}`, i)
	}
	b.WriteString(`}}`)
	st := memory.New()
	st.Set(ctx, ".zmetadata", b.Bytes())
	st.Set(ctx, ".zgroup", []byte(treegen.GroupDoc))
	var lines []string
	h, err := Open(ctx, st, Options{ConsolidatedLimit: 100000, Logf: func(f string, a ...any) { lines = append(lines, fmt.Sprintf(f, a...)) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "too many members") || h.consolidated != nil {
		t.Errorf("logged %q, consolidated %v; want one line, listed", lines, h.consolidated != nil)
	}
	if h, err = Open(ctx, st, Options{ConsolidatedLimit: 1 << 20}); err != nil || h.consolidated == nil {
		t.Errorf("within the limit: %v, consolidated %v", err, h != nil && h.consolidated != nil)
	}
}
