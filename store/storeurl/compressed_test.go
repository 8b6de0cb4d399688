package storeurl

import (
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

func TestOpenCompressedKerchunk(t *testing.T) {
	peertest.NeedPythonModules(t, "import gzip, bz2, lzma", "python3")
	ctx := context.Background()
	d := t.TempDir()
	out := string(peertest.Oracle(t, "store/storeurl/compressed_refs.py", d))
	if !strings.Contains(out, "zst ") {
		peertest.Missing(t, "python3 cannot import zstandard (Debian: python3-zstandard): zstd not checked")
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(d)))
	defer srv.Close()
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		ext, fs, _ := strings.Cut(line, " ")
		if fs != "234" && fs != "nofsspec" {
			t.Errorf("fsspec reads a/0 of refs.json.%s as %q", ext, fs)
		}
		for _, spec := range []string{
			filepath.Join(d, "refs.json."+ext), filepath.Join(d, "noname-"+ext), srv.URL + "/refs.json." + ext,
		} {
			st, err := Open(ctx, spec, Options{})
			if err == nil && strings.HasPrefix(spec, "http") && !strings.HasPrefix(st.String(), "kerchunk ") {
				closeIt(st)
				t.Errorf("Open(%s) = %v, not a reference set", spec, st)
				continue
			}
			if err != nil {
				t.Errorf("Open(%s): %v", spec, err)
				continue
			}
			if b, err := st.Get(ctx, "a/0"); err != nil || string(b) != "234" {
				t.Errorf("%s: a/0 = %q, %v", spec, b, err)
			}
			closeIt(st)
		}
		// A remote file whose name says nothing: the CLI's fallback.
		st, ok, err := RemoteRefs(ctx, srv.URL+"/noname-"+ext, Options{})
		if err != nil || !ok {
			t.Errorf("RemoteRefs(noname-%s) = %v, %v", ext, ok, err)
			continue
		}
		closeIt(st)
	}

	// A compressed file of something else is not a reference set; a
	// small file that expands past the bound is refused without being
	// expanded whole.
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte("[1, 2, 3]"))
	w.Close()
	if err := os.WriteFile(filepath.Join(d, "list.json.gz"), gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, filepath.Join(d, "list.json.gz"), Options{}); err == nil || !strings.Contains(err.Error(), "neither a directory nor a zip archive (") {
		t.Errorf("a gzip of a JSON list: %v", err)
	}
}
