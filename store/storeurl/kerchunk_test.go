package storeurl

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/diskcache"
	"github.com/zarrfs/zarrfs/store/kerchunk"
	"github.com/zarrfs/zarrfs/store/memory"
)

// TestOpenKerchunk checks that reference sets are told by their content,
// locally and over HTTP, and that other stores open as before.
func TestOpenKerchunk(t *testing.T) {
	ctx := context.Background()
	d := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(d, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("data.bin", "0123456789")
	refs := `{".zgroup": "{\"zarr_format\": 2}", "a/0": ["data.bin", 2, 3]}`
	write("refs.json", refs)
	write("refs.txt", "\n  "+refs) // the name does not matter
	write("notrefs.json", `{"version": 7}`)
	write("array.json", `[1, 2]`)
	write("pq/.zmetadata", `{"metadata": {".zgroup": {"zarr_format": 2}}, "record_size": 10}`)
	write("plain/.zmetadata", `{"metadata": {".zgroup": {"zarr_format": 2}}, "zarr_consolidated_format": 1}`)
	for _, c := range []struct {
		spec, kind, err string
	}{
		{"refs.json", "kerchunk", ""},
		{"refs.txt", "kerchunk", ""},
		{"pq", "kerchunk", ""},
		{"plain", "dir", ""},
		{"notrefs.json", "", "Kerchunk reference file"},
		{"array.json", "", "neither a directory nor a zip archive"},
	} {
		st, err := Open(ctx, filepath.Join(d, c.spec), Options{})
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Open(%s) = %v, %v; want an error saying %q", c.spec, st, err, c.err)
			}
			continue
		}
		if err != nil || !strings.HasPrefix(st.String(), c.kind+" ") {
			t.Errorf("Open(%s) = %v, %v; want a %s store", c.spec, st, err, c.kind)
			continue
		}
		if c.spec == "refs.json" || c.spec == "refs.txt" {
			if b, err := st.Get(ctx, "a/0"); err != nil || string(b) != "234" {
				t.Errorf("%s: a/0 = %q, %v", c.spec, b, err)
			}
		}
		closeIt(st)
	}

	srv := httptest.NewServer(http.FileServer(http.Dir(d)))
	defer srv.Close()
	for _, c := range []struct{ spec, kind string }{
		{"/refs.json", "kerchunk"}, {"/pq.parq", "kerchunk"}, {"/plain", "http"},
	} {
		if c.spec == "/pq.parq" {
			if err := os.Rename(filepath.Join(d, "pq"), filepath.Join(d, "pq.parq")); err != nil {
				t.Fatal(err)
			}
		}
		st, err := Open(ctx, srv.URL+c.spec, Options{})
		if err != nil || !strings.HasPrefix(st.String(), c.kind+" ") {
			t.Errorf("Open(%s) = %v, %v; want a %s store", c.spec, st, err, c.kind)
			continue
		}
		if c.spec == "/refs.json" {
			// The relative reference resolves to the server.
			if b, err := st.Get(ctx, "a/0"); err != nil || string(b) != "234" {
				t.Errorf("%s: a/0 = %q, %v", c.spec, b, err)
			}
		}
		closeIt(st)
	}
	// A reference set from the network may not name local files.
	write("abs.json", `{"a/0": ["`+filepath.Join(d, "data.bin")+`", 2, 3]}`)
	for _, allow := range []bool{false, true} {
		st, err := Open(ctx, srv.URL+"/abs.json", Options{AllowLocalRefs: allow})
		if err != nil {
			t.Fatal(err)
		}
		b, err := st.Get(ctx, "a/0")
		if allow && (err != nil || string(b) != "234") || !allow && !errors.Is(err, kerchunk.ErrNotAllowed) {
			t.Errorf("AllowLocalRefs %v: %q, %v", allow, b, err)
		}
		if errors.Is(err, store.ErrNotExist) {
			t.Errorf("a refused reference reads as missing: %v", err)
		}
		closeIt(st)
	}
}

