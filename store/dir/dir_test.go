package dir

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/storetest"
)

func openT(t *testing.T, path string, opts Options) *Store {
	t.Helper()
	s, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(t.Name(), "/"+osRoot) || strings.Contains(t.Name(), "/"+osRoot+"/") {
		s.bn.disable()
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// osRoot names the subtests of bothResolvers that use os.Root.
const osRoot = "os.Root"

// bothResolvers runs test with the store resolving keys through openat2
// (where the kernel has it) and through os.Root, the fallback: the two
// must behave the same.
func bothResolvers(t *testing.T, test func(t *testing.T)) {
	t.Run("openat2", test)
	t.Run(osRoot, test)
}

func TestConformance(t *testing.T) { bothResolvers(t, testConformance) }

func testConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openT(t, t.TempDir(), Options{}) })
}

// writeFiles writes data below dir with the os package, not the store.
func writeFiles(t *testing.T, dir string, data map[string][]byte) {
	t.Helper()
	for k, v := range data {
		p := filepath.Join(dir, filepath.FromSlash(k))
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, v, 0o666); err != nil {
			t.Fatal(err)
		}
	}
}

func TestConformanceReadOnly(t *testing.T) { bothResolvers(t, testConformanceReadOnly) }

func testConformanceReadOnly(t *testing.T) {
	storetest.RunReadOnly(t, func(t *testing.T, data map[string][]byte) store.Store {
		dir := t.TempDir()
		writeFiles(t, dir, data)
		return openT(t, dir, Options{ReadOnly: true})
	})
}

func TestReadOnly(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string][]byte{"k": []byte("v")})
	s := openT(t, dir, Options{ReadOnly: true})
	ctx := context.Background()
	if err := s.Set(ctx, "k", []byte("new")); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("Set on a read-only store: %v; want ErrReadOnly", err)
	}
	if err := s.Set(ctx, "other", []byte("new")); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("Set on a read-only store: %v; want ErrReadOnly", err)
	}
	if err := s.Delete(ctx, "k"); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("Delete on a read-only store: %v; want ErrReadOnly", err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "k")); err != nil || string(got) != "v" {
		t.Errorf("file after refused writes = %q, %v; want v", got, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "other")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused Set created a file: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string][]byte{"file": []byte("x")})
	for _, p := range []string{filepath.Join(dir, "missing"), filepath.Join(dir, "file")} {
		if s, err := Open(p, Options{}); err == nil {
			s.Close()
			t.Errorf("Open(%s) succeeded; want an error", p)
		}
	}
	s := openT(t, dir, Options{})
	if want := "dir " + dir; s.String() != want {
		t.Errorf("String() = %q; want %q", s.String(), want)
	}
}

// TestSymlinks checks what os.Root decides: relative links that stay inside
// the root work, links leading outside and absolute links are refused.
func TestSymlinks(t *testing.T) { bothResolvers(t, testSymlinks) }

func testSymlinks(t *testing.T) {
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	root := filepath.Join(base, "root")
	writeFiles(t, outside, map[string][]byte{"secret": []byte("secret"), "sub/s": []byte("secret2")})
	writeFiles(t, root, map[string][]byte{"real/v": []byte("inside"), "f": []byte("file")})
	links := map[string]string{
		"out-file":     "../outside/secret",
		"out-dir":      "../outside/sub",
		"out-abs-file": filepath.Join(outside, "secret"),
		"out-abs-dir":  filepath.Join(outside, "sub"),
		"in-abs-file":  filepath.Join(root, "f"),
		"in-file":      "f",
		"in-dir":       "real",
		"real/up":      "../f",
		"real/loop":    "..",
		"dangling":     "nothing-here",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	s := openT(t, root, Options{})
	ctx := context.Background()

	for _, k := range []string{"out-file", "out-dir/s", "out-abs-file", "out-abs-dir/s", "in-abs-file"} {
		if got, err := s.Get(ctx, k); err == nil {
			t.Errorf("Get(%q) = %q through a refused link; want an error", k, got)
		}
		if _, err := s.Stat(ctx, k); err == nil {
			t.Errorf("Stat(%q) through a refused link succeeded", k)
		}
	}
	if _, err := s.Get(ctx, "dangling"); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("Get(dangling): %v; want ErrNotExist", err)
	}
	for k, want := range map[string]string{"in-file": "file", "in-dir/v": "inside", "real/up": "file", "real/loop/f": "file"} {
		if got, err := s.Get(ctx, k); err != nil || string(got) != want {
			t.Errorf("Get(%q) = %q, %v; want %q", k, got, err, want)
		}
	}
	keys, prefixes, err := s.ListDir(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"f", "in-file"}; !slices.Equal(keys, want) {
		t.Errorf("ListDir keys = %q; want %q", keys, want)
	}
	if want := []string{"in-dir", "real"}; !slices.Equal(prefixes, want) {
		t.Errorf("ListDir prefixes = %q; want %q", prefixes, want)
	}
	all, err := s.ListPrefix(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	// real/loop leads back to the root: walked no further.
	if want := []string{"f", "in-dir/up", "in-dir/v", "in-file", "real/up", "real/v"}; !slices.Equal(all, want) {
		t.Errorf("ListPrefix = %q; want %q", all, want)
	}
	// Set replaces a link with a file (rename does not follow links) and
	// never writes outside; below a refused folder link it fails.
	for _, k := range []string{"out-file", "out-abs-file"} {
		if err := s.Set(ctx, k, []byte("x")); err != nil {
			t.Errorf("Set(%q): %v", k, err)
		}
		if fi, err := os.Lstat(filepath.Join(root, k)); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("after Set(%q) the link is not a regular file: %v", k, err)
		}
	}
	for _, k := range []string{"out-dir/s", "out-abs-dir/new"} {
		if err := s.Set(ctx, k, []byte("x")); err == nil {
			t.Errorf("Set(%q) through a refused folder link succeeded", k)
		}
	}
	for name, want := range map[string]string{"secret": "secret", "sub/s": "secret2"} {
		if got, _ := os.ReadFile(filepath.Join(outside, name)); string(got) != want {
			t.Errorf("outside file %s changed to %q", name, got)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "sub", "new")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Set created a file outside the root: %v", err)
	}
}

