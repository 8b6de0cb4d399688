package integration

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// mountArray is an array the mount tests check: its node path, the file
// holding its reference bytes from a peer, what it shows (data or data.txt)
// and its expected NumPy dtype and shape.
type mountArray struct {
	Path  string `json:"path"`
	Ref   string `json:"ref"`
	File  string `json:"file"` // "data" or "data.txt"
	DType string `json:"dtype"`
	Shape []int  `json:"shape"`
	// Unsupported, when set, says why opening data must fail with EOPNOTSUPP.
	Unsupported string `json:"-"`
}

// v3NumpyDType maps a v3 data_type to the NumPy typestr of zarrfs's data.
var v3NumpyDType = map[string]string{
	"bool": "|b1", "int8": "|i1", "uint8": "|u1",
	"int16": "<i2", "uint16": "<u2", "int32": "<i4", "uint32": "<u4",
	"int64": "<i8", "uint64": "<u8", "float16": "<f2", "float32": "<f4", "float64": "<f8",
}

// littleEndian returns the NumPy typestr of zarrfs's data for a stored v2
// dtype: the same type, little-endian.
func littleEndian(dt string) string {
	if strings.HasPrefix(dt, ">") {
		return "<" + dt[1:]
	}
	return dt
}

// expectedTree lists the paths (relative, slash-separated) a mount of the
// directory store root must show: every node as a directory with its stored
// metadata documents and info.txt, arrays with data and data.npy (or
// data.txt for variable-length strings) and arrays of numbers of rank ≥ 1
// with preview.png, and nothing else.
func expectedTree(t *testing.T, root string, vlen map[string]bool) []string {
	t.Helper()
	var out []string
	rf := dirFormat(root)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if p != root && isIsland(rf, p) {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		docs := []string{}
		for _, name := range []string{"zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata"} {
			if _, err := os.Stat(filepath.Join(p, name)); err == nil {
				docs = append(docs, name)
			}
		}
		isArray := false
		for _, name := range docs {
			if name == ".zarray" {
				isArray = true
			}
			if name == "zarr.json" {
				b, _ := os.ReadFile(filepath.Join(p, name))
				isArray = nodeType(b) == "array"
			}
		}
		isNode := len(docs) > 0 && (docs[0] != ".zattrs" || len(docs) > 1)
		if !isNode {
			return filepath.SkipDir // chunk folders are no nodes
		}
		join := func(name string) string {
			if rel == "." {
				return name
			}
			return rel + "/" + name
		}
		if rel != "." {
			out = append(out, rel)
		}
		for _, name := range docs {
			if name == ".zmetadata" && rel != "." {
				continue
			}
			out = append(out, join(name))
		}
		out = append(out, join("info.txt"))
		if isArray {
			if vlen[strings.TrimPrefix(rel, ".")] {
				out = append(out, join("data.txt"))
			} else {
				out = append(out, join("data"), join("data.npy"))
			}
			if numericArray(filepath.Join(p, docs[0])) {
				out = append(out, join("preview.png"))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// numericArray reports whether the array metadata document at path (v2
// .zarray or v3 zarr.json) describes numbers (bool, integers, floats,
// complex) in an array of rank ≥ 1 with elements: one with a preview.png.
func numericArray(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var m struct {
		Shape    []int64         `json:"shape"`
		DType    json.RawMessage `json:"dtype"`
		DataType json.RawMessage `json:"data_type"`
	}
	if json.Unmarshal(b, &m) != nil || len(m.Shape) == 0 || slices.Contains(m.Shape, 0) {
		return false
	}
	var typestr, name string
	if json.Unmarshal(m.DType, &typestr) == nil && len(typestr) > 1 {
		return strings.ContainsRune("biufc", rune(typestr[1]))
	}
	if json.Unmarshal(m.DataType, &name) == nil {
		return name == "bool" || strings.HasPrefix(name, "int") || strings.HasPrefix(name, "uint") ||
			strings.HasPrefix(name, "float") || strings.HasPrefix(name, "complex")
	}
	return false
}

// mountedTree lists what find(1) shows under mnt, less the views for the
// tools of other fields (data.hdr, data.npy.hdr, data.nhdr, dataset.nc), whose presence
// foreign_test.go checks.
func mountedTree(t *testing.T, mnt string) []string {
	t.Helper()
	out := run(t, "find", mnt, "-mindepth", "1")
	var paths []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		switch path.Base(line) {
		case "data.hdr", "data.npy.hdr", "data.nhdr", "dataset.nc":
			continue
		}
		if line != "" {
			paths = append(paths, strings.TrimPrefix(line, mnt+"/"))
		}
	}
	sort.Strings(paths)
	return paths
}

func diffSets(want, got []string) (missing, extra []string) {
	w, g := map[string]bool{}, map[string]bool{}
	for _, s := range want {
		w[s] = true
	}
	for _, s := range got {
		g[s] = true
		if !w[s] {
			extra = append(extra, s)
		}
	}
	for _, s := range want {
		if !g[s] {
			missing = append(missing, s)
		}
	}
	return missing, extra
}

// checkTree compares find(1) on the mount with the hierarchy.
func checkTree(t *testing.T, store, mnt string, vlen map[string]bool) {
	t.Helper()
	missing, extra := diffSets(expectedTree(t, store, vlen), mountedTree(t, mnt))
	if len(missing) > 0 {
		t.Errorf("the mount lacks %d paths, e.g. %q", len(missing), missing[:min(5, len(missing))])
	}
	if len(extra) > 0 {
		t.Errorf("the mount shows %d unexpected paths, e.g. %q", len(extra), extra[:min(5, len(extra))])
	}
}

// checkData compares every array's data file with the peer's bytes using
// cmp(1) and stat(1), and checks EOPNOTSUPP for unsupported arrays.
func checkData(t *testing.T, mnt string, arrays []mountArray) {
	t.Helper()
	for _, a := range arrays {
		p := filepath.Join(mnt, a.Path, a.File)
		if a.Unsupported != "" {
			checkErrno(t, p, 95, "EOPNOTSUPP for "+a.Unsupported)
			continue
		}
		ref, err := os.ReadFile(a.Ref)
		if err != nil {
			t.Fatal(err)
		}
		if _, stderr, err := runTool("cmp", p, a.Ref); err != nil {
			t.Errorf("cmp %s: %v %s", a.Path, err, stderr)
		}
		if a.File == "data" {
			size := strings.TrimSpace(string(run(t, "stat", "-c", "%s", p)))
			if size != fmt.Sprint(len(ref)) {
				t.Errorf("stat -c %%s %s = %s, want %d", p, size, len(ref))
			}
		}
	}
}

// errnoProgram opens a file and reads it, printing the errno of the first
// failure or 0.
const errnoProgram = `
import sys
try:
    with open(sys.argv[1], "rb") as f:
        f.read()
    print(0)
except OSError as e:
    print(e.errno)
`

// checkErrno asserts that opening and reading path fails with errno want.
func checkErrno(t *testing.T, path string, want int, what string) {
	t.Helper()
	out, stderr, err := runTool(peertest.Python, "-c", errnoProgram, path)
	if err != nil {
		t.Fatalf("python: %v %s", err, stderr)
	}
	if got := strings.TrimSpace(string(out)); got != fmt.Sprint(want) {
		t.Errorf("%s: reading %s gave errno %s, want %d", what, path, got, want)
	}
}

// npyProgram loads every data.npy with np.load(mmap_mode="r") and checks
// its dtype, shape and bytes against the peer's; it prints one line per
// mismatch.
const npyProgram = `
import json, sys
import numpy as np
mnt, cases = sys.argv[1], json.load(open(sys.argv[2]))
for c in cases:
    p = mnt + "/" + c["path"] + "/data.npy"
    try:
        a = np.load(p, mmap_mode="r")
        ref = open(c["ref"], "rb").read()
        dtype = repr(np.lib.format.dtype_to_descr(a.dtype)) if a.dtype.names else a.dtype.str
        if dtype != c["dtype"]:
            print("%s: dtype %s, want %s" % (c["path"], dtype, c["dtype"]))
        elif list(a.shape) != c["shape"]:
            print("%s: shape %s, want %s" % (c["path"], a.shape, c["shape"]))
        elif np.ascontiguousarray(a).tobytes() != ref:
            print("%s: elements differ from the peer's" % c["path"])
    except Exception as e:
        print("%s: %s: %s" % (c["path"], type(e).__name__, e))
`

// preadProgram does random preads (os.pread) on every data file and
// compares them with the peer's bytes; it prints one line per mismatch.
const preadProgram = `
import json, os, random, sys
mnt, cases = sys.argv[1], json.load(open(sys.argv[2]))
rng = random.Random(1234)
for c in cases:
    ref = open(c["ref"], "rb").read()
    fd = os.open(mnt + "/" + c["path"] + "/" + c["file"], os.O_RDONLY)
    try:
        for _ in range(12):
            off = rng.randrange(0, len(ref) + 20)
            n = rng.choice([1, 2, 3, 7, 64, 4096, 70000])
            got = os.pread(fd, n, off)
            if got != ref[off:off + n]:
                print("%s: pread(%d, %d) gave %d bytes that differ" % (c["path"], n, off, len(got)))
                break
    finally:
        os.close(fd)
`

// checkNumpyAndPread runs npyProgram and preadProgram over the arrays.
func checkNumpyAndPread(t *testing.T, mnt string, arrays []mountArray) {
	t.Helper()
	var npy, all []mountArray
	for _, a := range arrays {
		if a.Unsupported != "" {
			continue
		}
		all = append(all, a)
		if a.File == "data" {
			npy = append(npy, a)
		}
	}
	for _, prog := range []struct {
		name, src string
		cases     []mountArray
	}{{"np.load", npyProgram, npy}, {"os.pread", preadProgram, all}} {
		list := filepath.Join(t.TempDir(), "cases.json")
		b, _ := json.Marshal(prog.cases)
		if err := os.WriteFile(list, b, 0o644); err != nil {
			t.Fatal(err)
		}
		out := peertest.RunPython(t, prog.src, mnt, list)
		if s := strings.TrimSpace(string(out)); s != "" {
			lines := strings.Split(s, "\n")
			t.Errorf("%s: %d of %d arrays differ:\n%s", prog.name, len(lines), len(prog.cases), strings.Join(lines[:min(10, len(lines))], "\n"))
		}
	}
}

// checkDD reads some arrays with dd(1) at odd block sizes and offsets that
// cross chunk edges.
func checkDD(t *testing.T, mnt string, arrays []mountArray) {
	t.Helper()
	n := 0
	for _, a := range arrays {
		if a.Unsupported != "" || a.File != "data" {
			continue
		}
		ref, err := os.ReadFile(a.Ref)
		if err != nil {
			t.Fatal(err)
		}
		if len(ref) < 50 {
			continue
		}
		for _, g := range [][3]int{{7, 3, 5}, {13, 1, 2}, {1, 17, 31}, {33, 0, 1000}} {
			bs, skip, count := g[0], g[1], g[2]
			out := run(t, "dd", "if="+filepath.Join(mnt, a.Path, "data"), fmt.Sprintf("bs=%d", bs),
				fmt.Sprintf("skip=%d", skip), fmt.Sprintf("count=%d", count), "status=none")
			lo, hi := min(len(ref), bs*skip), min(len(ref), bs*(skip+count))
			sameBytes(t, fmt.Sprintf("dd bs=%d skip=%d count=%d %s", bs, skip, count, a.Path), out, ref[lo:hi])
		}
		if n++; n >= 12 {
			break
		}
	}
	if n == 0 {
		t.Error("no array was large enough for the dd checks")
	}
}

// checkXattrs compares user.zarr.shape, user.zarr.dtype and
// user.zarr.format (getfattr) on array directories and data files.
func checkXattrs(t *testing.T, mnt string, arrays []mountArray, format string) {
	t.Helper()
	get := func(p, name string) string {
		out, stderr, err := runTool("getfattr", "--only-values", "--absolute-names", "-n", name, p)
		if err != nil {
			t.Errorf("getfattr -n %s %s: %v %s", name, p, err, stderr)
		}
		return string(out)
	}
	for i, a := range arrays {
		dir := filepath.Join(mnt, a.Path)
		shape := make([]string, len(a.Shape))
		for j, d := range a.Shape {
			shape[j] = fmt.Sprint(d)
		}
		targets := []string{dir}
		if i%4 == 0 && a.File == "data" {
			targets = append(targets, filepath.Join(dir, "data"))
		}
		for _, p := range targets {
			if got, want := get(p, "user.zarr.shape"), strings.Join(shape, ","); got != want {
				t.Errorf("%s user.zarr.shape = %q, want %q", p, got, want)
			}
			if a.File == "data" {
				if got := get(p, "user.zarr.dtype"); got != a.DType {
					t.Errorf("%s user.zarr.dtype = %q, want %q", p, got, a.DType)
				}
			}
			if got := get(p, "user.zarr.format"); got != format {
				t.Errorf("%s user.zarr.format = %q, want %q", p, got, format)
			}
		}
	}
}

// checkMetadata compares every metadata document in the mount with the
// stored one, byte for byte.
func checkMetadata(t *testing.T, store, mnt string) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(store, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch d.Name() {
		case "zarr.json", ".zarray", ".zgroup", ".zattrs":
		default:
			return nil
		}
		rel, _ := filepath.Rel(store, p)
		want, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		got, err := os.ReadFile(filepath.Join(mnt, rel))
		if err != nil {
			t.Errorf("reading %s in the mount: %v", rel, err)
			return nil
		}
		sameBytes(t, rel+" in the mount", got, want)
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Error("no metadata documents compared")
	}
}

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

// TestMountSIGTERM: with no open files, SIGTERM unmounts and exits 0
// within 5 s.
func TestMountSIGTERM(t *testing.T) {
	needFuse(t)
	store := filepath.Join(t.TempDir(), "example")
	mustZarrfs(t, "example", store)
	m := mountStore(t, store)
	err, took := m.signalAndWait(t, syscall.SIGTERM, 5*time.Second)
	if err != nil {
		t.Errorf("zarrfs mount exited with %v after SIGTERM\n%s", err, m.stderr.String())
	}
	if took > 5*time.Second {
		t.Errorf("exit took %v", took)
	}
	if isMountpoint(m.dir) {
		t.Error("still mounted after SIGTERM")
	}
}

// holderProgram opens a file, says "open", and on a line from standard
// input reads from the open descriptor, prints the bytes in hex and exits.
const holderProgram = `
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
print("open", flush=True)
sys.stdin.readline()
print(os.pread(fd, 16, 0).hex(), flush=True)
os.close(fd)
`

// TestMountSIGTERMWithOpenFile: SIGTERM while another process holds a file
// open detaches the mount at once; the holder can still read; zarrfs exits
// when it closes, within the grace period.
func TestMountSIGTERMWithOpenFile(t *testing.T) {
	needFuse(t)
	peertest.NeedPython(t)
	store := filepath.Join(t.TempDir(), "example")
	mustZarrfs(t, "example", store)
	arr := exampleArray(t, store)
	want := mustZarrfs(t, "cat", store, arr)
	m := mountStore(t, store)

	holder := exec.Command(peertest.Python, "-c", holderProgram, filepath.Join(m.dir, arr, "data"))
	stdin, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	holder.Stderr = os.Stderr
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		holder.Process.Kill()
		holder.Wait()
	}()
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || lines.Text() != "open" {
		t.Fatalf("the holder did not open the file: %q", lines.Text())
	}
	start := time.Now()
	if err := m.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The mount point is detached promptly although a file is open.
	for isMountpoint(m.dir) {
		if time.Since(start) > 5*time.Second {
			t.Fatal("still attached 5 s after SIGTERM with a file open")
		}
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case <-m.exited:
		t.Fatalf("zarrfs exited (%v) while a file was still open", m.waitErr)
	default:
	}
	// The open descriptor still reads.
	fmt.Fprintln(stdin, "read")
	if !lines.Scan() {
		t.Fatal("the holder printed nothing after the read")
	}
	if got, wantHex := lines.Text(), fmt.Sprintf("%x", want[:min(16, len(want))]); got != wantHex {
		t.Errorf("read from the open descriptor after SIGTERM: %s, want %s", got, wantHex)
	}
	holder.Wait()
	select {
	case <-m.exited:
		if m.waitErr != nil {
			t.Errorf("zarrfs exited with %v", m.waitErr)
		}
	case <-time.After(35 * time.Second): // the grace period is 30 s
		t.Fatalf("zarrfs did not exit after the last file closed\n%s", m.stderr.String())
	}
}

// TestDemo: `zarrfs demo MNT` mounts the example and answers ls; SIGINT
// unmounts it and exits 0.
func TestDemo(t *testing.T) {
	needFuse(t)
	mnt := filepath.Join(t.TempDir(), "demo")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	m := startMount(t, mnt, "demo", mnt)
	out := run(t, "ls", mnt)
	if !strings.Contains(string(out), "info.txt") {
		t.Errorf("ls %s = %q, want the example's root with info.txt", mnt, out)
	}
	if n := len(strings.Fields(string(out))); n < 3 {
		t.Errorf("ls %s shows %d entries", mnt, n)
	}
	err, _ := m.signalAndWait(t, syscall.SIGINT, 5*time.Second)
	if err != nil {
		t.Errorf("zarrfs demo exited with %v after SIGINT\n%s", err, m.stderr.String())
	}
	if isMountpoint(mnt) {
		t.Error("still mounted after SIGINT")
	}
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
