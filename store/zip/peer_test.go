package zip

// Interoperability with other implementations: archives Python's
// zipfile writes and reads, and the zarrita.js corpus.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/dir"
	"github.com/zarrfs/zarrfs/store/storetest"
)

// TestConformancePythonWritten runs the suite on archives that Python's
// zipfile wrote.
func TestConformancePythonWritten(t *testing.T) {
	peertest.NeedPython(t)
	for _, comp := range []string{"stored", "deflated"} {
		t.Run(comp, func(t *testing.T) {
			// Python starts slowly: write each distinct data set once.
			archives := map[string]string{}
			dir := t.TempDir()
			storetest.RunReadOnly(t, func(t *testing.T, data map[string][]byte) store.Store {
				members := [][2]string{}
				for _, k := range sortedKeys(data) {
					members = append(members, [2]string{k, base64.StdEncoding.EncodeToString(data[k])})
				}
				id, err := json.Marshal(members)
				if err != nil {
					t.Fatal(err)
				}
				path, ok := archives[string(id)]
				if !ok {
					path = filepath.Join(dir, fmt.Sprintf("py%d.zip", len(archives)))
					writePythonZip(t, members, path, comp)
					archives[string(id)] = path
				}
				s, err := OpenFile(path, Options{})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return s
			})
		})
	}
}

// writePythonZip has Python's zipfile write members (name and base64
// pairs) into the archive path with the compression comp.
func writePythonZip(t *testing.T, members any, path, comp string) {
	t.Helper()
	in, err := json.Marshal(members)
	if err != nil {
		t.Fatal(err)
	}
	list := filepath.Join(t.TempDir(), "members.json")
	if err := os.WriteFile(list, in, 0o644); err != nil {
		t.Fatal(err)
	}
	peertest.Oracle(t, "store/zip/write_zip.py", list, path, comp)
}

// TestReadPythonZipStore checks that every key of an archive written by
// zarr-python's ZipStore reads byte-identical to python's own view, and
// that members with unsafe names cannot be reached.
func TestReadPythonZipStore(t *testing.T) {
	ctx := context.Background()
	unsafe := []string{"../../escape", "/etc/passwd", `a\b`, "./dot", "folder//double"}
	for _, comp := range []string{"stored", "deflated"} {
		t.Run(comp, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "py.zip")
			out := peertest.Oracle(t, "store/zip/zip_store_view.py", path, comp)
			var view map[string]string
			if err := json.Unmarshal(out, &view); err != nil {
				t.Fatalf("python output: %v\n%s", err, out)
			}
			s, err := OpenFile(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if s.Prefix() != "" {
				t.Errorf("Prefix() = %q; want the archive root", s.Prefix())
			}
			var want []string
			for k, b64 := range view {
				if slices.Contains(unsafe, k) {
					continue
				}
				want = append(want, k)
				v, err := base64.StdEncoding.DecodeString(b64)
				if err != nil {
					t.Fatal(err)
				}
				got, err := s.Get(ctx, k)
				if err != nil || !bytes.Equal(got, v) {
					t.Errorf("Get(%q) = %d bytes, %v; python sees %d bytes", k, len(got), err, len(v))
				}
				if len(v) > 10 {
					part, err := s.GetRange(ctx, k, store.Range(3, 7))
					if err != nil || !bytes.Equal(part, v[3:10]) {
						t.Errorf("GetRange(%q, 3, 7) = %q, %v; want %q", k, part, err, v[3:10])
					}
					tail, err := s.GetRange(ctx, k, store.SuffixRange(5))
					if err != nil || !bytes.Equal(tail, v[len(v)-5:]) {
						t.Errorf("GetRange(%q, last 5) = %q, %v; want %q", k, tail, err, v[len(v)-5:])
					}
				}
			}
			for _, k := range []string{"dup", ".zgroup", "temp/.zarray", "temp/0.0", "sub group/ü/.zarray", "sub group/ü/3"} {
				if _, ok := view[k]; !ok {
					t.Errorf("python's view lacks %q; the test hierarchy is not what it expects", k)
				}
			}
			slices.Sort(want)
			all, err := s.ListPrefix(ctx, "")
			if err != nil || !slices.Equal(all, want) {
				t.Errorf("ListPrefix = %q, %v;\nwant python's keys without unsafe names %q", all, err, want)
			}
			for _, k := range []string{"escape", "etc/passwd", "b", "dot", "folder/double"} {
				if _, err := s.Get(ctx, k); !errors.Is(err, store.ErrNotExist) {
					t.Errorf("Get(%q): %v; an unsafe member must not be reachable", k, err)
				}
			}
			keys, prefixes, err := s.ListDir(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			if w := []string{".zattrs", ".zgroup", "dup"}; !slices.Equal(keys, w) {
				t.Errorf("ListDir keys = %q; want %q", keys, w)
			}
			if w := []string{"sub group", "temp"}; !slices.Equal(prefixes, w) {
				t.Errorf("ListDir prefixes = %q; want %q", prefixes, w)
			}
		})
	}
}

