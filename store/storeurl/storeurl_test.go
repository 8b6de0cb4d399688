package storeurl

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/dir"
	"github.com/zarrfs/zarrfs/store/zip"
)

func writeZip(t *testing.T, path string, data map[string][]byte) {
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
	if err := os.WriteFile(path, buf.Bytes(), 0o666); err != nil {
		t.Fatal(err)
	}
}

func TestOpen(t *testing.T) {
	ctx := context.Background()
	d := t.TempDir()
	tree := filepath.Join(d, "tree.zarr")
	if err := os.MkdirAll(tree, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree, "zarr.json"), []byte("{}"), 0o666); err != nil {
		t.Fatal(err)
	}
	writeZip(t, filepath.Join(d, "a.zip"), map[string][]byte{"zarr.json": []byte("{}")})
	writeZip(t, filepath.Join(d, "noext"), map[string][]byte{"x.zarr/zarr.json": []byte("{}")})
	if err := os.WriteFile(filepath.Join(d, "text"), []byte("hello"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "bad.zip"), []byte("hello"), 0o666); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		spec     string
		opts     Options
		wantName string // String() of the store; "" when an error is expected
		writable bool
		wantErr  error // errors.Is target, when an error is expected
		errText  string
	}{
		{spec: tree, wantName: "dir " + tree},
		{spec: tree, opts: Options{Writable: true}, wantName: "dir " + tree, writable: true},
		{spec: "file://" + tree, wantName: "dir " + tree},
		{spec: filepath.Join(d, "a.zip"), wantName: "zip " + filepath.Join(d, "a.zip")},
		{spec: filepath.Join(d, "noext"), wantName: "zip " + filepath.Join(d, "noext") + " (x.zarr)"},
		{spec: filepath.Join(d, "a.zip"), opts: Options{Writable: true}, wantErr: store.ErrReadOnly},
		{spec: filepath.Join(d, "missing.zarr"), wantErr: fs.ErrNotExist, errText: "missing.zarr"},
		{spec: filepath.Join(d, "text"), errText: "neither a directory nor a zip archive"},
		{spec: filepath.Join(d, "bad.zip"), errText: "bad.zip"},
		{spec: "http://example.com/x.zarr", opts: Options{Writable: true}, wantErr: store.ErrReadOnly, errText: "read-only"},
		{spec: "s3://", errText: "no bucket"},
		{spec: "s3://b/x", opts: Options{Getenv: envOf("AWS_ACCESS_KEY_ID=k")}, errText: "AWS_SECRET_ACCESS_KEY"},
		{spec: "gs://bucket/prefix", wantErr: ErrUnsupportedScheme},
		{spec: "file://host/x", errText: "absolute local path"},
		{spec: "", errText: "empty"},
	}
	for _, tt := range tests {
		s, err := Open(ctx, tt.spec, tt.opts)
		if tt.wantName == "" {
			if err == nil {
				t.Errorf("Open(%q) = %s; want an error", tt.spec, s)
				continue
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("Open(%q): %v; want an error matching %v", tt.spec, err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.errText) {
				t.Errorf("Open(%q): %q does not mention %q", tt.spec, err, tt.errText)
			}
			continue
		}
		if err != nil {
			t.Errorf("Open(%q): %v", tt.spec, err)
			continue
		}
		if s.String() != tt.wantName {
			t.Errorf("Open(%q) = %s; want %s", tt.spec, s, tt.wantName)
		}
		if got, err := s.Get(ctx, "zarr.json"); err != nil || string(got) != "{}" {
			t.Errorf("Open(%q): Get(zarr.json) = %q, %v", tt.spec, got, err)
		}
		if w, ok := s.(store.Writer); ok {
			err := w.Set(ctx, "new", []byte("v"))
			if tt.writable && err != nil {
				t.Errorf("Open(%q, writable): Set: %v", tt.spec, err)
			}
			if !tt.writable && !errors.Is(err, store.ErrReadOnly) {
				t.Errorf("Open(%q, read-only): Set: %v; want ErrReadOnly", tt.spec, err)
			}
		}
		if c, ok := s.(io.Closer); !ok {
			t.Errorf("Open(%q) = %T: not an io.Closer", tt.spec, s)
		} else if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
}

func TestOpenTypes(t *testing.T) {
	s, err := Open(context.Background(), t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.(io.Closer).Close()
	if _, ok := s.(*dir.Store); !ok {
		t.Errorf("a directory opened as %T; want *dir.Store", s)
	}
}

func TestOpenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Open(ctx, t.TempDir(), Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Open with a cancelled context: %v", err)
	}
}

func TestIsScheme(t *testing.T) {
	for s, want := range map[string]bool{"http": true, "s3": true, "git+ssh": true, "": false, "3d": false, "a b": false, "/tmp/x:": false} {
		if got := isScheme(s); got != want {
			t.Errorf("isScheme(%q) = %v; want %v", s, got, want)
		}
	}
}