// TestKerchunkTargetsThroughDiskCache: the file a reference set over
// HTTP points into (here on another HTTP server) is read through the disk
// cache as any remote store is, so that a second open of the set on the
// same cache folder (a remount) reads the referenced ranges from disk:
// no request at all reaches the referenced file's server.
func TestKerchunkTargetsThroughDiskCache(t *testing.T) {
	ctx := context.Background()
	data := []byte("0123456789abcdefghij")
	var target atomic.Int64 // requests for the referenced file
	far := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		target.Add(1)
		http.ServeContent(w, r, "data.bin", time.Unix(1e9, 0), bytes.NewReader(data))
	}))
	defer far.Close()
	refs := `{"version": 1, "refs": {".zgroup": "{\"zarr_format\": 2}",` +
		` "a/0": ["` + far.URL + `/data.bin", 2, 3], "a/1": ["` + far.URL + `/data.bin", 10, 5], "a/2": ["` + far.URL + `/data.bin"]}}`
	sets := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/refs.json" {
			http.NotFound(w, r)
			return
		}
		http.ServeContent(w, r, "refs.json", time.Unix(1e9, 0), strings.NewReader(refs))
	}))
	defer sets.Close()
	want := map[string]string{"a/0": "234", "a/1": "abcde", "a/2": string(data)}
	folder := t.TempDir()
	for open := range 2 {
		c, err := diskcache.Open(folder, diskcache.Options{})
		if err != nil {
			t.Fatal(err)
		}
		before := target.Load()
		st, err := Open(ctx, sets.URL+"/refs.json", Options{Cache: c})
		if err != nil {
			t.Fatalf("open %d: %v", open, err)
		}
		if !strings.HasPrefix(st.String(), "kerchunk ") {
			t.Fatalf("open %d: %s; want a kerchunk store", open, st)
		}
		for key, v := range want {
			if b, err := st.Get(ctx, key); err != nil || string(b) != v {
				t.Errorf("open %d: %s = %q, %v; want %q", open, key, b, err, v)
			}
		}
		closeIt(st) // closes the referenced file's store: its entries are written
		got := target.Load() - before
		switch {
		case open == 0 && got == 0:
			t.Errorf("first open: no request for the referenced file; want it fetched")
		case open == 1 && got != 0:
			t.Errorf("second open on the same cache folder: %d requests for the referenced file; want 0 (from disk)", got)
		}
		if s := c.Stats(); open == 1 && (s.Hits < int64(len(want)) || s.DiskBytes == 0) {
			t.Errorf("second open: %+v; want the %d reads as hits", s, len(want))
		}
	}
}

// readCounter is a memory store that adds up the bytes read from it.
type readCounter struct {
	*memory.Store
	read atomic.Int64
}

func (r *readCounter) GetRange(ctx context.Context, key string, br store.ByteRange) ([]byte, error) {
	b, err := r.Store.GetRange(ctx, key, br)
	r.read.Add(int64(len(b)))
	return b, err
}

// TestSniffLargeZmetadata: a folder's large .zmetadata is read whole to
// tell a Parquet reference index only when one of its ends names
// "record_size" (before or after the "metadata" object, as writers put
// it); the consolidated metadata of a large hierarchy is not.
func TestSniffLargeZmetadata(t *testing.T) {
	ctx := context.Background()
	pad := `"attrs": {"long": "` + strings.Repeat("x", 64<<10) + `"}`
	for _, c := range []struct {
		name, doc string
		refs      bool
		whole     bool // read whole
	}{
		{"index, record_size after", `{"metadata": {".zgroup": {"zarr_format": 2}, ".zattrs": {` + pad + `}}, "record_size": 10}`, true, true},
		{"index, record_size first", `{"record_size": 10, "metadata": {".zgroup": {"zarr_format": 2}, ".zattrs": {` + pad + `}}}`, true, true},
		{"consolidated", `{"metadata": {".zgroup": {"zarr_format": 2}, ".zattrs": {` + pad + `}}, "zarr_consolidated_format": 1}`, false, false},
		{"small consolidated", `{"metadata": {".zgroup": {"zarr_format": 2}}, "zarr_consolidated_format": 1}`, false, true},
	} {
		st := &readCounter{Store: memory.New()}
		if err := st.Set(ctx, ".zmetadata", []byte(c.doc)); err != nil {
			t.Fatal(err)
		}
		s, ok, err := sniffParquetRefs(ctx, st, "x", &url.URL{Scheme: "file", Path: "/x"}, Options{})
		if err != nil || ok != c.refs || (s != nil) != c.refs {
			t.Errorf("%s: sniff = %v, %v, %v; want references %v", c.name, s, ok, err, c.refs)
		}
		if whole := st.read.Load() >= int64(len(c.doc)); whole != c.whole {
			t.Errorf("%s: read %d of %d bytes; want whole %v", c.name, st.read.Load(), len(c.doc), c.whole)
		}
	}
}
