package integration

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// Tables of expectations, keyed by tableKey: "STORE//PATH" relative to the
// corpus, where the zarrita.js stores (a directory and zips of the same
// hierarchy) are all written "zarrita.js/v2" or "zarrita.js/v3".

// corpusUnsupported lists the corpus arrays zarrfs does not read yet, with
// the reason. `zarrfs cat` must fail on them with a clear "unsupported"
// error, not crash. When support lands the test fails until the entry is
// removed, so the list only shrinks.
var corpusUnsupported = map[string]string{
	"zarrs/v2/array_pcodec_C.zarr//":             "pcodec compressor",
	"zarrs/v2/array_zfpy_C.zarr//":               "zfpy compressor",
	"zarrs/v3/array_pcodec.zarr//":               "pcodec codec",
	"zarrs/v3/array_zfpy.zarr//":                 "zfpy codec",
	"zarrs/v3_zarr_python/array_pcodec.zarr//":   "pcodec codec",
	"zarrs/v3_zarr_python/array_zfpy.zarr//":     "zfpy codec",
	"zarrs/v3/array_optional.zarr//array":        "optional data type and codec (zarrs extension)",
	"zarrs/v3/array_optional_nested.zarr//array": "optional data type and codec (zarrs extension)",
}

// corpusKnownBugs lists arrays zarrfs reads wrongly today, with the
// component at fault. The test expects them to fail and fails when one
// passes, so that its entry is removed.
var corpusKnownBugs = map[string]string{}

// corpusDecided holds the bytes zarrfs must show for arrays whose oracles
// disagree, with the reason for the choice.
var corpusDecided = map[string]struct{ why, want string }{
	"zarrs/zarr_python_compat/str_v2_fv_0.zarr//": {
		why: "an object array with fill_value 0: zarr-python 2 reads missing elements as the integer 0 and zarrita as \"0\"; " +
			"the writer (zarr-python 3.0.1) meant the empty string, and zarrs' zarr_python_v2_compat_str_fv_0 test reads \"\"",
		want: "a\nbb\n\n\n\n",
	},
}

// corpusNoOracle lists corpus arrays that neither zarrita 0.7.5 nor
// zarr-python 2.13 can read, with why. zarrfs must read them or answer a
// clean "unsupported"; their bytes are checked against the equivalent
// array named in corpusSameAs where there is one.
var corpusNoOracle = map[string]string{
	"zarrs/zarr_python_compat/fixed_length_utf32_v3_le.zarr//": "v3 fixed_length_utf32 data type",
	"zarrs/zarr_python_compat/v3_bytes.zarr//":                 "v3 variable_length_bytes data type",
	"zarrs/v3_zarr_python/array_adler32.zarr//":                "numcodecs.adler32 in v3",
	"zarrs/v3_zarr_python/array_fletcher32.zarr//":             "numcodecs.fletcher32 in v3",
	"zarrs/v3_zarr_python/array_bz2.zarr//":                    "numcodecs.bz2 in v3",
	"zarrs/zarr_python_compat/fletcher32.zarr//":               "fletcher32 checksum (numcodecs 0.12+)",
}

// corpusSameAs maps an array without an oracle to one holding the same
// elements that has one.
var corpusSameAs = map[string]string{
	"zarrs/zarr_python_compat/fixed_length_utf32_v3_le.zarr//": "zarrs/zarr_python_compat/fixed_length_utf32_v2_le.zarr//",
	"zarrs/v3_zarr_python/array_adler32.zarr//":                "zarrs/v3_zarr_python/array_none.zarr//",
	"zarrs/v3_zarr_python/array_fletcher32.zarr//":             "zarrs/v3_zarr_python/array_none.zarr//",
	"zarrs/v3_zarr_python/array_bz2.zarr//":                    "zarrs/v3_zarr_python/array_none.zarr//",
}

// noOracleReason says why no oracle reads the array, or "" when one should.
// Arrays of the numpy.datetime64/timedelta64 v3 extension data types have
// none (zarrfs shows them as int64).
func noOracleReason(key string) string {
	if why, ok := corpusNoOracle[key]; ok {
		return why
	}
	if strings.Contains(key, "/datetime64[") || strings.Contains(key, "/timedelta64[") ||
		key == "zarrs/issue_287.zarr//meta/date" {
		return "numpy.datetime64/timedelta64 v3 extension data types"
	}
	return ""
}

// tableKey is the key of an array in the tables above.
func tableKey(storeRel, path string) string {
	for _, v := range []string{"zarrita.js/v2/", "zarrita.js/v3/"} {
		if strings.HasPrefix(storeRel, v) {
			return strings.TrimSuffix(v, "/") + "//" + path
		}
	}
	return storeRel + "//" + path
}

