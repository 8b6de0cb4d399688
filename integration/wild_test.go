package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// wildCase is one array oracles/integration/wild.py had a real-world writer write.
type wildCase struct {
	Store  string `json:"store"`
	Path   string `json:"path"`
	Writer string `json:"writer"` // xarray, gdal or netcdf-c
	NCMode string `json:"ncmode"` // netCDF-c's mode (zarr, nczarr)

	cat   result // zarrfs cat
	dtype string // numpy_dtype of zarrfs info --json
}

// wildReaderOf is the reader of each writer's own stores.
var wildReaderOf = map[string]string{"xarray": "xarray", "gdal": "gdal", "netcdf-c": "netcdf-c"}

// wildDecided holds the arrays whose readers disagree, by the prefix of
// their store's name and their path, and how zarrfs settles each (README,
// "Data from other tools"; zarr/meta/wild.go): it follows the majority of the
// readers other than the writer's own.
var wildDecided = map[string]wildDecision{
	"netcdf-//c": {why: "char data under <U1 with one byte per character (netCDF-c 4.9.0)", refuse: "netCDF-c 4.9.0"},
	"netcdf-//ibig": {why: "little-endian bytes under >i4: read as the dtype says",
		agree: []string{"zarr-python", "gdal"}, differ: []string{"netcdf-c"}},
	"netcdf-//dbig": {why: "little-endian bytes under >f8: read as the dtype says",
		agree: []string{"zarr-python", "gdal"}, differ: []string{"netcdf-c"}},
	// nccopy writes the fill into the chunks and no fill_value.
	"netcdf-ncgen-//u64fill": {why: "a uint64 fill of 2^64-2, exactly",
		agree: []string{"zarr-python", "netcdf-c"}, differ: []string{"gdal"}},
}

// wildDecision is how zarrfs settles a disagreement.
type wildDecision struct {
	why    string
	refuse string   // zarrfs fails with an error saying this
	agree  []string // or it shows what these readers show
	differ []string // and not what these show
}

// decision returns the wildDecided entry of the case, if any.
func (c *wildCase) decision() (wildDecision, bool) {
	for k, d := range wildDecided {
		prefix, path, _ := strings.Cut(k, "//")
		if path == c.Path && strings.HasPrefix(filepath.Base(c.Store), prefix) {
			return d, true
		}
	}
	return wildDecision{}, false
}

// needWildWriters skips (or fails) t unless xarray, GDAL's Python bindings,
// netCDF4 and netCDF-c's ncgen and nccopy are installed.
func needWildWriters(t *testing.T) {
	t.Helper()
	peertest.NeedPython(t)
	peertest.NeedPythonModules(t, "import xarray, dask, netCDF4; from osgeo import gdal", "python3-xarray, python3-dask, python3-netcdf4, python3-gdal")
	peertest.NeedCommands(t, "netcdf-bin", "ncgen", "nccopy")
}

