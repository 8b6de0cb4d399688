package view

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/store/memory"
	"github.com/zarrfs/zarrfs/zarr"
	"github.com/zarrfs/zarrfs/zarr/example"
)

// exampleNode opens the example hierarchy in memory and returns one node
// and its files.
func exampleNode(t testing.TB, path string) (*zarr.Node, []File) {
	t.Helper()
	ctx := context.Background()
	h, err := example.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n, err := h.Node(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	var children []*zarr.Node
	if n.Kind == zarr.KindGroup {
		if children, err = h.Children(ctx, path); err != nil {
			t.Fatal(err)
		}
	}
	return n, New(h, Config{}).Files(n, children)
}

func fileNames(files []File) string {
	var s []string
	for _, f := range files {
		s = append(s, f.Name())
	}
	return strings.Join(s, " ")
}

func TestFiles(t *testing.T) {
	for _, c := range []struct{ path, want string }{
		{"", "zarr.json dataset.nc info.txt"},
		{"image", "zarr.json data data.npy data.hdr data.npy.hdr data.nhdr info.txt"},
		{"stations", "zarr.json data.txt info.txt"},
	} {
		if _, files := exampleNode(t, c.path); fileNames(files) != c.want {
			t.Errorf("%q: files %q, want %q", c.path, fileNames(files), c.want)
		}
	}
}

// Of the example's files only data.txt decodes the array to tell its
// size.
func TestSizeDecodes(t *testing.T) {
	for _, path := range []string{"", "image", "stations"} {
		_, files := exampleNode(t, path)
		for _, f := range files {
			if got, want := SizeDecodes(f), f.Name() == "data.txt"; got != want {
				t.Errorf("%s/%s: SizeDecodes %v, want %v", path, f.Name(), got, want)
			}
		}
	}
}

// TestCopy streams each file of an array and compares with ReadAt of the
// whole, and with the array's own ReadAt for data.
func TestCopy(t *testing.T) {
	ctx := context.Background()
	n, files := exampleNode(t, "image")
	content := make([]byte, n.Array.Size())
	if k, err := n.Array.ReadAt(ctx, content, 0); k != len(content) {
		t.Fatalf("ReadAt: %d bytes, %v", k, err)
	}
	for _, f := range files {
		var b bytes.Buffer
		if err := Copy(ctx, &b, f); err != nil {
			t.Fatalf("%s: %v", f.Name(), err)
		}
		size, _ := f.Size(ctx)
		if int64(b.Len()) != size {
			t.Errorf("%s: copied %d bytes, size %d", f.Name(), b.Len(), size)
		}
		whole := make([]byte, size+10)
		k, err := f.ReadAt(ctx, whole, 0)
		if int64(k) != size || !errors.Is(err, io.EOF) || !bytes.Equal(whole[:k], b.Bytes()) {
			t.Errorf("%s: ReadAt past the end = %d, %v; want %d, EOF and the copied bytes", f.Name(), k, err, size)
		}
		if k, err := f.ReadAt(ctx, make([]byte, 1), size); k != 0 || !errors.Is(err, io.EOF) {
			t.Errorf("%s: ReadAt at the end = %d, %v; want 0, EOF", f.Name(), k, err)
		}
	}
	if !bytes.HasSuffix(mustCopy(t, Find(files, "data.npy")), content) || !bytes.Equal(mustCopy(t, Find(files, "data")), content) {
		t.Error("data or data.npy differ from the array's contents")
	}
	if Find(files, "nothing") != nil {
		t.Error("Find of a missing name is not nil")
	}
}

func mustCopy(t *testing.T, f File) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Copy(context.Background(), &b, f); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestCheckUnsupported: the data of an array whose codec is unknown is
// listed with its size and fails Check, ReadAt and Copy with
// ErrUnsupported.
func TestCheckUnsupported(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	doc := `{"zarr_format":3,"node_type":"array","shape":[4],"data_type":"uint8",` +
		`"chunk_grid":{"name":"regular","configuration":{"chunk_shape":[4]}},` +
		`"chunk_key_encoding":{"name":"default"},"fill_value":7,"codecs":[{"name":"bytes"},{"name":"no-such-codec"}]}`
	if err := st.Set(ctx, "zarr.json", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	h, err := zarr.Open(ctx, st, zarr.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n, err := h.Node(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	f := Find(New(h, Config{}).Files(n, nil), "data")
	if f == nil {
		t.Fatal("no data file")
	}
	if err := f.Check(ctx); !errors.Is(err, zarr.ErrUnsupported) {
		t.Errorf("Check: %v, want ErrUnsupported", err)
	}
	if _, err := f.ReadAt(ctx, make([]byte, 4), 0); !errors.Is(err, zarr.ErrUnsupported) {
		t.Errorf("ReadAt: %v, want ErrUnsupported", err)
	}
	if err := Copy(ctx, io.Discard, f); !errors.Is(err, zarr.ErrUnsupported) {
		t.Errorf("Copy: %v, want ErrUnsupported", err)
	}
}

// TestRootInfo: Config.RootInfo's lines end the root's info.txt, and no
// other node's.
func TestRootInfo(t *testing.T) {
	ctx := context.Background()
	h, err := example.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hits := 5
	v := New(h, Config{RootInfo: func() string { return fmt.Sprintf("disk cache: %d hits", hits) }})
	read := func(f File) string {
		var b bytes.Buffer
		if err := Copy(ctx, &b, f); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	for _, path := range []string{"", "image"} {
		n, err := h.Node(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		var children []*zarr.Node
		if n.Kind == zarr.KindGroup {
			children, _ = h.Children(ctx, path)
		}
		f := Find(v.Files(n, children), "info.txt")
		got := read(f)
		_, volatile := f.(Volatile)
		has := strings.Contains(got, "\ndisk cache: 5 hits ")
		if has != (path == "") || volatile != (path == "") {
			t.Errorf("%q info.txt (volatile %v):\n%s\nwant the root's alone to end with RootInfo's line", path, volatile, got)
		}
		if path != "" {
			continue
		}
		size, _ := f.Size(ctx)
		hits = 123456
		again := read(f)
		if size2, _ := f.Size(ctx); size2 != size || int64(len(again)) != size || !strings.Contains(again, "\ndisk cache: 123456 hits ") {
			t.Errorf("the root's info.txt after the line changed: size %d then %d:\n%s", size, size2, again)
		}
	}
}