// corpusImplicitRoot lists corpus stores whose root holds no metadata
// document (an implicit group, as zarr-python 3 and zarrs write). zarrfs may
// refuse such a root with a clear "no Zarr metadata" error; their arrays are
// then checked with each array's own directory as the store.
var corpusImplicitRoot = map[string]bool{
	"zarrs/sharded_array_write_read.zarr": true,
	"zarrs/v3/array_optional.zarr":        true,
	"zarrs/v3/array_optional_nested.zarr": true,
}

func hasRootMetadata(dir string) bool {
	for _, name := range []string{"zarr.json", ".zgroup", ".zarray", ".zmetadata"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}

// corpusStore is one store in the corpus: a directory named *.zarr that is
// not inside another, or a .zip file.
type corpusStore struct {
	rel, abs string
}

func corpusStores(t *testing.T, corpus string) []corpusStore {
	t.Helper()
	var out []corpusStore
	for _, top := range []string{"zarrita.js", "zarrs"} {
		err := filepath.WalkDir(filepath.Join(corpus, top), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(corpus, p)
			switch {
			case d.IsDir() && strings.HasSuffix(d.Name(), ".zarr"):
				out = append(out, corpusStore{filepath.ToSlash(rel), p})
				return filepath.SkipDir
			case !d.IsDir() && strings.HasSuffix(d.Name(), ".zip"):
				out = append(out, corpusStore{filepath.ToSlash(rel), p})
			}
			return nil
		})
		if err != nil {
			t.Fatalf("walking the corpus: %v", err)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].rel < out[j].rel })
	return out
}

// TestCorpusConformance reads every array of the public corpus (zarrita.js
// and zarrs test data, directories and zips) with zarrfs and with an oracle
// (zarr-python for v2, zarrita for v3, the other one as a fallback) and
// compares the bytes.
func TestCorpusConformance(t *testing.T) {
	corpus := peertest.Corpus(t)
	peertest.NeedPython(t)
	peertest.NeedNode(t)
	stores := corpusStores(t, corpus)
	if len(stores) < 10 {
		t.Fatalf("found only %d stores in the corpus", len(stores))
	}
	type entry struct {
		name      string // subtest name: store and path as zarrfs sees them
		key       string // tableKey
		store     string // what zarrfs opens
		path      string // the node path zarrfs is given
		format    int
		want      []byte
		oracleErr []string
	}
	var entries []*entry
	var items []item // what the oracles read, one per entry
	for _, s := range stores {
		var arrays []arrayNode
		prefix := ""
		implicit := false
		if strings.HasSuffix(s.rel, ".zip") {
			arrays, prefix = findZipArrays(t, s.abs)
		} else {
			arrays = findArrays(t, s.abs)
			implicit = !hasRootMetadata(s.abs)
			if implicit != corpusImplicitRoot[s.rel] {
				t.Errorf("%s: root metadata present = %v; update corpusImplicitRoot", s.rel, !implicit)
			}
		}
		for _, a := range arrays {
			// A zip holding one folder (zipped from the parent) is read
			// from inside that folder by zarrfs; the oracles see the folder.
			zpath := strings.TrimPrefix(strings.TrimPrefix(a.Path, prefix), "/")
			e := &entry{
				name: s.rel + "//" + zpath, key: tableKey(s.rel, zpath),
				store: s.abs, path: zpath, format: a.Format,
			}
			if implicit {
				e.store, e.path = filepath.Join(s.abs, filepath.FromSlash(a.Path)), ""
			}
			entries = append(entries, e)
			items = append(items, item{s.abs, a.Path})
		}
	}
	if len(entries) < 100 {
		t.Fatalf("found only %d arrays in the corpus", len(entries))
	}
	// zarrita reads everything it can; zarr-python (v2 only) is the primary
	// oracle for v2 arrays and the fallback for the rest.
	zd, zerrs := zarritaRead(t, items)
	pd, perrs := pythonRead(t, items)
	byKey := map[string]*entry{}
	for i, e := range entries {
		byKey[e.key] = e
		first, second, ferr, serr := zd, pd, zerrs, perrs
		if e.format == 2 {
			first, second, ferr, serr = pd, zd, perrs, zerrs
		}
		switch {
		case ferr[i] == nil:
			e.want = first[i]
		case serr[i] == nil:
			e.want = second[i]
		default:
			e.oracleErr = []string{ferr[i].Error(), serr[i].Error()}
		}
	}
	for _, table := range []map[string]string{corpusUnsupported, corpusKnownBugs, corpusNoOracle, corpusSameAs} {
		for k := range table {
			if byKey[k] == nil {
				t.Errorf("a table names %q, which is not in the corpus", k)
			}
		}
	}
	for k := range corpusDecided {
		if byKey[k] == nil {
			t.Errorf("corpusDecided names %q, which is not in the corpus", k)
		}
	}
	headers := corpusHeaders(t)
	for _, e := range entries {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			r := catArray(t, e.store, e.path)
			if why, ok := corpusUnsupported[e.key]; ok {
				if r.err == nil {
					t.Fatalf("zarrfs now reads this array: remove its corpusUnsupported entry (%s)", why)
				}
				if !isUnsupported(r) {
					t.Fatalf("want a clean \"unsupported\" error (%s), got %v: %s", why, r.err, r.stderr)
				}
				return
			}
			want := e.want
			if d, ok := corpusDecided[e.key]; ok {
				want = []byte(d.want)
			}
			if want == nil {
				if why := noOracleReason(e.key); why == "" {
					t.Fatalf("no oracle reads this array and it is not in corpusNoOracle: %s", strings.Join(e.oracleErr, "; "))
				}
				if same := corpusSameAs[e.key]; same != "" {
					want = byKey[same].want
				}
			}
			bug, knownBug := corpusKnownBugs[e.key]
			ok := true
			switch {
			case r.err != nil && want == nil && isUnsupported(r):
				// no oracle, and zarrfs says cleanly that it cannot
			case r.err != nil:
				ok = false
				if !knownBug {
					t.Fatalf("zarrfs cat: %v\n%s", r.err, r.stderr)
				}
			case want != nil && !bytes.Equal(r.stdout, want):
				ok = false
				if !knownBug {
					sameBytes(t, "zarrfs cat", r.stdout, want)
				}
			}
			if knownBug && ok {
				t.Fatalf("known bug fixed: remove the corpusKnownBugs entry (%s)", bug)
			}
			if ok && want != nil && r.err == nil {
				headers.add(t, e.store, e.path, want)
			}
		})
	}
}