// TestWildWriters: xarray, GDAL and netCDF-c write stores the way their
// users do (oracles/integration/wild.py), and every array reads through `zarrfs cat` and
// through a mount with the bytes zarr-python and the writer's own reader
// read, or as wildDecided settles a disagreement. Every document in the
// mount is the stored one, byte for byte (GDAL's stores are consolidated),
// and every array is listed.
func TestWildWriters(t *testing.T) {
	needWildWriters(t)
	dir := t.TempDir()
	out := peertest.RunPython(t, "import runpy, sys; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')",
		pyScript("wild.py"), "write", dir)
	var cases []*wildCase
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		c := &wildCase{}
		if err := json.Unmarshal(sc.Bytes(), c); err != nil {
			t.Fatalf("wild.py printed %q: %v", sc.Text(), err)
		}
		cases = append(cases, c)
	}
	if len(cases) < 150 {
		t.Fatalf("wild.py wrote only %d arrays", len(cases))
	}
	// zarrfs cat and info, two at a time.
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for _, c := range cases {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			c.cat = catArray(t, c.Store, c.Path)
			var info struct {
				NumPy string `json:"numpy_dtype"`
			}
			if json.Unmarshal(runZarrfs(t, "info", "--json", c.Store, c.Path).stdout, &info) == nil {
				c.dtype = info.NumPy
			}
		}()
	}
	wg.Wait()

	// The readers: zarr-python and the writer's own for every array, and
	// those a decision names.
	type read struct {
		c      *wildCase
		reader string
	}
	var reads []read
	for _, c := range cases {
		readers := []string{"zarr-python", wildReaderOf[c.Writer]}
		if d, ok := c.decision(); ok {
			readers = append(append(readers, d.agree...), d.differ...)
		}
		seen := map[string]bool{}
		for _, r := range readers {
			if !seen[r] {
				seen[r] = true
				reads = append(reads, read{c, r})
			}
		}
	}
	listDir := t.TempDir()
	var list strings.Builder
	for _, r := range reads {
		fmt.Fprintf(&list, "%s\t%s\t%s\t%s\t%s\n", r.c.Store, r.c.Path, r.reader, r.c.NCMode, r.c.dtype)
	}
	listFile := filepath.Join(listDir, "list.txt")
	outDir := filepath.Join(listDir, "out")
	if err := os.WriteFile(listFile, []byte(list.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(outDir, 0o755); err != nil {
		t.Fatal(err)
	}
	peertest.RunPython(t, "import runpy, sys; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')",
		pyScript("wild.py"), "read", listFile, outDir)
	data, errs := collect(t, "reader", outDir, len(reads))
	got := map[*wildCase]map[string][]byte{}
	gotErr := map[*wildCase]map[string]error{}
	for i, r := range reads {
		if got[r.c] == nil {
			got[r.c], gotErr[r.c] = map[string][]byte{}, map[string]error{}
		}
		if errs[i] != nil {
			gotErr[r.c][r.reader] = errs[i]
		} else {
			got[r.c][r.reader] = data[i]
		}
	}

	counts := map[string]int{}
	for _, c := range cases {
		name := strings.TrimPrefix(c.Store, dir+"/") + "//" + c.Path
		t.Run(name, func(t *testing.T) {
			d, decided := c.decision()
			readers := []string{"zarr-python", wildReaderOf[c.Writer]}
			if decided {
				readers = d.agree
			}
			if decided && d.refuse != "" {
				if c.cat.err == nil || !strings.Contains(string(c.cat.stderr), d.refuse) {
					t.Fatalf("%s: want an error naming %q, got %v: %s", d.why, d.refuse, c.cat.err, c.cat.stderr)
				}
				for _, r := range []string{"zarr-python", "gdal"} {
					if _, ok := got[c][r]; ok {
						t.Errorf("%s: %s reads it now: revisit the decision", d.why, r)
					}
				}
				counts["refused as decided"]++
				return
			}
			if c.cat.err != nil {
				t.Fatalf("zarrfs cat: %v\n%s\nreaders: %v", c.cat.err, c.cat.stderr, gotErr[c])
			}
			compared := 0
			for _, r := range readers {
				want, ok := got[c][r]
				if !ok {
					t.Logf("%s cannot read it: %v", r, gotErr[c][r])
					continue
				}
				sameBytes(t, "zarrfs cat against "+r, c.cat.stdout, want)
				compared++
			}
			if decided {
				if compared != len(readers) {
					t.Errorf("%s: want %v to read it", d.why, readers)
				}
				// The disagreement is still there (when a reader is fixed,
				// the decision needs no entry).
				for _, r := range d.differ {
					if w, ok := got[c][r]; !ok || bytes.Equal(w, c.cat.stdout) {
						t.Errorf("%s: %s reads the same bytes now (or nothing: %v); revisit wildDecided", d.why, r, gotErr[c][r])
					}
				}
			}
			if compared == 0 {
				t.Fatalf("no reader read it: %v", gotErr[c])
			}
			counts[c.Writer]++
		})
	}
	t.Logf("arrays read as their writers' readers and zarr-python read them: %v", counts)

	// The mount shows the same bytes, every document as stored, every array.
	byStore := map[string][]*wildCase{}
	var stores []string
	for _, c := range cases {
		if byStore[c.Store] == nil {
			stores = append(stores, c.Store)
		}
		byStore[c.Store] = append(byStore[c.Store], c)
	}
	for _, st := range stores {
		t.Run("mount/"+filepath.Base(st), func(t *testing.T) {
			m := mountStore(t, st)
			tree := string(mustZarrfs(t, "tree", st))
			for _, c := range byStore[st] {
				if c.cat.err != nil {
					continue
				}
				base := filepath.Join(m.dir, filepath.FromSlash(c.Path))
				file := filepath.Join(base, "data")
				if _, err := os.Stat(file); err != nil {
					file = filepath.Join(base, "data.txt")
				}
				sameBytes(t, c.Path+": the mount against zarrfs cat", run(t, "cat", file), c.cat.stdout)
				if c.Path != "" {
					parent, name := filepath.Split(base)
					entries, err := os.ReadDir(parent)
					if err != nil {
						t.Errorf("listing %s: %v", parent, err)
					} else if !hasEntry(entries, name) {
						t.Errorf("%s is not listed in the mount", c.Path)
					}
					if !strings.Contains(tree, filepath.Base(c.Path)) {
						t.Errorf("%s is not in zarrfs tree", c.Path)
					}
				}
				if strings.HasSuffix(st, ".zip") {
					continue
				}
				docs := map[string]string{}
				for _, doc := range []string{".zarray", ".zattrs"} {
					docs[doc] = filepath.Join(st, filepath.FromSlash(c.Path), doc)
				}
				docs["array.json"] = filepath.Join(st, "meta", "root", filepath.FromSlash(c.Path)+".array.json")
				for doc, stored := range docs {
					want, err := os.ReadFile(stored)
					if err != nil {
						continue
					}
					sameBytes(t, c.Path+"/"+doc+" in the mount against the store", run(t, "cat", filepath.Join(base, doc)), want)
				}
			}
			for _, doc := range []string{".zgroup", ".zattrs", ".zmetadata", "zarr.json"} {
				if want, err := os.ReadFile(filepath.Join(st, doc)); err == nil && !strings.HasSuffix(st, ".zip") {
					sameBytes(t, doc+" in the mount against the store", run(t, "cat", filepath.Join(m.dir, doc)), want)
				}
			}
		})
	}
}

// hasEntry reports whether entries has one named name.
func hasEntry(entries []os.DirEntry, name string) bool {
	for _, e := range entries {
		if e.Name() == name {
			return true
		}
	}
	return false
}
