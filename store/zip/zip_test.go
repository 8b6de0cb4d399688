package zip

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	archivezip "archive/zip"

	"github.com/zarrfs/zarrfs/store"
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
