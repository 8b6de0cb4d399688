package serve

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/view"
	"github.com/zarrfs/zarrfs/zarr"
	"github.com/zarrfs/zarrfs/zarr/example"
)

// exampleTree returns the tree of the example hierarchy, in memory.
func exampleTree(t testing.TB) (*Tree, *zarr.Hierarchy) {
	t.Helper()
	h, err := example.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewTree(h, Config{Views: view.Config{Previews: true}, Logger: log.New(io.Discard, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	return tr, h
}

// entry is one file or directory as a front end shows it.
type entry struct {
	path string
	dir  bool
	size int64
}

// frontEnd is what the table of tree tests asks of each front end: the
// entries of a directory and the bytes of a file.
type frontEnd interface {
	list(t *testing.T, path string) []entry
	read(t *testing.T, path string) []byte
}

// viewEnd reads the tree from package view directly, as the mount does:
// the reference the servers must agree with.
type viewEnd struct{ h *zarr.Hierarchy }

func (v viewEnd) list(t *testing.T, p string) []entry {
	ctx := context.Background()
	s := view.NewSnapshot(v.h, 0, view.Config{Previews: true})
	n, err := v.h.Node(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.List(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	var out []entry
	for _, e := range l.Entries {
		q := strings.TrimPrefix(p+"/"+e.Name, "/")
		if e.File == nil {
			out = append(out, entry{path: q, dir: true})
			continue
		}
		size, err := e.File.Size(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, entry{path: q, size: size})
	}
	return out
}

func (v viewEnd) read(t *testing.T, p string) []byte {
	ctx := context.Background()
	s := view.NewSnapshot(v.h, 0, view.Config{Previews: true})
	dir, name := "", p
	if i := strings.LastIndex(p, "/"); i >= 0 {
		dir, name = p[:i], p[i+1:]
	}
	n, err := v.h.Node(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.List(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	i := l.Find(name)
	if i < 0 || l.Entries[i].File == nil {
		t.Fatalf("view: no file %s", p)
	}
	var b bytes.Buffer
	if err := view.Copy(ctx, &b, l.Entries[i].File); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// walk returns every entry of the tree under dir, and the bytes of every
// file, as fe shows them.
func walk(t *testing.T, fe frontEnd, dir string) (map[string]entry, map[string][]byte) {
	entries, files := map[string]entry{}, map[string][]byte{}
	var rec func(string)
	rec = func(d string) {
		for _, e := range fe.list(t, d) {
			entries[e.path] = e
			if e.dir {
				rec(e.path)
			} else {
				files[e.path] = fe.read(t, e.path)
			}
		}
	}
	rec(dir)
	return entries, files
}

// checkSameTree checks that fe shows the tree package view makes: the same
// names, kinds and sizes, and the same bytes.
func checkSameTree(t *testing.T, fe frontEnd, h *zarr.Hierarchy) {
	wantE, wantF := walk(t, viewEnd{h}, "")
	gotE, gotF := walk(t, fe, "")
	if len(wantF) < 50 {
		t.Fatalf("the example shows only %d files", len(wantF))
	}
	for p, w := range wantE {
		g, ok := gotE[p]
		if !ok {
			t.Errorf("%s: missing", p)
			continue
		}
		if g != w {
			t.Errorf("%s: %+v, want %+v", p, g, w)
		}
	}
	for p := range gotE {
		if _, ok := wantE[p]; !ok {
			t.Errorf("%s: shown, but not by the mount", p)
		}
	}
	for p, w := range wantF {
		if g := gotF[p]; !bytes.Equal(g, w) {
			t.Errorf("%s: %d bytes differ from the mount's %d", p, len(g), len(w))
		}
	}
}

// Paths that leave the tree or break its limits are refused before any
// lookup; the rest resolve to the tree's nodes.
func TestResolve(t *testing.T) {
	tr, _ := exampleTree(t)
	ctx := context.Background()
	for _, c := range []struct {
		path string
		want error
		dir  bool
	}{
		{"", nil, true},
		{"/", nil, true},
		{"//temperature//", nil, true},
		{"temperature/data", nil, false},
		{"temperature/data/x", zarr.ErrNotExist, false},
		{"temperature/..", ErrBadPath, false},
		{"../etc/passwd", ErrBadPath, false},
		{"./temperature", ErrBadPath, false},
		{"temperature\\data", ErrBadPath, false},
		{"temperature\x00", ErrBadPath, false},
		{strings.Repeat("a", MaxNameLen+1), ErrBadPath, false},
		{strings.Repeat("a/", MaxPathLen), ErrBadPath, false},
		{"nope", zarr.ErrNotExist, false},
		{"temperature/c", zarr.ErrNotExist, false}, // chunk keys never appear
	} {
		n, err := tr.Resolve(ctx, c.path)
		if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("Resolve(%q): %v, want %v", c.path, err, c.want)
			continue
		}
		if err == nil && n.IsDir() != c.dir {
			t.Errorf("Resolve(%q): dir %v, want %v", c.path, n.IsDir(), c.dir)
		}
	}
}
