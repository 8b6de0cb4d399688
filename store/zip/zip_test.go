package zip

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	archivezip "archive/zip"

	"github.com/zarrfs/zarrfs/internal/peertest"
	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/dir"
	"github.com/zarrfs/zarrfs/store/storetest"
)

// build writes data into a zip archive with Writer (members sorted by key,
// each under prefix) and returns the archive's bytes.
func build(t testing.TB, data map[string][]byte, prefix string, opts CreateOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := Create(&buf, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, k := range sortedKeys(data) {
		if err := w.Set(ctx, store.Join(prefix, k), data[k]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func openBytes(t testing.TB, b []byte, opts Options) *Store {
	t.Helper()
	s, err := Open(bytes.NewReader(b), int64(len(b)), opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	for _, tc := range []struct {
		name   string
		create CreateOptions
		prefix string
	}{
		{"stored", CreateOptions{}, ""},
		{"deflate", CreateOptions{Deflate: true}, ""},
		{"deflate best", CreateOptions{Deflate: true, Level: 9}, ""},
		{"prefix", CreateOptions{}, "data.zarr"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.RunReadOnly(t, func(t *testing.T, data map[string][]byte) store.Store {
				b := build(t, data, tc.prefix, tc.create)
				return openBytes(t, b, Options{Name: "test.zip", Prefix: tc.prefix})
			})
		})
	}
}

// pythonZip has Python's zipfile write the members given as JSON
// {name: base64} on standard input into the archive argv[1] with the
// compression argv[2] (stored or deflated), in the order given.
const pythonZip = `
import base64, json, sys, zipfile
members = json.load(sys.stdin)
comp = {"stored": zipfile.ZIP_STORED, "deflated": zipfile.ZIP_DEFLATED}[sys.argv[2]]
with zipfile.ZipFile(sys.argv[1], "w", compression=comp) as zf:
    for name, value in members:
        zf.writestr(name, base64.b64decode(value))
`

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
					runPythonStdin(t, pythonZip, members, path, comp)
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

// runPythonStdin runs program with v as JSON on standard input.
func runPythonStdin(t *testing.T, program string, v any, args ...string) []byte {
	t.Helper()
	in, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.CreateTemp(t.TempDir(), "stdin")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(in); err != nil {
		t.Fatal(err)
	}
	f.Close()
	// peertest.RunPython has no stdin: read the JSON from a file instead.
	prog := "import sys\nsys.stdin = open(" + pyQuote(f.Name()) + ")\n" + program
	return peertest.RunPython(t, prog, args...)
}

func pyQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// pythonZipStoreView writes a hierarchy with zarr-python's ZipStore into
// argv[1] (compression argv[2]), adds a duplicate key and members with
// unsafe names through zipfile, and prints python's view of the archive:
// {key: base64 value} for every key ZipStore shows.
const pythonZipStoreView = `
import base64, json, sys, warnings, zipfile
import numpy as np, zarr, numcodecs
warnings.simplefilter("ignore")
path = sys.argv[1]
comp = {"stored": zipfile.ZIP_STORED, "deflated": zipfile.ZIP_DEFLATED}[sys.argv[2]]
st = zarr.ZipStore(path, mode="w", compression=comp)
root = zarr.group(store=st)
root.attrs["title"] = "zip test"
a = root.create_dataset("temp", shape=(40, 30), chunks=(16, 16), dtype="<f8",
                        compressor=numcodecs.Zlib(level=3), fill_value=-1.5)
a[:] = np.arange(1200, dtype="<f8").reshape(40, 30) / 7
b = root.create_group("sub group").create_dataset("ü", shape=(1000,), chunks=(300,), dtype="<i2", compressor=None)
b[:] = np.arange(1000, dtype="<i2") * 3
st["dup"] = b"first"
st["dup"] = b"second, the one that counts"
st.zf.writestr("../../escape", b"x")
st.zf.writestr("/etc/passwd", b"x")
st.zf.writestr("a\\b", b"x")
st.zf.writestr("./dot", b"x")
st.zf.writestr("folder//double", b"x")
st.close()
ro = zarr.ZipStore(path, mode="r")
print(json.dumps({k: base64.b64encode(ro[k]).decode() for k in ro.keys()}))
ro.close()
`

// TestReadPythonZipStore checks that every key of an archive written by
// zarr-python's ZipStore reads byte-identical to python's own view, and
// that members with unsafe names cannot be reached.
func TestReadPythonZipStore(t *testing.T) {
	ctx := context.Background()
	unsafe := []string{"../../escape", "/etc/passwd", `a\b`, "./dot", "folder//double"}
	for _, comp := range []string{"stored", "deflated"} {
		t.Run(comp, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "py.zip")
			out := peertest.RunPython(t, pythonZipStoreView, path, comp)
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

// pythonReadArray opens the archive argv[1] with zarr-python's ZipStore and
// checks the hierarchy zarrfs wrote: it prints "ok" or fails.
const pythonReadArray = `
import sys, numpy as np, zarr
st = zarr.ZipStore(sys.argv[1], mode="r")
root = zarr.open_group(store=st, mode="r")
assert root.attrs["made by"] == "zarrfs", dict(root.attrs)
a = root["arr"]
want = np.arange(100, dtype="<i4").reshape(10, 10)
assert a.shape == (10, 10) and a.dtype == np.dtype("<i4"), (a.shape, a.dtype)
assert np.array_equal(a[:], want), a[:]
assert bytes(st["raw/bin"]) == bytes(range(256)) * 3
assert st["unicode/ü"] == b"umlaut"
st.close()
print("ok")
`

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
		if out := peertest.RunPython(t, pythonReadArray, path); string(bytes.TrimSpace(out)) != "ok" {
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

func TestPrefixDetection(t *testing.T) {
	v := []byte("{}")
	tests := []struct {
		name  string
		names []string
		want  string
	}{
		{"root document", []string{"zarr.json", "x/zarr.json"}, ""},
		{"v2 root", []string{".zgroup", "a/.zarray"}, ""},
		{"one folder", []string{"data.zarr/zarr.json", "data.zarr/a/zarr.json", "README"}, "data.zarr"},
		{"one folder v2", []string{"d/.zarray", "d/0.0"}, "d"},
		{"consolidated only", []string{"d/.zmetadata"}, "d"},
		{"two folders", []string{"a/zarr.json", "b/.zgroup"}, ""},
		{"deeper only", []string{"a/b/zarr.json"}, ""},
		{"nothing", []string{"x", "y/z"}, ""},
	}
	for _, tt := range tests {
		data := map[string][]byte{}
		for _, n := range tt.names {
			data[n] = v
		}
		s := openBytes(t, build(t, data, "", CreateOptions{}), Options{})
		if s.Prefix() != tt.want {
			t.Errorf("%s: Prefix() = %q; want %q", tt.name, s.Prefix(), tt.want)
		}
		exact := openBytes(t, build(t, data, "", CreateOptions{}), Options{ExactRoot: true})
		if exact.Prefix() != "" {
			t.Errorf("%s: ExactRoot: Prefix() = %q", tt.name, exact.Prefix())
		}
	}
	b := build(t, map[string][]byte{"a/zarr.json": v}, "", CreateOptions{})
	if _, err := Open(bytes.NewReader(b), int64(len(b)), Options{Prefix: "../a"}); err == nil {
		t.Error("Open with Prefix ../a succeeded")
	}
	s := openBytes(t, b, Options{Prefix: "a/", Name: "x.zip"})
	if got, err := s.Get(context.Background(), "zarr.json"); err != nil || !bytes.Equal(got, v) {
		t.Errorf("Prefix a/: Get(zarr.json) = %q, %v", got, err)
	}
	if want := "zip x.zip (a)"; s.String() != want {
		t.Errorf("String() = %q; want %q", s.String(), want)
	}
}

// countingReaderAt counts the bytes read through it.
type countingReaderAt struct {
	r io.ReaderAt
	n atomic.Int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n.Add(int64(n))
	return n, err
}

// TestStoredRangeReadsOnlyTheRange checks that a range of a Stored member
// reads the range (and the member's local header), not the whole member.
func TestStoredRangeReadsOnlyTheRange(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789"), 100_000)
	b := build(t, map[string][]byte{"zarr.json": []byte("{}"), "big": big}, "", CreateOptions{})
	c := &countingReaderAt{r: bytes.NewReader(b)}
	s, err := Open(c, int64(len(b)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, r := range []store.ByteRange{store.Range(500_000, 100), store.SuffixRange(64), store.Range(999_990, 100)} {
		before := c.n.Load()
		want, _, _ := r.Resolve(int64(len(big)))
		got, err := s.GetRange(ctx, "big", r)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, big[want:want+int64(len(got))]) {
			t.Errorf("GetRange(%v) returned the wrong bytes", r)
		}
		if read := c.n.Load() - before; read > 4096 {
			t.Errorf("GetRange(%v) read %d bytes of the archive; want only the range and a header", r, read)
		}
	}
}

func TestCorrupt(t *testing.T) {
	ctx := context.Background()
	value := []byte("hello, zip, this value is long enough to compress well well well well")
	for _, deflate := range []bool{false, true} {
		b := build(t, map[string][]byte{"k": value}, "", CreateOptions{Deflate: deflate})
		// Flip a byte of the member's data: the CRC-32 check fails.
		s := openBytes(t, b, Options{})
		off, err := s.dataOffset(ctx, "k", s.members["k"])
		if err != nil {
			t.Fatal(err)
		}
		bad := slices.Clone(b)
		bad[off+3] ^= 0x40
		s = openBytes(t, bad, Options{})
		if got, err := s.Get(ctx, "k"); err == nil {
			t.Errorf("deflate=%v: Get of a corrupted member = %q, nil; want an error", deflate, got)
		}
	}
	// A truncated archive does not open.
	b := build(t, map[string][]byte{"k": value}, "", CreateOptions{})
	for _, n := range []int{0, 10, len(b) / 2, len(b) - 1} {
		if _, err := Open(bytes.NewReader(b[:n]), int64(n), Options{}); err == nil {
			t.Errorf("Open of %d of %d bytes succeeded", n, len(b))
		}
	}
}

// TestBombRefused checks that a member claiming an impossible size is
// refused before anything is allocated.
func TestBombRefused(t *testing.T) {
	var buf bytes.Buffer
	zw := archivezip.NewWriter(&buf)
	fw, err := zw.CreateRaw(&archivezip.FileHeader{Name: "bomb", Method: archivezip.Deflate,
		CompressedSize64: 2, UncompressedSize64: 1 << 50})
	if err != nil {
		t.Fatal(err)
	}
	fw.Write([]byte{3, 0})
	fw2, err := zw.CreateRaw(&archivezip.FileHeader{Name: "liar", Method: archivezip.Store,
		CompressedSize64: 4, UncompressedSize64: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	fw2.Write([]byte("abcd"))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	s := openBytes(t, buf.Bytes(), Options{})
	for _, k := range []string{"bomb", "liar"} {
		if _, err := s.Get(context.Background(), k); !errors.Is(err, archivezip.ErrFormat) {
			t.Errorf("Get(%q): %v; want archive/zip.ErrFormat", k, err)
		}
		if _, err := s.Stat(context.Background(), k); err == nil {
			t.Errorf("Stat(%q) succeeded", k)
		}
	}
}

func TestWriter(t *testing.T) {
	ctx := context.Background()
	var buf bytes.Buffer
	w, err := Create(&buf, CreateOptions{Name: "out.zip"})
	if err != nil {
		t.Fatal(err)
	}
	if w.String() != "zip writer out.zip" {
		t.Errorf("String() = %q", w.String())
	}
	if err := w.Set(ctx, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := w.Set(ctx, "k", []byte("again")); !errors.Is(err, ErrWriteOnce) {
		t.Errorf("second Set: %v; want ErrWriteOnce", err)
	}
	if err := w.Delete(ctx, "k"); !errors.Is(err, ErrWriteOnce) {
		t.Errorf("Delete of a written key: %v; want ErrWriteOnce", err)
	}
	if err := w.Delete(ctx, "never"); err != nil {
		t.Errorf("Delete of an unwritten key: %v", err)
	}
	var ike *store.InvalidKeyError
	for _, k := range storetest.InvalidKeys {
		if err := w.Set(ctx, k, nil); !errors.As(err, &ike) {
			t.Errorf("Set(%.40q): %v; want *store.InvalidKeyError", k, err)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := w.Set(cctx, "c", nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Set with a cancelled context: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err == nil {
		t.Error("second Close succeeded")
	}
	if err := w.Set(ctx, "late", nil); err == nil {
		t.Error("Set after Close succeeded")
	}
	s := openBytes(t, buf.Bytes(), Options{})
	if all, err := s.ListPrefix(ctx, ""); err != nil || !slices.Equal(all, []string{"k"}) {
		t.Errorf("archive holds %q, %v; want [k]", all, err)
	}
	if _, err := Create(io.Discard, CreateOptions{Deflate: true, Level: 42}); err == nil {
		t.Error("Create with level 42 succeeded")
	}
}

func TestOpenFileErrors(t *testing.T) {
	d := t.TempDir()
	for _, p := range []string{filepath.Join(d, "missing.zip"), d} {
		if s, err := OpenFile(p, Options{}); err == nil {
			s.Close()
			t.Errorf("OpenFile(%s) succeeded", p)
		}
	}
	notZip := filepath.Join(d, "x.zip")
	if err := os.WriteFile(notZip, []byte("not a zip archive at all"), 0o666); err != nil {
		t.Fatal(err)
	}
	if s, err := OpenFile(notZip, Options{}); err == nil {
		s.Close()
		t.Error("OpenFile of a text file succeeded")
	}
	ok := filepath.Join(d, "ok.zip")
	if err := os.WriteFile(ok, build(t, map[string][]byte{"zarr.json": nil}, "", CreateOptions{}), 0o666); err != nil {
		t.Fatal(err)
	}
	s, err := OpenFile(ok, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "zip " + ok; s.String() != want {
		t.Errorf("String() = %q; want %q", s.String(), want)
	}
	if err := s.Close(); err != nil {
		t.Error(err)
	}
}

// FuzzOpen opens arbitrary bytes as an archive and reads every key: no
// panic, no huge allocation, no read outside the archive, and reads agree
// with each other.
func FuzzOpen(f *testing.F) {
	f.Add(build(f, storetest.Data(), "", CreateOptions{}))
	f.Add(build(f, map[string][]byte{"d/zarr.json": []byte("{}"), "d/c/0": bytes.Repeat([]byte("ab"), 100)}, "", CreateOptions{Deflate: true}))
	f.Add([]byte("PK\x05\x06\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Add(writeTraversalZip())
	f.Add(rawZip(rawMember{name: "zarr.json", data: []byte("{}"), local: extra(28), central: extra(24)}, rawMember{name: "k", data: value, local: extra(300)}))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := &readsAt{b: b}
		s, err := Open(r, int64(len(b)), Options{})
		if err != nil {
			return
		}
		defer func() {
			if n := r.outside.Load(); n != 0 {
				t.Fatalf("%d reads reached outside the archive", n)
			}
		}()
		ctx := context.Background()
		keys, err := s.ListPrefix(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if err := store.ValidateKey(k); err != nil {
				t.Fatalf("listed an invalid key: %v", err)
			}
			whole, err := s.Get(ctx, k)
			if err != nil {
				continue
			}
			tail, err := s.GetRange(ctx, k, store.SuffixRange(3))
			if err != nil || !bytes.Equal(tail, whole[max(0, len(whole)-3):]) {
				t.Fatalf("GetRange(%q, last 3) = %q, %v; Get has %q", k, tail, err, whole)
			}
		}
		if _, _, err := s.ListDir(ctx, ""); err != nil {
			t.Fatal(err)
		}
	})
}

// blockingReaderAt serves the central directory but blocks member reads
// made through ReadAtContext until their context ends.
type blockingReaderAt struct {
	*bytes.Reader
	calls atomic.Int64
}

func (b *blockingReaderAt) ReadAtContext(ctx context.Context, p []byte, off int64) (int, error) {
	b.calls.Add(1)
	<-ctx.Done()
	return 0, ctx.Err()
}

func TestReaderAtContext(t *testing.T) {
	for _, deflate := range []bool{false, true} {
		b := build(t, map[string][]byte{"k": bytes.Repeat([]byte("value "), 1000)}, "", CreateOptions{Deflate: deflate})
		r := &blockingReaderAt{Reader: bytes.NewReader(b)}
		s, err := Open(r, int64(len(b)), Options{})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		_, err = s.GetRange(ctx, "k", store.Range(100, 10))
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("deflate=%v: GetRange with a blocked reader: %v; want context.DeadlineExceeded", deflate, err)
		}
		if r.calls.Load() == 0 {
			t.Errorf("deflate=%v: ReadAtContext was not used", deflate)
		}
	}
}
