package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// The tests of issue 41: the missing values each view names are the ones
// the tool the view is for finds in the store itself. xarray reads
// dataset.nc as it reads the Zarr store with its defaults for the store's
// format (v2: fill_value is the mask; v3: only a _FillValue attribute is);
// GDAL reads data.hdr's NoData as its own Zarr driver reads the array's.
// oracles/integration/fills.py is the oracle.

func runFills(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command(peertest.Python, append([]string{pyScript("fills.py")}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("fills.py %s: %v\n%s", args[0], err, out)
	}
	t.Logf("fills.py %s:\n%s", args[0], out)
}

func needFillTools(t *testing.T) {
	t.Helper()
	peertest.NeedPython(t)
	peertest.NeedPythonModules(t, "import osgeo.gdal, netCDF4, xarray", "python3-gdal, python3-netcdf4, python3-xarray")
}

// TestMountFillValuesV2: a v2 group as xarray lays one out (coordinates
// holding their fill value, a bool, an array without fill_value): its
// dataset.nc is identical to xarray.open_zarr of the store, and GDAL's
// NoData through each data.hdr is its Zarr driver's.
func TestMountFillValuesV2(t *testing.T) {
	needFuse(t)
	needFillTools(t)
	store := filepath.Join(t.TempDir(), "v2.zarr")
	runFills(t, "write-v2", store)
	m := mountStore(t, store)
	runFills(t, "v2", store, m.dir)
	runFills(t, "nodata", store, m.dir, "t", "i", "mv", "b", "nofill")
}

// TestMountFillValuesDraft: the same arrays in the 2022 v3 draft, whose
// fill values are no masks and whose masks are _FillValue (integer, and
// float in xarray's base64 spelling) or missing_value attributes: each
// variable of dataset.nc is xarray's v3 reading of the store, and GDAL's
// NoData through data.hdr is its Zarr driver's (GDAL 3.6 reads this draft).
func TestMountFillValuesDraft(t *testing.T) {
	needFuse(t)
	needFillTools(t)
	store := filepath.Join(t.TempDir(), "draft.zarr")
	runFills(t, "write-draft", store)
	m := mountStore(t, store)
	out := t.TempDir()
	runFills(t, "draft-list", store, m.dir, out)
	runFills(t, "v3", filepath.Join(out, "list.json"))
	runFills(t, "nodata", store, m.dir, "g/t", "g/i", "g/mv", "g/b", "g/nofill")
}

// TestMountFillValuesV3: the example hierarchy and zarrita's v3 arrays (the
// view tests' v3 stores): every variable of every dataset.nc is xarray's
// v3 reading of the store (no fill_value as mask: the example's time,
// lat and lon hold theirs), from the values zarrita reads.
func TestMountFillValuesV3(t *testing.T) {
	needFuse(t)
	needFillTools(t)
	peertest.NeedNode(t)
	example := filepath.Join(t.TempDir(), "example")
	mustZarrfs(t, "example", example)
	zarrita, _ := v3MountArrays(t)
	var groups []v3Group
	for _, store := range []string{example, zarrita} {
		m := mountStore(t, store)
		groups = append(groups, v3Groups(t, store, m.dir)...)
	}
	list := filepath.Join(t.TempDir(), "list.json")
	b, err := json.Marshal(groups)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(list, b, 0o644); err != nil {
		t.Fatal(err)
	}
	runFills(t, "v3", list)
}

// v3Group is a group's dataset.nc and its arrays: name → [zarr.json, the
// elements zarrita reads].
type v3Group struct {
	NC     string               `json:"nc"`
	Arrays map[string][2]string `json:"arrays"`
}

// v3Groups returns the groups of the v3 store (mounted at mnt) that have a
// dataset.nc, with their arrays read by zarrita.
func v3Groups(t *testing.T, store, mnt string) []v3Group {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(store, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "zarr.json" {
			return err
		}
		var doc struct {
			NodeType string `json:"node_type"`
		}
		if b, err := os.ReadFile(p); err == nil && json.Unmarshal(b, &doc) == nil && doc.NodeType == "array" {
			rel, _ := filepath.Rel(store, filepath.Dir(p))
			paths = append(paths, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(paths)
	data, errs := zarritaRead(t, itemsIn(store, paths))
	refs := t.TempDir()
	byGroup := map[string]*v3Group{}
	var order []string
	for i, p := range paths {
		g := path.Dir(p)
		if g == "." {
			g = ""
		}
		nc := filepath.Join(mnt, filepath.FromSlash(g), "dataset.nc")
		if errs[i] != nil {
			continue // a type zarrita cannot read has no NetCDF type either
		}
		if _, err := os.Stat(nc); err != nil {
			continue
		}
		ref := filepath.Join(refs, fmt.Sprintf("%d.bin", i))
		if err := os.WriteFile(ref, data[i], 0o644); err != nil {
			t.Fatal(err)
		}
		if byGroup[g] == nil {
			byGroup[g] = &v3Group{NC: nc, Arrays: map[string][2]string{}}
			order = append(order, g)
		}
		byGroup[g].Arrays[path.Base(p)] = [2]string{filepath.Join(store, filepath.FromSlash(p), "zarr.json"), ref}
	}
	var out []v3Group
	for _, g := range order {
		out = append(out, *byGroup[g])
	}
	return out
}
