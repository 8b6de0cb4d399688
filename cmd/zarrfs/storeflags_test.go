package main

import (
	"context"
	nethttp "net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/store/remote/remotetest"
	"github.com/zarrfs/zarrfs/store/s3"
	"github.com/zarrfs/zarrfs/store/s3/s3test"
)

func TestStoreFlagsOptions(t *testing.T) {
	var nilFlags *storeFlags
	if o := nilFlags.options(); o.Timeout != 0 || o.Concurrency != 0 {
		t.Errorf("nil flags: %+v", o)
	}
	s := storeFlags{timeout: 0, concurrency: 3, retries: 2}
	if o := s.options(); o.Timeout >= 0 || o.Concurrency != 3 || o.Retry.Attempts != 3 {
		t.Errorf("options = %+v; want no timeout, 3 requests, 3 attempts", o)
	}
}

// serveDir serves a directory over HTTP and returns its URL.
func serveDir(t *testing.T, dir string, fault remotetest.Fault) (string, *remotetest.Server) {
	t.Helper()
	srv := &remotetest.Server{Dir: dir, Fault: fault}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() { srv.Release(); ts.Close() })
	return ts.URL, srv
}

func TestRemoteHTTP(t *testing.T) {
	dir := exampleStore(t)
	url, _ := serveDir(t, dir, nil)
	_, want, _ := runCLI(t, "cat", dir, "temperature")
	code, got, errOut := runCLI(t, "cat", url, "temperature")
	if code != 0 || got != want || len(want) == 0 {
		t.Errorf("cat over HTTP: status %d, %d bytes (want %d), stderr %q", code, len(got), len(want), errOut)
	}
	code, out, _ := runCLI(t, "info", url, "codecs/gzip")
	if code != 0 || !strings.Contains(out, "int32") {
		t.Errorf("info over HTTP: status %d:\n%s", code, out)
	}
	// No listing over HTTP, and this hierarchy has no consolidated metadata.
	code, _, errOut = runCLI(t, "ls", url)
	if code != 1 || !strings.Contains(errOut, "consolidated metadata") || !strings.Contains(errOut, url) {
		t.Errorf("ls over HTTP without consolidated metadata: status %d, stderr %q", code, errOut)
	}
}

func TestRemoteHTTPTimeout(t *testing.T) {
	dir := exampleStore(t)
	url, _ := serveDir(t, dir, func(r *nethttp.Request, _ int64) remotetest.Action {
		if strings.Contains(r.URL.Path, "/c/") {
			return remotetest.Action{Hang: true} // chunks only: metadata answers
		}
		return remotetest.Action{}
	})
	start := time.Now()
	code, _, errOut := runCLI(t, "cat", "--store-timeout", "300ms", url, "temperature")
	if code != 1 || !strings.Contains(errOut, "300ms") {
		t.Errorf("cat from a hanging server: status %d, stderr %q", code, errOut)
	}
	if d := time.Since(start); d > 1300*time.Millisecond {
		t.Errorf("cat from a hanging server took %v with --store-timeout 300ms", d)
	}
}

func TestRemoteS3(t *testing.T) {
	srv := s3test.Start(t)
	srv.MakeBucket("cli")
	dir := exampleStore(t)
	ctx := context.Background()
	w, err := s3.New("cli", "ex.zarr", s3.Options{Endpoint: srv.Endpoint, AccessKey: s3test.AccessKey, SecretKey: s3test.SecretKey})
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return w.Set(ctx, filepath.ToSlash(rel), b)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1") // the flag wins
	_, want, _ := runCLI(t, "cat", dir, "temperature")
	code, got, errOut := runCLI(t, "cat", "--s3-endpoint", srv.Endpoint, "s3://cli/ex.zarr", "temperature")
	if code != 0 || got != want {
		t.Errorf("cat from S3: status %d, %d bytes (want %d), stderr %q", code, len(got), len(want), errOut)
	}
	_, wantLs, _ := runCLI(t, "tree", dir)
	code, gotLs, errOut := runCLI(t, "tree", "--s3-endpoint", srv.Endpoint, "s3://cli/ex.zarr")
	if code != 0 || gotLs != wantLs {
		t.Errorf("tree of S3: status %d, stderr %q:\n%s\nwant:\n%s", code, errOut, gotLs, wantLs)
	}
	// zarrfs writes the example through the S3 store; it reads back the same.
	if code, _, errOut := runCLI(t, "example", "--s3-endpoint", srv.Endpoint, "s3://cli/new.zarr"); code != 0 {
		t.Fatalf("example to S3: status %d, stderr %q", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(srv.Dir, "cli", "new.zarr", "temperature", "zarr.json")); err != nil {
		t.Errorf("example to S3: %v", err)
	}
	code, got, errOut = runCLI(t, "cat", "--s3-endpoint", srv.Endpoint, "s3://cli/new.zarr", "temperature")
	if code != 0 || got != want {
		t.Errorf("cat of the example written to S3: status %d, %d bytes (want %d), stderr %q", code, len(got), len(want), errOut)
	}
	if code, _, errOut := runCLI(t, "example", "--s3-endpoint", srv.Endpoint, "s3://cli/new.zarr"); code != 1 || !strings.Contains(errOut, "not empty") {
		t.Errorf("example to a non-empty prefix: status %d, stderr %q", code, errOut)
	}
}

// TestCacheDir: zarrfs cat over HTTP with --cache-dir, twice: the second
// reads every chunk from the folder (the metadata documents are checked
// with the store once each: 304s), the same bytes; cache stats counts the
// entries, cache clear removes them.
func TestCacheDir(t *testing.T) {
	dir := exampleStore(t)
	url, srv := serveDir(t, dir, nil)
	cache := t.TempDir()
	_, want, _ := runCLI(t, "cat", dir, "temperature")
	srv.Counts()
	for i := range 2 {
		code, got, errOut := runCLI(t, "cat", "--cache-dir", cache, url, "temperature")
		if code != 0 || got != want {
			t.Fatalf("cat %d over HTTP with --cache-dir: status %d, %d bytes (want %d), stderr %q", i, code, len(got), len(want), errOut)
		}
		paths := srv.Paths()
		c := srv.Counts()
		var chunks int
		for _, p := range paths {
			if strings.Contains(p, "/c/") {
				chunks++
			}
		}
		if i == 0 && chunks == 0 {
			t.Errorf("first cat: no chunk requests (%q)", paths)
		}
		if i == 1 && chunks != 0 {
			t.Errorf("second cat with the same --cache-dir: %d chunk requests (%v: %q); want none", chunks, c, paths)
		}
	}
	code, out, errOut := runCLI(t, "cache", "stats", "--cache-dir", cache)
	if code != 0 || !strings.Contains(out, "entries:") || strings.Contains(out, "entries:   0\n") {
		t.Errorf("cache stats: status %d, %q, %q", code, out, errOut)
	}
	if code, _, errOut := runCLI(t, "cache", "clear", "--cache-dir", cache); code != 0 {
		t.Errorf("cache clear: status %d, %q", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(cache, "zarrfs-cache-v1")); !os.IsNotExist(err) {
		t.Errorf("after cache clear: %v", err)
	}
	if code, _, errOut := runCLI(t, "cache", "stats"); code != 1 || !strings.Contains(errOut, "--cache-dir") {
		t.Errorf("cache stats without --cache-dir: status %d, %q", code, errOut)
	}
}
