//go:build linux

package fs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/zarrfs/zarrfs/internal/logonce"
	"github.com/zarrfs/zarrfs/view"
	"github.com/zarrfs/zarrfs/zarr"
	"github.com/zarrfs/zarrfs/zarr/example"
)

// exampleNode opens the example hierarchy in memory and returns one node.
func exampleNode(t testing.TB, path string) (*mountFS, *zarr.Node) {
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
	return &mountFS{snaps: view.NewTree(h, view.Config{}, 0, nil, nil), log: errorLog{once: logonce.Log{Logger: log.New(io.Discard, "", 0)}}}, n
}

// fileOf returns the node of the file name of n's directory.
func fileOf(t testing.TB, m *mountFS, n *zarr.Node, name string) *fileNode {
	t.Helper()
	f := view.Find(m.snaps.Current().Views.Files(n, nil), name)
	if f == nil {
		t.Fatalf("%s has no file %q", n.Path, name)
	}
	return &fileNode{m: m, f: f}
}

// size returns the size the file reports.
func size(n *fileNode) int64 {
	var out fuse.Attr
	n.attr(context.Background(), &out)
	return int64(out.Size)
}

// readResult returns the bytes of a FUSE read result.
func readResult(t *testing.T, r fuse.ReadResult, errno syscall.Errno, size int) []byte {
	t.Helper()
	if errno != 0 {
		t.Fatalf("read: %v", errno)
	}
	b, status := r.Bytes(make([]byte, size))
	if !status.Ok() {
		t.Fatalf("read result: %v", status)
	}
	return b
}

// TestDataFileRead reads data and data.npy at offsets around the end of the
// header, inside and past the end, and compares with the header followed by
// Array.ReadAt's bytes.
func TestDataFileRead(t *testing.T) {
	ctx := context.Background()
	m, n := exampleNode(t, "image")
	content := make([]byte, n.Array.Size())
	if k, err := n.Array.ReadAt(ctx, content, 0); k != len(content) {
		t.Fatalf("ReadAt: %d bytes, %v", k, err)
	}
	for _, npy := range []bool{false, true} {
		name, want, h := "data", content, int64(0)
		if npy {
			hdr := view.NpyHeader("<i2", []int64{256, 256})
			name, want, h = "data.npy", append(hdr, content...), int64(len(hdr))
		}
		f := fileOf(t, m, n, name)
		if size(f) != int64(len(want)) {
			t.Errorf("npy=%v: size %d, want %d", npy, size(f), len(want))
		}
		for _, c := range []struct{ off, n int64 }{
			{0, 10}, {0, 1 << 20}, {max(h-1, 0), 2}, {h, 128}, {h + 1, 3}, {1000, 4096},
			{int64(len(want)) - 5, 100}, {int64(len(want)), 10}, {int64(len(want)) + 100, 10},
		} {
			dest := make([]byte, c.n)
			r, errno := f.Read(ctx, nil, dest, c.off)
			got := readResult(t, r, errno, int(c.n))
			lo, hi := min(c.off, int64(len(want))), min(c.off+c.n, int64(len(want)))
			if !bytes.Equal(got, want[lo:hi]) {
				t.Errorf("npy=%v: read [%d +%d): %d bytes differ from the expected %d", npy, c.off, c.n, len(got), hi-lo)
			}
			// What go-fuse writes: the slices, then Done.
			if sr, ok := r.(interface {
				Slices() ([][]byte, fuse.Status)
			}); ok {
				vec, st := sr.Slices()
				if joined := bytes.Join(vec, nil); !st.Ok() || !bytes.Equal(joined, want[lo:hi]) || r.Size() != len(joined) {
					t.Errorf("npy=%v: read [%d +%d): slices of %d bytes (size %d, %v) differ", npy, c.off, c.n, len(joined), r.Size(), st)
				}
			}
			r.Done()
			r.Done() // a second Done is harmless
		}
		if _, errno := f.Read(ctx, nil, make([]byte, 4), -1); errno != syscall.EINVAL {
			t.Errorf("npy=%v: read at -1: %v, want EINVAL", npy, errno)
		}
	}
}

func TestTextFileRead(t *testing.T) {
	ctx := context.Background()
	m, n := exampleNode(t, "stations")
	if n.Array == nil || !n.Array.Variable() {
		t.Fatal("the example's stations array is not of variable-length strings any more")
	}
	f := fileOf(t, m, n, "data.txt")
	want := "Reykjavík\nZürich\n東京\nSão Paulo\nMcMurdo\\nStation\nC:\\\\weather\n"
	if size(f) != int64(len(want)) {
		t.Errorf("data.txt size %d, want %d", size(f), len(want))
	}
	r, errno := f.Read(ctx, nil, make([]byte, 7), 11)
	if got := readResult(t, r, errno, 7); string(got) != want[11:18] {
		t.Errorf("read [11 +7) = %q, want %q", got, want[11:18])
	}
	var b bytes.Buffer
	if err := view.WriteText(ctx, &b, n.Array); err != nil || b.String() != want {
		t.Errorf("WriteText = %q, %v; want %q", b.String(), err, want)
	}
}

