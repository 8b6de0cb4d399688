package integration

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

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
