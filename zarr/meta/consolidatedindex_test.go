package meta

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"unsafe"
)

// TestConsolidatedIndexKept: the index of a "metadata" object over the 16
// MiB limit keeps its keys and 16 bytes a member, holding no pointer per
// member (its members are not scanned by the collector), and is made
// with a number of allocations that does not grow with its members. Once
// dropped it keeps no document, and places each member's document in the
// stored document.
func TestConsolidatedIndexKept(t *testing.T) {
	const n = 80000
	obj := largeConsolidated(n)
	var c *ConsolidatedIndex
	var err error
	allocs := testing.AllocsPerRun(2, func() { c, err = NewConsolidatedIndex("big", obj, false, 0) })
	if err != nil {
		t.Fatal(err)
	}
	if allocs > 100 {
		t.Errorf("%.0f allocations for %d members: some per member?", allocs, n)
	}
	if size := unsafe.Sizeof(consMember{}); size != 16 {
		t.Errorf("a member costs %d bytes, want 16", size)
	}
	keys := 0
	for i := range n {
		keys += len(fmt.Sprintf("g%04d/a%03d/.zarray", i/100, i%100))
	}
	if kept := len(c.keys) + cap(c.members)*16; c.Len() != n || kept > keys+16*n {
		t.Errorf("%d members keep %d bytes, want at most %d (their keys and 16 each)", c.Len(), kept, keys+16*n)
	}
	key := "g0400/a007/.zarray"
	doc, ok := c.Doc(key)
	name := []byte(`"` + key + `": `)
	start := bytes.Index(obj, name) + len(name)
	if !ok || &doc[0] != &obj[start] || !bytes.Contains(doc, []byte(`"fill_value": NaN`)) {
		t.Fatalf("Doc(%q): %q, %v; want the document in place", key, doc, ok)
	}
	const at = 1000 // where the object stood in the stored document
	c.Drop(at)
	if d, ok := c.Doc(key); ok || d != nil || c.data != nil {
		t.Errorf("Doc after Drop: %q, %v; want none, the object not kept", d, ok)
	}
	if off, size, ok := c.Lookup(key); !ok || off != at+int64(start) || size != len(doc) {
		t.Errorf("Lookup(%q) after Drop: %d, %d, %v; want %d, %d", key, off, size, ok, at+start, len(doc))
	}
	if _, _, ok := c.Lookup("g0400/a007/.zattrs"); ok {
		t.Error("Lookup of a missing key found it")
	}
	if got := c.ChildNames("g0799"); len(got) != 100 || got[0] != "a000" || got[99] != "a099" {
		t.Errorf("ChildNames(g0799) after Drop: %d names %q", len(got), got)
	}
}

// ChildNames finds the nodes directly below a group: in v2 a name with
// its own .zarray, .zgroup (or zarr.json), in v3 a key without a slash
// below it, whatever lies deeper and wherever keys sorting between a
// name's ("a.b/…" sorts between "a" and "a/…") put them.
func TestConsolidatedChildNames(t *testing.T) {
	for _, c := range []struct {
		name string
		v3   bool
		keys []string
		p    string
		want []string
	}{
		{"v2 root", false, []string{".zattrs", "a/.zarray", "a/x/.zattrs", "a.b/.zgroup", "a.b/c/.zarray", "ab/.zattrs", "g/h/.zarray", "z/zarr.json"}, "", []string{"a", "a.b", "z"}},
		{"v2 group", false, []string{"a.b/.zgroup", "a.b/c/.zarray", "a.b/c/d/.zarray", "a.b/e/.zgroup", "a.b/e/f/.zarray"}, "a.b", []string{"c", "e"}},
		{"v2 deeper only", false, []string{"g/h/.zarray", "g/h/i/.zarray"}, "g", []string{"h"}},
		{"v2 none", false, []string{"a/.zarray"}, "a", nil},
		{"v3 root", true, []string{"a", "a.b", "a.b/c", "a/x", "g/h", "h/i/j"}, "", []string{"a", "a.b"}},
		{"v3 group", true, []string{"a", "a/x", "a/x/y", "a/y", "a0"}, "a", []string{"x", "y"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			b.WriteString("{")
			for i, k := range c.keys {
				if i > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "%q: {}", k)
			}
			b.WriteString("}")
			ix, err := NewConsolidatedIndex("test", b.Bytes(), c.v3, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := ix.ChildNames(c.p); !slices.Equal(got, c.want) {
				t.Errorf("ChildNames(%q) = %q, want %q", c.p, got, c.want)
			}
		})
	}
}
