package integration

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// v3Fixture caches writeV3MountArrays's store: zarrita writes it once per
// run (the tests only read it).
var v3Fixture struct {
	once   sync.Once
	store  string
	arrays []mountArray
	ok     bool
}

// v3MountArrays has zarrita write its v3 arrays and read them back (once
// per test binary), and returns the store and the arrays with their
// reference files. The caller must not change the returned slice.
func v3MountArrays(t *testing.T) (string, []mountArray) {
	t.Helper()
	peertest.NeedNode(t)
	v3Fixture.once.Do(func() {
		v3Fixture.store, v3Fixture.arrays = writeV3MountArrays(t, filepath.Join(tmpRoot, "zarrita-v3"))
		v3Fixture.ok = true
	})
	if !v3Fixture.ok {
		t.Fatal("writing zarrita's v3 arrays failed in an earlier test")
	}
	return v3Fixture.store, v3Fixture.arrays
}

// writeV3MountArrays has zarrita write its v3 arrays into dir/v3.zarr and
// read them back into reference files in dir/refs.
func writeV3MountArrays(t *testing.T, dir string) (string, []mountArray) {
	t.Helper()
	store := filepath.Join(dir, "v3.zarr")
	paths := strings.Fields(string(peertest.Oracle(t, "js/write_v3.mjs", store)))
	data, errs := zarritaRead(t, itemsIn(store, paths))
	refs := filepath.Join(dir, "refs")
	if err := os.MkdirAll(refs, 0o755); err != nil {
		t.Fatal(err)
	}
	var arrays []mountArray
	for i, p := range paths {
		if errs[i] != nil {
			t.Fatalf("zarrita cannot read its own %s: %v", p, errs[i])
		}
		ref := filepath.Join(refs, fmt.Sprintf("%d.bin", i))
		if err := os.WriteFile(ref, data[i], 0o644); err != nil {
			t.Fatal(err)
		}
		var meta struct {
			Shape    []int  `json:"shape"`
			DataType string `json:"data_type"`
		}
		b, err := os.ReadFile(filepath.Join(store, filepath.FromSlash(p), "zarr.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &meta); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if meta.Shape == nil {
			meta.Shape = []int{}
		}
		arrays = append(arrays, mountArray{Path: p, Ref: ref, File: "data", DType: v3NumpyDType[meta.DataType], Shape: meta.Shape})
	}
	return store, arrays
}

// TestMountZarritaV3 mounts the arrays zarrita wrote and checks them with
// real tools: find, cmp, stat, dd, getfattr, np.load and os.pread.
func TestMountZarritaV3(t *testing.T) {
	needFuse(t)
	store, arrays := v3MountArrays(t)
	m := mountStore(t, store)
	t.Run("tree", func(t *testing.T) { checkTree(t, store, m.dir, nil) })
	t.Run("metadata", func(t *testing.T) { checkMetadata(t, store, m.dir) })
	t.Run("cmp", func(t *testing.T) { checkData(t, m.dir, arrays) })
	t.Run("dd", func(t *testing.T) { checkDD(t, m.dir, arrays) })
	t.Run("xattr", func(t *testing.T) { checkXattrs(t, m.dir, arrays, "3") })
	t.Run("numpy", func(t *testing.T) { checkNumpyAndPread(t, m.dir, arrays) })
}

// brokenProgram adds to a v2 store an array whose compressor zarrfs cannot
// know, next to a sibling that reads fine.
const brokenProgram = `
import json, os, sys
import numpy as np, zarr
root = sys.argv[1]
z = zarr.open_array(store=zarr.DirectoryStore(root), path="broken/fine", mode="w", shape=(6,), chunks=(4,), dtype="<i4")
z[:] = np.arange(6, dtype="<i4")
os.makedirs(os.path.join(root, "broken", "unknown"))
with open(os.path.join(root, "broken", "unknown", ".zarray"), "w") as f:
    json.dump({"zarr_format": 2, "shape": [6], "chunks": [4], "dtype": "<i4", "compressor": {"id": "nosuchcodec"},
               "fill_value": 0, "order": "C", "filters": None}, f)
with open(os.path.join(root, "broken", "unknown", "0"), "wb") as f:
    f.write(b"garbage")
`

// brokenOnce adds the broken arrays to the shared v2 store once.
var brokenOnce sync.Once

// v2MountArrays has zarr-python write its v2 arrays (plus one with an
// unknown codec beside a sibling that reads fine) and returns the store,
// the arrays with their reference files, and the paths of those shown as
// data.txt.
func v2MountArrays(t *testing.T) (string, []mountArray, map[string]bool) {
	t.Helper()
	store, cases := writeV2(t)
	brokenOnce.Do(func() { peertest.RunPython(t, brokenProgram, store) })
	fine := filepath.Join(t.TempDir(), "fine.bin")
	if err := os.WriteFile(fine, []byte{0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0}, 0o644); err != nil {
		t.Fatal(err)
	}
	var arrays []mountArray
	vlen := map[string]bool{}
	for _, c := range cases {
		a := mountArray{Path: c.Path, Ref: c.Ref, File: "data", DType: littleEndian(c.DType), Shape: c.Shape, Unsupported: v2Compressors[c.Compressor]}
		if c.DType == "O" {
			a.File = "data.txt"
			vlen[c.Path] = true
		}
		arrays = append(arrays, a)
	}
	arrays = append(arrays,
		mountArray{Path: "broken/fine", Ref: fine, File: "data", DType: "<i4", Shape: []int{6}},
		mountArray{Path: "broken/unknown", File: "data", DType: "<i4", Shape: []int{6}, Unsupported: "an unknown codec"})
	return store, arrays, vlen
}

// TestMountPythonV2 mounts the arrays zarr-python wrote (plus one with an
// unknown codec) and checks them with real tools.
func TestMountPythonV2(t *testing.T) {
	needFuse(t)
	store, arrays, vlen := v2MountArrays(t)
	m := mountStore(t, store)
	t.Run("tree", func(t *testing.T) { checkTree(t, store, m.dir, vlen) })
	t.Run("metadata", func(t *testing.T) { checkMetadata(t, store, m.dir) })
	t.Run("cmp", func(t *testing.T) { checkData(t, m.dir, arrays) })
	t.Run("dd", func(t *testing.T) { checkDD(t, m.dir, arrays) })
	t.Run("xattr", func(t *testing.T) {
		// One array per dtype is enough here.
		seen := map[string]bool{}
		var some []mountArray
		for _, a := range arrays {
			if !seen[a.DType] {
				seen[a.DType] = true
				some = append(some, a)
			}
		}
		checkXattrs(t, m.dir, some, "2")
	})
	t.Run("numpy", func(t *testing.T) { checkNumpyAndPread(t, m.dir, arrays) })
}

// TestMountReadPaths compares what zarr-python and zarrita wrote with what
// the mount reads through its other read paths: no chunk cache (and so no
// read-ahead); a cache too small to keep any chunk (each costs 64 bytes or
// more: read-ahead loads thrown away as they arrive); and a small cache
// that evicts as these arrays are read. TestMountPythonV2 and
// TestMountZarritaV3 read through the default one.
func TestMountReadPaths(t *testing.T) {
	needFuse(t)
	v2, v2Arrays, _ := v2MountArrays(t)
	v3, v3Arrays := v3MountArrays(t)
	for _, rp := range []struct{ name, flag string }{
		{"no-cache", "--cache-size=0"},
		{"cache-keeps-nothing", "--cache-size=100"},
		{"small-cache", "--cache-size=4KiB"},
	} {
		for _, s := range []struct {
			name   string
			store  string
			arrays []mountArray
		}{{"v2", v2, v2Arrays}, {"v3", v3, v3Arrays}} {
			t.Run(rp.name+"/"+s.name, func(t *testing.T) {
				m := mountStore(t, s.store, rp.flag)
				t.Run("cmp", func(t *testing.T) { checkData(t, m.dir, s.arrays) })
				t.Run("dd", func(t *testing.T) { checkDD(t, m.dir, s.arrays) })
				t.Run("numpy", func(t *testing.T) { checkNumpyAndPread(t, m.dir, s.arrays) })
			})
		}
	}
}

// writeErrnoProgram tries every kind of write on the mount and prints
// "op errno" per line.
const writeErrnoProgram = `
import os, sys
mnt = sys.argv[1]
arr = os.path.join(mnt, sys.argv[2])
def try_(name, f):
    try:
        f()
        print(name, 0)
    except OSError as e:
        print(name, e.errno)
try_("create", lambda: os.close(os.open(os.path.join(mnt, "new"), os.O_WRONLY | os.O_CREAT, 0o644)))
try_("open-write", lambda: os.close(os.open(os.path.join(arr, "data"), os.O_WRONLY)))
try_("truncate", lambda: os.truncate(os.path.join(arr, "data"), 0))
try_("mkdir", lambda: os.mkdir(os.path.join(mnt, "newdir")))
try_("unlink", lambda: os.unlink(os.path.join(arr, "data")))
try_("rmdir", lambda: os.rmdir(arr))
try_("rename", lambda: os.rename(os.path.join(arr, "data"), os.path.join(arr, "moved")))
try_("chmod", lambda: os.chmod(os.path.join(arr, "data"), 0o777))
try_("symlink", lambda: os.symlink("data", os.path.join(arr, "link")))
try_("setxattr", lambda: os.setxattr(arr, "user.zarr.shape", b"1"))
try_("removexattr", lambda: os.removexattr(arr, "user.zarr.shape"))
`

// TestMountReadOnly: every write answers EROFS, through the tools and
// through the system calls.
func TestMountReadOnly(t *testing.T) {
	needFuse(t)
	store := filepath.Join(t.TempDir(), "example")
	mustZarrfs(t, "example", store)
	arr := exampleArray(t, store)
	m := mountStore(t, store)
	for _, c := range [][]string{
		{"touch", filepath.Join(m.dir, "new")},
		{"mkdir", filepath.Join(m.dir, "newdir")},
		{"rm", "-f", filepath.Join(m.dir, arr, "data")},
		{"mv", filepath.Join(m.dir, arr, "data"), filepath.Join(m.dir, arr, "moved")},
		{"setfattr", "-n", "user.x", "-v", "1", filepath.Join(m.dir, arr)},
	} {
		_, stderr, err := runTool(c[0], c[1:]...)
		if err == nil {
			t.Errorf("%s succeeded on a read-only mount", strings.Join(c, " "))
		} else if !strings.Contains(string(stderr), "Read-only file system") {
			t.Errorf("%s: want \"Read-only file system\", got %v: %s", strings.Join(c, " "), err, stderr)
		}
	}
	out := peertest.RunPython(t, writeErrnoProgram, m.dir, arr)
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	n := 0
	for sc.Scan() {
		op, errno, _ := strings.Cut(sc.Text(), " ")
		if errno != fmt.Sprint(int(syscall.EROFS)) {
			t.Errorf("%s: errno %s, want EROFS (%d)", op, errno, syscall.EROFS)
		}
		n++
	}
	if n != 11 {
		t.Errorf("the write probe reported %d operations, want 11:\n%s", n, out)
	}
	// Nothing changed in the store.
	if _, err := os.Stat(filepath.Join(store, "new")); err == nil {
		t.Error("a write reached the store")
	}
}

// exampleArray returns the path of the largest array of fixed-size
// elements in the example hierarchy at store.
func exampleArray(t *testing.T, store string) string {
	t.Helper()
	best, size := "", int64(-1)
	for _, a := range findArrays(t, store) {
		r := catArray(t, store, a.Path)
		if r.err == nil && int64(len(r.stdout)) > size {
			if info := mustZarrfs(t, "info", store, a.Path); strings.Contains(string(info), "string") {
				continue
			}
			best, size = a.Path, int64(len(r.stdout))
		}
	}
	if best == "" {
		t.Fatal("the example has no array zarrfs reads")
	}
	return best
}

// TestMountZip mounts a zip store of the corpus (zarrita.js's v3 fixtures)
// and compares every array's data with zarrita's read of the zip.
func TestMountZip(t *testing.T) {
	needFuse(t)
	corpus := peertest.Corpus(t)
	zipPath := filepath.Join(corpus, "zarrita.js", "v3", "data.zipped_from_within.zarr.zip")
	nodes, prefix := findZipArrays(t, zipPath)
	if prefix != "" || len(nodes) < 20 {
		t.Fatalf("%s: %d arrays under %q; want the hierarchy at the root", zipPath, len(nodes), prefix)
	}
	var paths []string
	for _, n := range nodes {
		paths = append(paths, n.Path)
	}
	data, errs := zarritaRead(t, itemsIn(zipPath, paths))
	m := mountStore(t, zipPath)
	compared := 0
	for i, p := range paths {
		if errs[i] != nil {
			continue // the corpus test accounts for arrays without an oracle
		}
		file := "data"
		if _, err := os.Stat(filepath.Join(m.dir, p, "data.txt")); err == nil {
			file = "data.txt"
		}
		got, err := os.ReadFile(filepath.Join(m.dir, p, file))
		if err != nil {
			if errors.Is(err, syscall.EOPNOTSUPP) {
				if _, listed := corpusUnsupported[tableKey("zarrita.js/v3/x.zip", p)]; listed {
					continue
				}
			}
			t.Errorf("reading %s/%s: %v", p, file, err)
			continue
		}
		sameBytes(t, p+"/"+file, got, data[i])
		compared++
	}
	if compared < 20 {
		t.Errorf("compared only %d arrays", compared)
	}
}