// corpusRasters collects, for the corpus arrays zarrfs reads as the
// oracles do, the oracle's bytes as a file `data` with the data.hdr and
// data.nhdr that `zarrfs export` writes beside it; when every array has
// been read, GDAL and teem's unu read each through its headers and must
// return the oracle's bytes (foreign.py rasters).
type corpusRasters struct {
	dir  string
	mu   sync.Mutex
	list strings.Builder
	n    int
}

// corpusHeaders returns the collector, which checks what it collected when
// t's subtests are done; nil (collecting nothing) without the tools.
func corpusHeaders(t *testing.T) *corpusRasters {
	for _, tool := range []string{"teem-unu", "gdalinfo"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Logf("%s not found: the corpus arrays' data.hdr and data.nhdr are not checked (TestMountForeignHeaders requires them)", tool)
			return nil
		}
	}
	c := &corpusRasters{dir: t.TempDir()}
	t.Cleanup(func() {
		if c.n == 0 {
			return
		}
		list := filepath.Join(c.dir, "list.txt")
		if err := os.WriteFile(list, []byte(c.list.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		runForeign(t, "rasters", list)
	})
	return c
}

// add exports the headers of the array at path in store and, when it has
// any, writes them beside want, the oracle's bytes.
func (c *corpusRasters) add(t *testing.T, store, path string, want []byte) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.n++
	dir := filepath.Join(c.dir, strconv.Itoa(c.n))
	c.mu.Unlock()
	wrote := false
	for _, f := range []string{"hdr", "nhdr"} {
		r := runZarrfs(t, "export", "--format", f, store, path)
		if r.err != nil {
			continue
		}
		if !wrote {
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "data"), want, 0o644); err != nil {
				t.Fatal(err)
			}
			wrote = true
		}
		if err := os.WriteFile(filepath.Join(dir, "data."+f), r.stdout, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if wrote {
		c.mu.Lock()
		fmt.Fprintf(&c.list, "%s\t%s\t\t\n", dir, filepath.Join(dir, "data"))
		c.mu.Unlock()
	}
}

// TestCorpusTreeLists: `zarrfs tree` lists every array of every corpus
// directory store, the unsupported ones included (a broken node never hides
// its siblings).
func TestCorpusTreeLists(t *testing.T) {
	corpus := peertest.Corpus(t)
	for _, s := range corpusStores(t, corpus) {
		if strings.HasSuffix(s.rel, ".zip") {
			continue
		}
		t.Run(s.rel, func(t *testing.T) {
			t.Parallel()
			r := runZarrfs(t, "tree", s.abs)
			if corpusImplicitRoot[s.rel] && r.err != nil {
				if !strings.Contains(string(r.stderr), "no Zarr metadata") || !isCleanExit1(r) {
					t.Fatalf("a root without metadata: want a clean \"no Zarr metadata\" error, got %v: %s", r.err, r.stderr)
				}
				return
			}
			if r.err != nil {
				t.Fatalf("zarrfs tree: %v\n%s", r.err, r.stderr)
			}
			for _, a := range findArrays(t, s.abs) {
				if a.Path == "" {
					continue
				}
				if !strings.Contains(string(r.stdout), filepath.Base(a.Path)) {
					t.Errorf("zarrfs tree does not show array %s:\n%s", a.Path, r.stdout)
				}
			}
		})
	}
}