func TestSpecialFiles(t *testing.T) { bothResolvers(t, testSpecialFiles) }

func testSpecialFiles(t *testing.T) {
	root := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o666); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	writeFiles(t, root, map[string][]byte{"d/x": []byte("x")})
	s := openT(t, root, Options{})
	ctx := context.Background()
	for _, k := range []string{"fifo", "d"} {
		if _, err := s.Get(ctx, k); !errors.Is(err, store.ErrNotExist) {
			t.Errorf("Get(%q): %v; want ErrNotExist", k, err)
		}
		if _, err := s.Stat(ctx, k); !errors.Is(err, store.ErrNotExist) {
			t.Errorf("Stat(%q): %v; want ErrNotExist", k, err)
		}
	}
	if err := s.Delete(ctx, "d"); err != nil {
		t.Errorf("Delete of a folder: %v; want nil", err)
	}
	if keys, prefixes, err := s.ListDir(ctx, ""); err != nil || len(keys) != 0 || !slices.Equal(prefixes, []string{"d"}) {
		t.Errorf("ListDir = %q, %q, %v; want no keys (fifo left out) and prefix d", keys, prefixes, err)
	}
}

func TestStatModTimeAndAtomicSet(t *testing.T) {
	root := t.TempDir()
	s := openT(t, root, Options{})
	ctx := context.Background()
	if err := s.Set(ctx, ".hidden/.zarray", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	info, err := s.Stat(ctx, ".hidden/.zarray")
	if err != nil || info.Size != 2 || info.ModTime.IsZero() {
		t.Errorf("Stat = %+v, %v; want size 2 and a modification time", info, err)
	}
	// No temporary files are left behind.
	ents, err := os.ReadDir(filepath.Join(root, ".hidden"))
	if err != nil || len(ents) != 1 || ents[0].Name() != ".zarray" {
		t.Errorf("folder holds %v, %v; want only .zarray", ents, err)
	}
	// A file where a folder should be makes Set fail, not panic.
	if err := s.Set(ctx, ".hidden/.zarray/x", []byte("{}")); err == nil {
		t.Error("Set below a file succeeded")
	}
}

// TestCloseWhileReading closes the store while readers open keys: reads
// then fail (the store is closed) but never race with the close (-race).
func TestCloseWhileReading(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string][]byte{"a/b": []byte("x")})
	s, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 200 {
				s.Get(context.Background(), "a/b")
				s.Stat(context.Background(), "a/b")
			}
		})
	}
	s.Close()
	wg.Wait()
	if _, err := s.Get(context.Background(), "a/b"); err == nil {
		t.Error("Get after Close succeeded")
	}
}

// TestGetRangeInfo: the read and the file information come from one open,
// and agree with GetRange and Stat.
func TestGetRangeInfo(t *testing.T) {
	root := t.TempDir()
	s := openT(t, root, Options{})
	ctx := context.Background()
	if err := s.Set(ctx, "g/.zarray", []byte("0123456789")); err != nil {
		t.Fatal(err)
	}
	when := time.Date(2020, 5, 6, 7, 8, 9, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(root, "g", ".zarray"), when, when); err != nil {
		t.Fatal(err)
	}
	b, info, err := s.GetRangeInfo(ctx, "g/.zarray", store.Range(2, 3))
	if err != nil || string(b) != "234" || info.Size != 10 || !info.ModTime.Equal(when) {
		t.Errorf("GetRangeInfo = %q, %+v, %v; want \"234\", size 10, modified %v", b, info, err, when)
	}
	if _, _, err := s.GetRangeInfo(ctx, "g/missing", store.All); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("GetRangeInfo of a missing key: %v", err)
	}
}
