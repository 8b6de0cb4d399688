package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// The tests of the foreign-format views (data.hdr, data.nhdr, dataset.nc):
// the tools of each field (GDAL, teem's unu, netCDF-c's ncdump, cdo,
// python-netCDF4, xarray) read a mount in a subprocess, driven by
// oracles/integration/foreign.py, and must see what zarr-python and zarrita read.

// foreignScript is the oracle program of these tests.
func foreignScript() string {
	return pyScript("foreign.py")
}

// needForeignTools skips (or fails, under ZARRFS_REQUIRE_PEERS=1) t unless
// the tools of every field are installed.
func needForeignTools(t *testing.T) {
	t.Helper()
	peertest.NeedPython(t)
	peertest.NeedCommands(t, "teem-apps, netcdf-bin, cdo", "teem-unu", "ncdump", "cdo")
	peertest.NeedPythonModules(t, "import osgeo.gdal, netCDF4, xarray", "python3-gdal, python3-netcdf4, python3-xarray")
}

// runForeign runs foreign.py with args and fails t with its report when it
// finds any difference.
func runForeign(t *testing.T, args ...string) {
	t.Helper()
	cmd := exec.Command(peertest.Python, append([]string{foreignScript()}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("foreign.py %s: %v\n%s", args[0], err, out)
	}
	t.Logf("foreign.py %s:\n%s", args[0], out)
}

// TestMountForeignHeaders opens every array zarr-python and zarrita wrote
// (every dtype, rank 0 to 4, missing chunks, empty arrays) through the
// mount's data.hdr with GDAL and data.nhdr with teem's unu: each must
// return the oracle's values with the shape the array has, and each header
// must appear exactly where its format has the data type.
func TestMountForeignHeaders(t *testing.T) {
	needFuse(t)
	needForeignTools(t)
	v2, v2Arrays, _ := v2MountArrays(t)
	v3, v3Arrays := v3MountArrays(t)
	var b strings.Builder
	for _, s := range []struct {
		store  string
		arrays []mountArray
	}{{v2, v2Arrays}, {v3, v3Arrays}} {
		m := mountStore(t, s.store)
		for _, a := range s.arrays {
			if a.Unsupported != "" || a.File != "data" {
				continue
			}
			shape, _ := json.Marshal(a.Shape)
			fmt.Fprintf(&b, "%s\t%s\t%s\t%s\n", filepath.Join(m.dir, filepath.FromSlash(a.Path)), a.Ref, a.DType, shape)
		}
	}
	list := filepath.Join(t.TempDir(), "list.txt")
	if err := os.WriteFile(list, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	runForeign(t, "rasters", list)
}

// TestMountNetCDF reads the dataset.nc of every group of a store that
// xarray and zarr-python wrote (every dtype, attributes of every JSON type,
// shared and conflicting dimension names, missing chunks) with netCDF4,
// xarray, ncdump and cdo, and checks GDAL's georeferencing of lat/lon
// grids; `zarrfs export` must write the bytes the mount shows.
func TestMountNetCDF(t *testing.T) {
	needFuse(t)
	needForeignTools(t)
	store := filepath.Join(t.TempDir(), "foreign.zarr")
	runForeign(t, "write-netcdf", store)
	m := mountStore(t, store)
	runForeign(t, "netcdf", store, m.dir)
	for _, c := range []struct{ format, path, file string }{
		{"nc", "", "dataset.nc"},
		{"nc", "xr", "dataset.nc"},
		{"nc", "dtypes", "dataset.nc"},
		{"hdr", "geo/north_up/field", "data.hdr"},
		{"nhdr", "dtypes/a_le_f4", "data.nhdr"},
		{"npy", "xr/temperature", "data.npy"},
	} {
		got := mustZarrfs(t, "export", "--format", c.format, store, c.path)
		want, err := os.ReadFile(filepath.Join(m.dir, filepath.FromSlash(c.path), c.file))
		if err != nil {
			t.Fatal(err)
		}
		sameBytes(t, "zarrfs export --format "+c.format+" "+c.path, got, want)
	}
	r := runZarrfs(t, "export", "--format", "nc", store, "no_netcdf")
	if r.err == nil || !strings.Contains(string(r.stderr), "no dataset.nc") {
		t.Errorf("export of a group without NetCDF types: %v, %s", r.err, r.stderr)
	}
}

// TestMountNetCDFOver4GiB reads, through the mount, the dataset.nc of
// groups of arrays over 4 GiB stored sparsely (all chunks missing but a
// few): two arrays over 4 GiB need CDF-5; one over 4 GiB and one over
// 2 GiB, CDF-2; one over 4 GiB laid out last, CDF-1. netCDF4 reads
// values at both ends of every variable, so every offset must be right;
// the mount decodes only the chunks under them.
func TestMountNetCDFOver4GiB(t *testing.T) {
	needFuse(t)
	needForeignTools(t)
	store := filepath.Join(t.TempDir(), "big.zarr")
	runForeign(t, "write-big", store)
	m := mountStore(t, store)
	runForeign(t, "big", m.dir)
}