// TestPythonReadsWriter writes a v2 hierarchy with Writer and has
// zarr-python's ZipStore read it back.
func TestPythonReadsWriter(t *testing.T) {
	data := map[string][]byte{
		".zgroup":     []byte(`{"zarr_format": 2}`),
		".zattrs":     []byte(`{"made by": "zarrfs"}`),
		"arr/.zarray": []byte(`{"zarr_format": 2, "shape": [10, 10], "chunks": [5, 5], "dtype": "<i4", "compressor": null, "fill_value": 0, "order": "C", "filters": null}`),
		"raw/bin": bytes.Repeat(func() []byte {
			b := make([]byte, 256)
			for i := range b {
				b[i] = byte(i)
			}
			return b
		}(), 3),
		"unicode/ü": []byte("umlaut"),
	}
	for ci := range 2 {
		for cj := range 2 {
			chunk := make([]byte, 0, 100)
			for i := range 5 {
				for j := range 5 {
					v := uint32((ci*5+i)*10 + cj*5 + j)
					chunk = append(chunk, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
				}
			}
			data["arr/"+string(rune('0'+ci))+"."+string(rune('0'+cj))] = chunk
		}
	}
	for _, opts := range []CreateOptions{{}, {Deflate: true}} {
		b := build(t, data, "", opts)
		path := filepath.Join(t.TempDir(), "go.zip")
		if err := os.WriteFile(path, b, 0o666); err != nil {
			t.Fatal(err)
		}
		if out := peertest.Oracle(t, "store/zip/read_array.py", path); string(bytes.TrimSpace(out)) != "ok" {
			t.Errorf("deflate=%v: python printed %q", opts.Deflate, out)
		}
		// And zarrfs reads its own archive back.
		s := openBytes(t, b, Options{})
		for k, v := range data {
			if got, err := s.Get(context.Background(), k); err != nil || !bytes.Equal(got, v) {
				t.Errorf("deflate=%v: Get(%q) = %d bytes, %v", opts.Deflate, k, len(got), err)
			}
		}
	}
}

// TestCorpus opens the zarrita.js corpus archives and compares every key
// with the unzipped data.zarr folder beside them.
func TestCorpus(t *testing.T) {
	corpus := peertest.Corpus(t)
	ctx := context.Background()
	for _, tc := range []struct{ zip, prefix string }{
		{"zarrita.js/v2/data.zipped_from_parent.zarr.zip", "data.zarr"},
		{"zarrita.js/v2/data.zipped_from_within.zarr.zip", ""},
		{"zarrita.js/v3/data.zipped_from_parent.zarr.zip", "data.zarr"},
		{"zarrita.js/v3/data.zipped_from_within.zarr.zip", ""},
		{"zarrita.js/v3/data.uncompressed.zarr.zip", ""},
	} {
		t.Run(tc.zip, func(t *testing.T) {
			s, err := OpenFile(filepath.Join(corpus, tc.zip), Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if s.Prefix() != tc.prefix {
				t.Errorf("detected prefix %q; want %q", s.Prefix(), tc.prefix)
			}
			ref, err := dir.Open(filepath.Join(corpus, filepath.Dir(tc.zip), "data.zarr"), dir.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer ref.Close()
			want, err := ref.ListPrefix(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.ListPrefix(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("keys differ from the folder:\nzip  %q\nfolder %q", got, want)
			}
			for _, k := range want {
				w, err := ref.Get(ctx, k)
				if err != nil {
					t.Fatal(err)
				}
				g, err := s.Get(ctx, k)
				if err != nil || !bytes.Equal(g, w) {
					t.Errorf("Get(%q) = %d bytes, %v; the folder has %d bytes", k, len(g), err, len(w))
				}
			}
		})
	}
}
