package integration

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
	"github.com/zarrfs/zarrfs/store/kerchunk/kerchunktest"
)

// kerchunkSets makes NetCDF-4 and HDF5 files with netCDF4-python and h5py,
// their Kerchunk references (oracles/integration/kerchunk_refs.py: JSON version
// 0 and 1; Parquet directories converted from version 0 here, as Debian
// has no Parquet writer for Python) and the values the two libraries read
// from the files. It returns the folder and the arrays of each kind
// ("nc", "h5").
func kerchunkSets(t *testing.T) (string, map[string][]string) {
	t.Helper()
	peertest.NeedPythonModules(t, "import h5py, netCDF4, numpy", "python3-h5py, python3-netcdf4, python3-numpy")
	dir := t.TempDir()
	if out, stderr, err := runTool(peertest.Python, pyScript("kerchunk_refs.py"), "make", dir); err != nil {
		t.Fatalf("kerchunk_refs.py make: %v\n%s%s", err, out, stderr)
	}
	var arrays map[string][]string
	b, err := os.ReadFile(filepath.Join(dir, "arrays.json"))
	if err != nil || json.Unmarshal(b, &arrays) != nil || len(arrays["nc"]) == 0 || len(arrays["h5"]) == 0 {
		t.Fatalf("arrays.json: %s, %v", b, err)
	}
	for kind := range arrays {
		var refs map[string]json.RawMessage
		b, err := os.ReadFile(filepath.Join(dir, kind+".v0.json"))
		if err != nil || json.Unmarshal(b, &refs) != nil {
			t.Fatalf("%s.v0.json: %v", kind, err)
		}
		// Records of 4 chunks, so that arrays span several files.
		files, err := kerchunktest.FromJSON(refs, 4)
		if err != nil {
			t.Fatal(err)
		}
		for name, content := range files {
			p := filepath.Join(dir, kind+".parq", name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, content, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir, arrays
}

func expected(t *testing.T, dir, kind, array string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "expect", kind, array+".bin"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestKerchunkCat reads every array of every reference set with `zarrfs
// cat` and compares it with what netCDF4-python and h5py read from the
// original files, and the JSON sets with what zarr-python reads through
// fsspec's ReferenceFileSystem.
func TestKerchunkCat(t *testing.T) {
	dir, arrays := kerchunkSets(t)
	for kind, list := range arrays {
		for _, set := range []string{kind + ".v0.json", kind + ".v1.json", kind + ".parq"} {
			refs := filepath.Join(dir, set)
			for _, a := range list {
				r := catArray(t, refs, a)
				if r.err != nil {
					t.Errorf("zarrfs cat %s %s: %v\n%s", set, a, r.err, r.stderr)
					continue
				}
				sameBytes(t, set+" "+a, r.stdout, expected(t, dir, kind, a))
			}
			for _, args := range [][]string{{"ls", refs}, {"tree", refs}, {"info", refs, list[0]}} {
				if out := mustZarrfs(t, args...); len(out) == 0 {
					t.Errorf("zarrfs %s printed nothing", strings.Join(args, " "))
				}
			}
		}
	}
	tree := string(mustZarrfs(t, "tree", filepath.Join(dir, "nc.v1.json")))
	for _, want := range []string{"temp  array  (5, 7, 9)  float32  shuffle,zlib", "sub/", "deep/"} {
		if !strings.Contains(tree, want) {
			t.Errorf("zarrfs tree nc.v1.json lacks %q:\n%s", want, tree)
		}
	}
	t.Run("fsspec", func(t *testing.T) {
		peertest.NeedPythonModules(t, "import fsspec, zarr", "python3-fsspec, python3-zarr")
		for kind, list := range arrays {
			for _, set := range []string{kind + ".v0.json", kind + ".v1.json"} {
				out := filepath.Join(t.TempDir(), "fsspec")
				cmd := exec.Command(peertest.Python, append([]string{pyScript("kerchunk_refs.py"), "fsspec", set, out}, list...)...)
				cmd.Dir = dir // fsspec resolves relative paths against the working directory
				if b, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("fsspec %s: %v\n%s", set, err, b)
				}
				for _, a := range list {
					want, err := os.ReadFile(filepath.Join(out, a+".bin"))
					if err != nil {
						t.Fatal(err)
					}
					sameBytes(t, "fsspec "+set+" "+a, catArray(t, filepath.Join(dir, set), a).stdout, want)
				}
			}
		}
	})
}

// TestKerchunkMount mounts reference sets and reads every array's data
// file, byte for byte what netCDF4-python and h5py read.
func TestKerchunkMount(t *testing.T) {
	dir, arrays := kerchunkSets(t)
	for _, c := range []struct{ kind, set string }{{"nc", "nc.v1.json"}, {"h5", "h5.parq"}, {"nc", "nc.parq"}} {
		m := mountStore(t, filepath.Join(dir, c.set))
		for _, a := range arrays[c.kind] {
			got, err := os.ReadFile(filepath.Join(m.dir, a, "data"))
			if err != nil {
				t.Errorf("%s: %s/data: %v", c.set, a, err)
				continue
			}
			sameBytes(t, c.set+" mounted "+a, got, expected(t, dir, c.kind, a))
		}
		if info, err := os.ReadFile(filepath.Join(m.dir, "info.txt")); err != nil || !strings.Contains(string(info), "Kerchunk reference set") {
			t.Errorf("%s: the root's info.txt does not describe the reference set (%v):\n%s", c.set, err, info)
		}
		if _, err := os.Stat(filepath.Join(m.dir, "dataset.nc")); c.kind == "nc" && err != nil {
			t.Errorf("%s: the root has no dataset.nc: %v", c.set, err)
		}
	}
}

// TestKerchunkRemote reads reference sets over HTTP: relative references
// resolve against the reference file's URL; local paths are refused unless
// --refs-allow-local.
func TestKerchunkRemote(t *testing.T) {
	dir, arrays := kerchunkSets(t)
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	for _, a := range arrays["nc"] {
		r := catArray(t, srv.URL+"/nc.v1.json", a)
		if r.err != nil {
			t.Errorf("cat over HTTP %s: %v\n%s", a, r.err, r.stderr)
			continue
		}
		sameBytes(t, "HTTP nc.v1.json "+a, r.stdout, expected(t, dir, "nc", a))
	}
	// Version 0 names the file by its absolute path: a local file, which
	// a reference set from the network may not read by default.
	for _, set := range []string{"/nc.v0.json", "/h5.parq"} {
		kind := strings.TrimPrefix(set, "/")[:2]
		a := arrays[kind][0]
		r := catArray(t, srv.URL+set, a)
		if r.err == nil || !strings.Contains(string(r.stderr), "--refs-allow-local") {
			t.Errorf("cat %s %s without --refs-allow-local: %v\n%s", set, a, r.err, r.stderr)
		}
		out := mustZarrfs(t, "cat", "--refs-allow-local", srv.URL+set, a)
		sameBytes(t, "HTTP "+set+" "+a+" --refs-allow-local", out, expected(t, dir, kind, a))
	}
	// A Parquet directory under another name is found from its .zmetadata
	// (read anyway), not read as a plain store of missing chunks.
	if err := os.Rename(filepath.Join(dir, "h5.parq"), filepath.Join(dir, "h5refs")); err != nil {
		t.Fatal(err)
	}
	for _, a := range arrays["h5"] {
		out := mustZarrfs(t, "cat", "--refs-allow-local", srv.URL+"/h5refs", a)
		sameBytes(t, "HTTP h5refs "+a, out, expected(t, dir, "h5", a))
	}
	// So is a JSON file under another name, once no Zarr hierarchy is
	// found there.
	if err := os.Rename(filepath.Join(dir, "nc.v1.json"), filepath.Join(dir, "ncrefs")); err != nil {
		t.Fatal(err)
	}
	a := arrays["nc"][len(arrays["nc"])-1]
	sameBytes(t, "HTTP ncrefs "+a, mustZarrfs(t, "cat", srv.URL+"/ncrefs", a), expected(t, dir, "nc", a))
	if r := runZarrfs(t, "ls", srv.URL+"/data.nc"); r.err == nil {
		t.Errorf("zarrfs ls of a NetCDF file over HTTP succeeded:\n%s", r.stdout)
	}
}

// TestKerchunkHostileMount mounts a reference set whose chunks point
// before the start and past the end of their file: reading them fails
// with EIO and a log line; the sibling chunks and arrays read.
func TestKerchunkHostileMount(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "f.bin")
	if err := os.WriteFile(target, []byte("0123456789abcdef"), 0o644); err != nil {
		t.Fatal(err)
	}
	zarray := `"{\"shape\": [4], \"chunks\": [2], \"dtype\": \"|u1\", \"compressor\": null, \"filters\": null, \"fill_value\": 0, \"order\": \"C\", \"zarr_format\": 2}"`
	doc := `{"version": 1, "refs": {
		".zgroup": "{\"zarr_format\": 2}",
		"ok/.zarray": ` + zarray + `, "ok/0": ["f.bin", 0, 2], "ok/1": "base64:AQI=",
		"neg/.zarray": ` + zarray + `, "neg/0": ["f.bin", -4, 2], "neg/1": ["f.bin", 2, 2],
		"past/.zarray": ` + zarray + `, "past/0": ["f.bin", 15, 2],
		"scheme/.zarray": ` + zarray + `, "scheme/0": ["gs://bucket/f.bin", 0, 2]}}`
	refs := filepath.Join(dir, "refs.json")
	if err := os.WriteFile(refs, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	m := mountStore(t, refs)
	got, err := os.ReadFile(filepath.Join(m.dir, "ok", "data"))
	if err != nil || string(got) != "01\x01\x02" {
		t.Errorf("ok/data = %q, %v", got, err)
	}
	for _, a := range []string{"neg", "past", "scheme"} {
		checkErrno(t, filepath.Join(m.dir, a, "data"), int(syscall.EIO), a)
	}
	if _, err := os.Stat(filepath.Join(m.dir, "neg", "info.txt")); err != nil {
		t.Errorf("a broken array's info.txt: %v", err)
	}
	log := m.stderr.String()
	for _, want := range []string{"negative offset -4", "past the end", `"gs"`} {
		if !strings.Contains(log, want) {
			t.Errorf("the log does not say %q:\n%s", want, log)
		}
	}
}

// TestKerchunkS3 reads reference sets stored in S3 (versitygw): a JSON
// set whose relative references resolve to objects beside it, and a
// Parquet directory whose local references need --refs-allow-local.
func TestKerchunkS3(t *testing.T) {
	dir, arrays := kerchunkSets(t)
	srv := startS3(t)
	srv.MakeBucket("refs")
	upload(t, srv, dir, "refs", "k")
	for _, a := range arrays["nc"] {
		out := mustZarrfs(t, "cat", "s3://refs/k/nc.v1.json", a)
		sameBytes(t, "S3 nc.v1.json "+a, out, expected(t, dir, "nc", a))
	}
	a := arrays["h5"][0]
	if r := catArray(t, "s3://refs/k/h5.parq", a); r.err == nil || !strings.Contains(string(r.stderr), "--refs-allow-local") {
		t.Errorf("cat s3://refs/k/h5.parq %s without --refs-allow-local: %v\n%s", a, r.err, r.stderr)
	}
	for _, a := range arrays["h5"] {
		out := mustZarrfs(t, "cat", "--refs-allow-local", "s3://refs/k/h5.parq", a)
		sameBytes(t, "S3 h5.parq "+a, out, expected(t, dir, "h5", a))
	}
}
