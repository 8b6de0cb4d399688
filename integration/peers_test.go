package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// v2Compressors lists every compressor (and filter chain) write_v2.py uses
// and whether zarrfs reads it: "" when it must, otherwise why it answers "unsupported". When a
// codec lands, its entry here becomes "" (the test fails until it does, so
// the list cannot go stale).
var v2Compressors = map[string]string{
	"none":                    "",
	"gzip":                    "",
	"zlib":                    "",
	"zstd":                    "",
	"blosc-lz4-shuffle":       "",
	"blosc-zstd-bitshuffle":   "",
	"blosc-blosclz-noshuffle": "",
	"blosc-zlib-shuffle":      "",
	"lz4":                     "",
	"bz2":                     "",
	"lzma":                    "",
	// Filter chains (write_v2.py's FILTERS), with their compressors.
	"filters:delta":               "",
	"filters:delta_astype":        "",
	"filters:fixedscaleoffset":    "",
	"filters:quantize":            "",
	"filters:astype":              "",
	"filters:shuffle":             "",
	"filters:packbits":            "",
	"filters:bitround":            "",
	"filters:crc32":               "",
	"filters:adler32":             "",
	"filters:delta_shuffle_blosc": "",
}

// v2Case is one array write_v2.py wrote.
type v2Case struct {
	Path       string `json:"path"`
	Ref        string `json:"ref"`
	Compressor string `json:"compressor"`
	DType      string `json:"dtype"`
	Shape      []int  `json:"shape"`
	Order      string `json:"order"`
	Separator  string `json:"separator"`
	Partial    bool   `json:"partial"`
}

// v2Store caches writeV2's store: zarr-python writes it once per run.
var v2Store struct {
	once  sync.Once
	dir   string
	cases []v2Case
	err   error
}

// writeV2 has zarr-python write its v2 arrays into a store (once per test
// binary; the tests only read it) and returns the store and the cases with
// their reference bytes.
func writeV2(t *testing.T) (string, []v2Case) {
	t.Helper()
	peertest.NeedPython(t)
	v2Store.once.Do(func() {
		v2Store.dir, v2Store.cases, v2Store.err = runWriteV2(filepath.Join(tmpRoot, "python-v2"))
	})
	if v2Store.err != nil {
		t.Fatal(v2Store.err)
	}
	return v2Store.dir, v2Store.cases
}

func runWriteV2(dir string) (string, []v2Case, error) {
	store := filepath.Join(dir, "v2.zarr")
	refs := filepath.Join(dir, "refs")
	script := pyScript("write_v2.py")
	cmd := exec.Command(peertest.Python, script, store, refs)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", nil, fmt.Errorf("write_v2.py: %v\n%s", err, stderr.String())
	}
	var cases []v2Case
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var c v2Case
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return "", nil, fmt.Errorf("write_v2.py printed %q: %v", sc.Text(), err)
		}
		cases = append(cases, c)
	}
	if len(cases) < 100 {
		return "", nil, fmt.Errorf("write_v2.py wrote only %d arrays", len(cases))
	}
	return store, cases, nil
}

// TestPeerPythonV2: zarr-python writes v2 arrays across dtypes,
// compressors, orders, separators, partial writes and shapes; `zarrfs cat`
// equals what zarr-python reads back, as little-endian C-order bytes.
func TestPeerPythonV2(t *testing.T) {
	store, cases := writeV2(t)
	seen := map[string]bool{}
	for _, c := range cases {
		seen[c.Compressor] = true
		t.Run(c.Path, func(t *testing.T) {
			t.Parallel()
			why, known := v2Compressors[c.Compressor]
			if !known {
				t.Fatalf("compressor %q is missing from v2Compressors", c.Compressor)
			}
			r := catArray(t, store, c.Path)
			if why != "" {
				if r.err == nil {
					t.Fatalf("zarrfs now reads %s arrays: clear its v2Compressors entry (%q)", c.Compressor, why)
				}
				if !isUnsupported(r) {
					t.Fatalf("%s (%s): want a clean \"unsupported\" error, got %v: %s", c.Path, why, r.err, r.stderr)
				}
				return
			}
			if r.err != nil {
				t.Fatalf("zarrfs cat %s: %v\n%s", c.Path, r.err, r.stderr)
			}
			want, err := os.ReadFile(c.Ref)
			if err != nil {
				t.Fatal(err)
			}
			sameBytes(t, "zarrfs cat "+c.Path, r.stdout, want)
		})
	}
	for name := range v2Compressors {
		if !seen[name] {
			t.Errorf("v2Compressors lists %q but write_v2.py wrote no array with it", name)
		}
	}
}