// brokenDir writes a v3 hierarchy with a good array, one whose codec zarrfs
// does not know, and one whose metadata is not JSON.
func brokenDir(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	doc := func(codec string) string {
		return fmt.Sprintf(`{"zarr_format":3,"node_type":"array","shape":[4],"data_type":"uint8",`+
			`"chunk_grid":{"name":"regular","configuration":{"chunk_shape":[4]}},`+
			`"chunk_key_encoding":{"name":"default"},"fill_value":7,"codecs":[{"name":"bytes"}%s]}`, codec)
	}
	files := map[string]string{
		"zarr.json":         `{"zarr_format":3,"node_type":"group"}`,
		"good/zarr.json":    doc(""),
		"unknown/zarr.json": doc(`,{"name":"no-such-codec"}`),
		"garbled/zarr.json": `{"zarr_format":3,"node_type":"array",`,
		// A group whose own metadata is broken, with a child.
		"badgroup/zarr.json":       `{"zarr_format":3,"node_type":"group","attributes":[1]}`,
		"badgroup/child/zarr.json": doc(""),
	}
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestMountBrokenNodes(t *testing.T) {
	mnt, h := mountDir(t, brokenDir(t))
	if got := strings.Join(names(t, mnt), " "); got != "badgroup dataset.nc garbled good info.txt unknown zarr.json" {
		t.Errorf("root lists %q: a broken node must not hide its siblings", got)
	}
	if got := strings.Join(names(t, filepath.Join(mnt, "unknown")), " "); !strings.Contains(got, "zarr.json") || !strings.Contains(got, "data") {
		t.Errorf("the array with an unknown codec lists %q, want its document and data", got)
	}
	n, err := h.Node(context.Background(), "unknown")
	if err != nil {
		t.Fatal(err)
	}
	var raw json.RawMessage
	for _, d := range n.Documents {
		raw = d.Data
	}
	if fi := stat(t, filepath.Join(mnt, "unknown", "zarr.json")); fi.Size() != int64(len(raw)) {
		t.Errorf("zarr.json of the broken array: size %d, want %d", fi.Size(), len(raw))
	}
	// A document that is not JSON makes a broken node, which still lists
	// its document and an info.txt that says what is wrong.
	if got := strings.Join(names(t, filepath.Join(mnt, "garbled")), " "); got != "info.txt zarr.json" {
		t.Errorf("the garbled node lists %q", got)
	}
	for _, name := range []string{"zarr.json", "info.txt"} {
		if fi := stat(t, filepath.Join(mnt, "garbled", name)); fi.Size() == 0 {
			t.Errorf("garbled/%s is empty", name)
		}
	}
	if b, err := os.ReadFile(filepath.Join(mnt, "garbled", "info.txt")); err != nil || !strings.Contains(string(b), "error:") {
		t.Errorf("garbled/info.txt: %v, %q: want the error", err, b)
	}
	// A group whose attributes are broken hides none of its children.
	if got := strings.Join(names(t, filepath.Join(mnt, "badgroup")), " "); got != "child dataset.nc info.txt zarr.json" {
		t.Errorf("the broken group lists %q, want its child too", got)
	}
	if b, err := os.ReadFile(filepath.Join(mnt, "badgroup", "info.txt")); err != nil || !strings.Contains(string(b), "attributes is not an object") {
		t.Errorf("badgroup/info.txt: %v, %q: want the error", err, b)
	}
	if f, err := os.Open(filepath.Join(mnt, "badgroup", "child", "data")); err != nil {
		t.Errorf("open badgroup/child/data: %v", err)
	} else {
		f.Close()
	}
	// Opening data (no read: reads go through a subprocess) reports why.
	f, err := os.Open(filepath.Join(mnt, "unknown", "data"))
	if err == nil {
		f.Close()
	}
	if !errors.Is(err, syscall.EOPNOTSUPP) {
		t.Errorf("open unknown/data: %v, want EOPNOTSUPP", err)
	}
	f, err = os.Open(filepath.Join(mnt, "good", "data"))
	if err != nil {
		t.Errorf("open good/data: %v", err)
	} else {
		f.Close()
	}
}

// BenchmarkDataFileRead measures the FUSE read path without the kernel:
// 1 MiB reads of the temperature cube's data.npy (chunks cached after the
// first pass).
func BenchmarkDataFileRead(b *testing.B) {
	m, n := exampleNode(b, "temperature")
	f := fileOf(b, m, n, "data.npy")
	dest := make([]byte, maxRead)
	ctx := context.Background()
	b.SetBytes(size(f))
	for b.Loop() {
		for off := int64(0); off < size(f); off += maxRead {
			if _, errno := f.Read(ctx, nil, dest, off); errno != 0 {
				b.Fatal(errno)
			}
		}
	}
}
