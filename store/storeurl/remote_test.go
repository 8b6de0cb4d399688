package storeurl

import (
	archivezip "archive/zip"
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	nethttp "net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/remote"
	"github.com/zarrfs/zarrfs/store/remote/remotetest"
	"github.com/zarrfs/zarrfs/store/s3/s3test"
	"github.com/zarrfs/zarrfs/store/zip"
)

// envOf returns a Getenv reading only the given KEY=VALUE pairs.
func envOf(kv ...string) func(string) string {
	m := map[string]string{}
	for _, s := range kv {
		k, v, _ := strings.Cut(s, "=")
		m[k] = v
	}
	return func(k string) string { return m[k] }
}

func zipBytes(t *testing.T, data map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := zip.Create(&buf, zip.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range data {
		if err := w.Set(context.Background(), k, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func closeStore(t *testing.T, s store.Store) {
	t.Helper()
	if err := s.(io.Closer).Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestOpenHTTP(t *testing.T) {
	ctx := context.Background()
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<14) // 256 KiB: past the reader's tail
	srv := &remotetest.Server{Data: map[string][]byte{
		"d/x.zarr/zarr.json": []byte("{}"),
		"d/a.ZIP":            zipBytes(t, map[string][]byte{"x.zarr/zarr.json": []byte("{}"), "x.zarr/big": big}),
	}}
	ts := httptest.NewServer(srv)
	defer ts.Close()

	s, err := Open(ctx, ts.URL+"/d/x.zarr", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, "zarr.json"); err != nil || string(got) != "{}" {
		t.Errorf("Get = %q, %v", got, err)
	}
	if _, ok := s.(store.Lister); ok {
		t.Errorf("an HTTP store is a Lister")
	}
	closeStore(t, s)

	srv.Counts()
	z, err := Open(ctx, ts.URL+"/d/a.ZIP", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer closeStore(t, z)
	// Opening reads the size and the archive's tail: two requests.
	if c := srv.Counts(); c["HEAD"] != 1 || c["GET range"] != 1 || len(c) != 2 {
		t.Errorf("opening a zip over HTTP sent %v; want one HEAD and one ranged GET", c)
	}
	if !strings.Contains(z.String(), "/d/a.ZIP") || !strings.Contains(z.String(), "(x.zarr)") {
		t.Errorf("String() = %q", z)
	}
	if got, err := z.Get(ctx, "zarr.json"); err != nil || string(got) != "{}" {
		t.Errorf("zip over HTTP: Get = %q, %v", got, err)
	}
	if got, err := z.GetRange(ctx, "big", store.Range(1000, 100)); err != nil || !bytes.Equal(got, big[1000:1100]) {
		t.Errorf("zip over HTTP: GetRange = %d bytes, %v", len(got), err)
	}
	if got, err := z.Get(ctx, "big"); err != nil || !bytes.Equal(got, big) {
		t.Errorf("zip over HTTP: Get(big) = %d bytes, %v", len(got), err)
	}
	if keys, _, err := z.(store.Lister).ListDir(ctx, ""); err != nil || len(keys) != 2 {
		t.Errorf("zip over HTTP: ListDir = %q, %v", keys, err)
	}
	if _, err := Open(ctx, ts.URL+"/d/missing.zip", Options{}); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("missing zip over HTTP: %v", err)
	}
}

func TestOpenHTTPTimeout(t *testing.T) {
	srv := &remotetest.Server{Fault: func(*nethttp.Request, int64) remotetest.Action { return remotetest.Action{Hang: true} }}
	ts := httptest.NewServer(srv)
	defer func() { srv.Release(); ts.Close() }()
	s, err := Open(context.Background(), ts.URL, Options{Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer closeStore(t, s)
	start := time.Now()
	if _, err := s.Get(context.Background(), "zarr.json"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("hanging server: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("hanging server: answered after %v", d)
	}
}

func TestOpenS3(t *testing.T) {
	srv := s3test.Start(t)
	srv.MakeBucket("bkt")
	ctx := context.Background()
	env := envOf(append(srv.Env(), "AWS_ENDPOINT_URL=http://127.0.0.1:1")...) // _S3 wins below
	env2 := func(k string) string {
		if k == "AWS_ENDPOINT_URL_S3" {
			return srv.Endpoint
		}
		return env(k)
	}
	w, err := Open(ctx, "s3://bkt/p/x.zarr", Options{Writable: true, Getenv: env2, Retry: remote.Policy{Attempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.(store.Writer).Set(ctx, "zarr.json", []byte("{}")); err != nil {
		t.Fatalf("Set through s3://: %v", err)
	}
	if err := w.(store.Writer).Set(ctx, "../a.zip", nil); err == nil {
		t.Errorf("Set(../a.zip) succeeded")
	}
	closeStore(t, w)
	if err := os.WriteFile(filepath.Join(srv.Dir, "bkt", "p", "a.zip"),
		zipBytes(t, map[string][]byte{"zarr.json": []byte(`{"zip":1}`)}), 0o644); err != nil {
		t.Fatal(err)
	}

	r, err := Open(ctx, "s3://bkt/p/x.zarr/", Options{Getenv: env2})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := r.Get(ctx, "zarr.json"); err != nil || string(got) != "{}" {
		t.Errorf("Get = %q, %v", got, err)
	}
	if err := r.(store.Writer).Set(ctx, "k", nil); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("Set on a read-only s3 store: %v", err)
	}
	if keys, prefixes, err := r.(store.Lister).ListDir(ctx, ""); err != nil || len(keys) != 1 || len(prefixes) != 0 {
		t.Errorf("ListDir = %q %q, %v", keys, prefixes, err)
	}
	closeStore(t, r)

	z, err := Open(ctx, "s3://bkt/p/a.zip", Options{Getenv: env2})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := z.Get(ctx, "zarr.json"); err != nil || string(got) != `{"zip":1}` {
		t.Errorf("zip in S3: Get = %q, %v", got, err)
	}
	closeStore(t, z)

	// Without keys in the environment, the AWS shared credentials file.
	credFile := filepath.Join(t.TempDir(), "credentials")
	if err := os.WriteFile(credFile, []byte("[default]\naws_access_key_id = wrong\n[zarrfs]\naws_access_key_id = "+
		s3test.AccessKey+"\naws_secret_access_key = "+s3test.SecretKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", credFile)
	t.Setenv("AWS_PROFILE", "zarrfs")
	f, err := Open(ctx, "s3://bkt/p/x.zarr", Options{Getenv: envOf("AWS_ENDPOINT_URL=" + srv.Endpoint)})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := f.Get(ctx, "zarr.json"); err != nil || string(got) != "{}" {
		t.Errorf("credentials from the shared file: Get = %q, %v", got, err)
	}
	closeStore(t, f)

	// Flags win over the environment; anonymous access is refused here.
	a, err := Open(ctx, "s3://bkt/p/x.zarr", Options{Getenv: env, S3: S3Options{Endpoint: srv.Endpoint, Anonymous: true}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Get(ctx, "zarr.json"); err == nil || errors.Is(err, store.ErrNotExist) {
		t.Errorf("anonymous Get on a private bucket: %v; want access denied", err)
	}
	closeStore(t, a)
}

// TestOpenHTTPDeflateZip: a Deflate member read through a zip over HTTP
// costs a few requests, not one per 4 KiB the decompressor asks for.
func TestOpenHTTPDeflateZip(t *testing.T) {
	ctx := context.Background()
	member := bytes.Repeat([]byte("zarr chunk bytes 0123456789 "), 40000) // about 1.1 MB
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range member {
		if i%3 == 0 {
			member[i] = byte(rng.Uint32()) // compresses to about half
		}
	}
	var buf bytes.Buffer
	zw := archivezip.NewWriter(&buf)
	for _, name := range []string{"zarr.json", "c/0"} {
		w, err := zw.CreateHeader(&archivezip.FileHeader{Name: name, Method: archivezip.Deflate})
		if err != nil {
			t.Fatal(err)
		}
		v := member
		if name == "zarr.json" {
			v = []byte("{}")
		}
		w.Write(v)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	srv := &remotetest.Server{Data: map[string][]byte{"d.zip": buf.Bytes()}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	z, err := Open(ctx, ts.URL+"/d.zip", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer closeStore(t, z)
	srv.Counts()
	got, err := z.Get(ctx, "c/0")
	if err != nil || !bytes.Equal(got, member) {
		t.Fatalf("Get of a Deflate member over HTTP: %d bytes, %v", len(got), err)
	}
	c := srv.Counts()
	t.Logf("%d-byte member, archive %d bytes: %v", len(member), buf.Len(), c)
	if c["GET range"] > 8 {
		t.Errorf("reading a %d-byte Deflate member (%d compressed) sent %v", len(member), buf.Len(), c)
	}
}