// TestPeerZarritaV3: zarrita writes v3 arrays (write_v3.mjs); `zarrfs cat`
// equals what zarrita reads.
func TestPeerZarritaV3(t *testing.T) {
	peertest.NeedNode(t)
	store := filepath.Join(t.TempDir(), "v3.zarr")
	out := peertest.Oracle(t, "js/write_v3.mjs", store)
	paths := strings.Fields(string(out))
	if len(paths) < 100 {
		t.Fatalf("write_v3.mjs wrote only %d arrays", len(paths))
	}
	// Cross-check the listing with a walk of the store.
	if got := findArrays(t, store); len(got) != len(paths) {
		t.Fatalf("write_v3.mjs printed %d arrays, the store holds %d", len(paths), len(got))
	}
	want, errs := zarritaRead(t, itemsIn(store, paths))
	for i, p := range paths {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			if errs[i] != nil {
				t.Fatalf("the oracle cannot read its own array: %v", errs[i])
			}
			r := catArray(t, store, p)
			if r.err != nil {
				t.Fatalf("zarrfs cat %s: %v\n%s", p, r.err, r.stderr)
			}
			sameBytes(t, "zarrfs cat "+p, r.stdout, want[i])
		})
	}
}

// TestPeerReadExample: the other way round. `zarrfs example` writes its
// hierarchy (and the hierarchies of the other format nested in it);
// zarr-python reads every v2 array and zarrita every v3 array, and each
// equals `zarrfs cat` of its hierarchy.
func TestPeerReadExample(t *testing.T) {
	peertest.NeedPython(t)
	peertest.NeedNode(t)
	dir := filepath.Join(t.TempDir(), "example")
	mustZarrfs(t, "example", dir)
	var v2, v3 []item
	for _, store := range hierarchies(t, dir) {
		for _, a := range findArrays(t, store) {
			if a.Format == 2 {
				v2 = append(v2, item{store, a.Path})
			} else {
				v3 = append(v3, item{store, a.Path})
			}
		}
	}
	if len(v3) == 0 {
		t.Fatal("zarrfs example wrote no v3 arrays")
	}
	check := func(items []item, want [][]byte, errs []error) {
		for i, it := range items {
			rel, _ := filepath.Rel(dir, filepath.Join(it.store, it.path))
			t.Run(filepath.ToSlash(rel), func(t *testing.T) {
				if errs[i] != nil {
					t.Fatalf("the peer cannot read what zarrfs wrote: %v", errs[i])
				}
				r := catArray(t, it.store, it.path)
				if r.err != nil {
					t.Fatalf("zarrfs cat %s %s: %v\n%s", it.store, it.path, r.err, r.stderr)
				}
				sameBytes(t, "zarrfs cat "+rel, r.stdout, want[i])
			})
		}
	}
	if len(v2) > 0 {
		want, errs := pythonRead(t, v2)
		check(v2, want, errs)
	}
	want, errs := zarritaRead(t, v3)
	check(v3, want, errs)
}

// infoJSON is the part of `zarrfs info --json` the peers can check.
type infoJSON struct {
	Kind       string `json:"kind"`
	Format     string `json:"format"`
	Shape      []int  `json:"shape"`
	NumpyDType string `json:"numpy_dtype"`
}

// TestPeerInfoJSON: `zarrfs info --json` gives the shape, NumPy dtype and
// format of arrays written by zarr-python (v2) and zarrita (v3).
func TestPeerInfoJSON(t *testing.T) {
	check := func(t *testing.T, store, path, format string, shape []int, dtype string) {
		t.Helper()
		out := mustZarrfs(t, "info", "--json", store, path)
		var info infoJSON
		if err := json.Unmarshal(out, &info); err != nil {
			t.Fatalf("zarrfs info --json %s: %v\n%s", path, err, out)
		}
		if info.Kind != "array" || info.Format != format {
			t.Errorf("%s: kind %q format %q, want array %s", path, info.Kind, info.Format, format)
		}
		if fmt.Sprint(info.Shape) != fmt.Sprint(shape) {
			t.Errorf("%s: shape %v, want %v", path, info.Shape, shape)
		}
		if dtype != "" && info.NumpyDType != dtype {
			t.Errorf("%s: numpy_dtype %q, want %q", path, info.NumpyDType, dtype)
		}
	}
	t.Run("v2", func(t *testing.T) {
		store, cases := writeV2(t)
		for i, c := range cases {
			if i%7 != 0 {
				continue
			}
			dt := littleEndian(c.DType)
			if c.DType == "O" {
				dt = ""
			}
			check(t, store, c.Path, "v2", c.Shape, dt)
		}
	})
	t.Run("v3", func(t *testing.T) {
		peertest.NeedNode(t)
		store := filepath.Join(t.TempDir(), "v3.zarr")
		for i, p := range strings.Fields(string(peertest.Oracle(t, "js/write_v3.mjs", store))) {
			if i%5 != 0 {
				continue
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
				t.Fatal(err)
			}
			check(t, store, p, "v3", meta.Shape, v3NumpyDType[meta.DataType])
		}
	})
}
