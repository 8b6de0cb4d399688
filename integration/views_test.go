package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// The tests of issue 44: what real programs make of the views.

// northUpProgram writes, with xarray, a v2 group of a field over latitude
// running south to north (as ERA5-like stores and the example's
// temperature do) and over latitude running north to south; with a mount
// given, it reads each preview.png with PIL and checks that the top row
// shows the northernmost latitude (the field is the latitude: the top row
// is the yellow end of viridis, the bottom row the dark blue).
const northUpProgram = `
import sys
import numpy as np, xarray as xr
store = sys.argv[1]
if len(sys.argv) == 2:
    for name, lat in (("south_north", np.linspace(-80, 80, 40)), ("north_south", np.linspace(80, -80, 40))):
        lon = np.arange(0, 360, 5.0)
        field = np.repeat(lat[:, None], len(lon), axis=1).astype("f4")
        ds = xr.Dataset({"t": (("lat", "lon"), field)}, coords={"lat": lat, "lon": lon})
        ds.lat.attrs.update(units="degrees_north", standard_name="latitude")
        ds.to_zarr(store, group=name, mode="a")
    sys.exit(0)
from PIL import Image
mount = sys.argv[2]
bad = 0
for name in ("south_north", "north_south"):
    img = Image.open("%s/%s/t/preview.png" % (mount, name)).convert("RGB")
    w, h = img.size
    top, bottom = img.getpixel((w // 2, 0)), img.getpixel((w // 2, h - 1))
    # viridis: the highest value is yellow (R and G high, B low), the lowest dark blue-purple.
    ok = top[1] > 200 and top[2] < 100 and bottom[1] < 50
    print("%s: %dx%d, top %s, bottom %s: %s" % (name, w, h, top, bottom, "north up" if ok else "NOT north up"))
    bad += not ok
sys.exit(1 if bad else 0)
`

// TestMountPreviewNorthUp: PIL sees preview.png north up whether the
// latitude runs south to north or north to south.
func TestMountPreviewNorthUp(t *testing.T) {
	needFuse(t)
	peertest.NeedPythonModules(t, "import xarray, PIL", "python3-xarray, python3-pil")
	store := filepath.Join(t.TempDir(), "lat.zarr")
	peertest.RunPython(t, northUpProgram, store)
	m := mountStore(t, store)
	out := peertest.RunPython(t, northUpProgram, store, m.dir)
	t.Logf("%s", strings.TrimSpace(string(out)))
}

// classicProgram writes, with xarray, a group as real stores have them:
// an int64 time coordinate (hours since an epoch), rioxarray's int64
// spatial_ref scalar, uint8 and uint16 fields; with a mount given, it
// checks that dataset.nc is a classic (CDF-1) file, that GDAL opens each
// field through its netCDF driver with the values zarr holds, that ncdump
// reads it, and that xarray reads it as it reads the store.
const classicProgram = `
import subprocess, sys
import numpy as np, xarray as xr
store = sys.argv[1]
if len(sys.argv) == 2:
    time = np.arange(np.datetime64("2026-01-01T00"), np.datetime64("2026-01-02T00"), np.timedelta64(1, "h"))
    lat, lon = np.linspace(50, 40, 11), np.linspace(0, 20, 21)
    u8 = (np.arange(24 * 11 * 21) % 250).astype("u1").reshape(24, 11, 21)
    u16 = (np.arange(24 * 11 * 21) * 7 % 65000).astype("u2").reshape(24, 11, 21)
    ds = xr.Dataset({"cloud": (("time", "lat", "lon"), u8), "count": (("time", "lat", "lon"), u16),
                     "spatial_ref": ((), np.int64(0), {"crs_wkt": "GEOGCS[\"WGS 84\"]"})},
                    coords={"time": time, "lat": lat, "lon": lon})
    ds.time.encoding.update(units="hours since 2026-01-01", dtype="int64")
    ds.to_zarr(store, mode="w")
    sys.exit(0)
mount = sys.argv[2]
nc = mount + "/dataset.nc"
bad = []
kind = subprocess.run(["ncdump", "-k", nc], capture_output=True, text=True, check=True).stdout.strip()
print("ncdump -k:", kind)
if kind != "classic":
    bad.append("ncdump -k says %s, want classic" % kind)
subprocess.run(["ncdump", "-h", nc], capture_output=True, check=True)
from osgeo import gdal
gdal.UseExceptions()
want = xr.open_zarr(store).load()
for name in ("cloud", "count"):
    d = gdal.Open('NETCDF:"%s":%s' % (nc, name))
    a = d.ReadAsArray()
    z = want[name].values
    print("GDAL %s: %s %s, %d bands" % (name, gdal.GetDataTypeName(d.GetRasterBand(1).DataType), a.shape, d.RasterCount))
    if a.shape != z.shape or not np.array_equal(a.astype("i8"), z.astype("i8")):
        bad.append("GDAL reads %s otherwise than zarr" % name)
got = xr.open_dataset(nc).load()
try:
    xr.testing.assert_identical(got, want)
except AssertionError as e:
    bad.append("xarray: %s" % e)
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
`

// TestMountNetCDFClassic: a group with xarray's int64 times, rioxarray's
// int64 spatial_ref and unsigned fields is a CDF-1 dataset.nc (issue 44:
// it was CDF-5, which Debian 12's GDAL 3.6 and so QGIS cannot open), and
// GDAL, ncdump and xarray read it.
func TestMountNetCDFClassic(t *testing.T) {
	needFuse(t)
	needForeignTools(t)
	store := filepath.Join(t.TempDir(), "classic.zarr")
	peertest.RunPython(t, classicProgram, store)
	m := mountStore(t, store)
	out := peertest.RunPython(t, classicProgram, store, m.dir)
	t.Logf("%s", strings.TrimSpace(string(out)))
}

// bandsProgram reads MOUNT/temperature/data (the example's 24-step time
// stack) with GDAL: 24 bands, the first gray (a stack opens as one band,
// not an RGB mix), each named with the array's path and its time as
// xarray decodes the time coordinate (units and calendar from the store's
// zarr.json), and MOUNT/image/data's one band named with its path.
const bandsProgram = `
import json, sys
import numpy as np, pandas as pd
from osgeo import gdal
from xarray.coding.times import decode_cf_datetime
store, mount = sys.argv[1], sys.argv[2]
gdal.UseExceptions()
bad = []
attrs = json.load(open(store + "/time/zarr.json"))["attributes"]
times = decode_cf_datetime(np.load(mount + "/time/data.npy"), attrs["units"], attrs.get("calendar"))
ds = gdal.Open(mount + "/temperature/data")
print("temperature: %d bands, band 1 %s, %r" % (ds.RasterCount, gdal.GetColorInterpretationName(ds.GetRasterBand(1).GetColorInterpretation()), ds.GetRasterBand(1).GetDescription()))
if ds.RasterCount != len(times):
    bad.append("%d bands for %d times" % (ds.RasterCount, len(times)))
if ds.GetRasterBand(1).GetColorInterpretation() != gdal.GCI_GrayIndex:
    bad.append("band 1 is not gray")
for i, t in enumerate(times):
    want = "/temperature time " + pd.Timestamp(t).strftime("%Y-%m-%d %H:%M")
    got = ds.GetRasterBand(i + 1).GetDescription()
    if got != want:
        bad.append("band %d: %r, want %r" % (i + 1, got, want))
img = gdal.Open(mount + "/image/data")
if img.GetRasterBand(1).GetDescription() != "/image":
    bad.append("image band 1: %r" % img.GetRasterBand(1).GetDescription())
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
`

// TestMountENVIBands: what QGIS shows of data.hdr through GDAL (issue 44
// item 6): band names with the array's path and decoded CF times, and a
// stack opening as its first band.
func TestMountENVIBands(t *testing.T) {
	needFuse(t)
	peertest.NeedPythonModules(t, "import osgeo.gdal, xarray, pandas", "python3-gdal, python3-xarray")
	store := filepath.Join(t.TempDir(), "example")
	mustZarrfs(t, "example", store)
	m := mountStore(t, store)
	out := peertest.RunPython(t, bandsProgram, store, m.dir)
	t.Logf("%s", strings.TrimSpace(string(out)))
}

// projectedProgram writes, with xarray, two projected rasters (UTM zone
// 33N, x and y in metres at 30 m): "wkt", as rioxarray writes them (a
// spatial_ref variable with crs_wkt named by the field's grid_mapping),
// and "epsg", with only proj:epsg on the group (GeoZarr). With a mount
// given, GDAL opens each MOUNT/GROUP/field/data through data.hdr (and
// "spatial", with proj:code and a spatial:transform and no coordinate
// arrays, as the Zarr spatial convention writes them): its
// geotransform must place pixel centres on the coordinates and its CRS
// must be EPSG:32633.
const projectedProgram = `
import sys
import numpy as np, xarray as xr
from osgeo import gdal, osr
store = sys.argv[1]
utm = osr.SpatialReference()
utm.ImportFromEPSG(32633)
x = 500000 + 30.0 * np.arange(40)
y = 4000000 - 30.0 * np.arange(25)
if len(sys.argv) == 2:
    field = np.arange(25 * 40, dtype="f4").reshape(25, 40)
    for group in ("wkt", "epsg"):
        ds = xr.Dataset({"field": (("y", "x"), field)}, coords={"x": x, "y": y})
        ds.x.attrs.update(standard_name="projection_x_coordinate", units="m", axis="X")
        ds.y.attrs.update(standard_name="projection_y_coordinate", units="m", axis="Y")
        if group == "wkt":
            ds["spatial_ref"] = ((), np.int64(0), {"crs_wkt": utm.ExportToWkt(), "spatial_ref": utm.ExportToWkt()})
            ds.field.attrs["grid_mapping"] = "spatial_ref"
        else:
            ds.attrs["proj:epsg"] = 32633
        ds.to_zarr(store, group=group, mode="a")
    # The spatial: and proj: conventions: a transform of pixel corners, no
    # coordinate arrays.
    ds = xr.Dataset({"field": (("y", "x"), field, {"proj:code": "EPSG:32633", "spatial:dimensions": ["y", "x"],
                                                 "spatial:transform": [30.0, 0.0, 499985.0, 0.0, -30.0, 4000015.0]})})
    ds.to_zarr(store, group="spatial", mode="a")
    sys.exit(0)
gdal.UseExceptions()
mount = sys.argv[2]
bad = []
for group in ("wkt", "epsg", "spatial"):
    d = gdal.Open("%s/%s/field/data" % (mount, group))
    gt = d.GetGeoTransform()
    srs = d.GetSpatialRef()
    print("%s: geotransform %s, CRS %s" % (group, gt, srs.GetName() if srs else None))
    want = (x[0] - 15, 30.0, 0.0, y[0] + 15, 0.0, -30.0)
    if any(abs(a - b) > 1e-6 for a, b in zip(gt, want)):
        bad.append("%s: geotransform %s, want %s" % (group, gt, want))
    if srs is None or not srs.IsSame(utm, ["IGNORE_DATA_AXIS_TO_SRS_AXIS_MAPPING=YES"]) and srs.GetAuthorityCode(None) != "32633":
        bad.append("%s: CRS %s" % (group, srs.ExportToWkt() if srs else None))
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
`

// TestMountProjectedENVI: projected rasters (issue 44 item 5) get a map
// info and a coordinate system string in data.hdr, which GDAL reads as
// their geotransform and CRS.
func TestMountProjectedENVI(t *testing.T) {
	needFuse(t)
	peertest.NeedPythonModules(t, "import osgeo.gdal, xarray", "python3-gdal, python3-xarray")
	store := filepath.Join(t.TempDir(), "utm.zarr")
	peertest.RunPython(t, projectedProgram, store)
	m := mountStore(t, store)
	out := peertest.RunPython(t, projectedProgram, store, m.dir)
	t.Logf("%s", strings.TrimSpace(string(out)))
}

// TestMountMessages (issue 44 item 7): a foreground mount says where it is
// mounted and how to stop it; a second mount on the same folder is
// refused; unmounting a busy mount names fuser and the lazy unmount.
func TestMountMessages(t *testing.T) {
	needFuse(t)
	store := filepath.Join(t.TempDir(), "example")
	mustZarrfs(t, "example", store)
	m := mountStore(t, store)
	if !strings.Contains(m.stderr.String(), "mounted at "+m.dir) || !strings.Contains(m.stderr.String(), "zarrfs unmount") {
		t.Errorf("the foreground mount said %q", m.stderr.String())
	}
	r := runZarrfs(t, "mount", store, m.dir)
	if r.err == nil || !strings.Contains(string(r.stderr), "already a mount point (fuse.zarrfs)") {
		t.Errorf("a second mount on %s: %v, %q", m.dir, r.err, r.stderr)
	}
	busy := exec.Command("sleep", "30")
	busy.Dir = filepath.Join(m.dir, "temperature")
	if err := busy.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { busy.Process.Kill(); busy.Wait() }()
	r = runZarrfs(t, "unmount", m.dir)
	if r.err == nil || !strings.Contains(string(r.stderr), "fuser -vm") || !strings.Contains(string(r.stderr), "--lazy") {
		t.Errorf("unmount of a busy mount: %v, %q", r.err, r.stderr)
	}
}

// TestMountDiskUsage (issue 44 item 8): du counts each array's decoded
// bytes once, in data: data.npy, dataset.nc and preview.png report no
// blocks (as /proc does), everything else its size in 512-byte blocks.
func TestMountDiskUsage(t *testing.T) {
	needFuse(t)
	store := filepath.Join(t.TempDir(), "example")
	mustZarrfs(t, "example", store)
	m := mountStore(t, store)
	var want int64
	derived := 0
	err := filepath.WalkDir(m.dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err != nil {
			return err
		}
		switch d.Name() {
		case "data.npy", "dataset.nc", "preview.png":
			derived++
			if st.Blocks != 0 {
				t.Errorf("%s: %d blocks, want 0", p, st.Blocks)
			}
		default:
			if st.Blocks != (st.Size+511)/512 {
				t.Errorf("%s: %d blocks for %d bytes", p, st.Blocks, st.Size)
			}
		}
		want += st.Blocks
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out := strings.Fields(string(run(t, "du", "-s", "-B512", m.dir)))
	if len(out) == 0 || out[0] != strconv.FormatInt(want, 10) {
		t.Errorf("du -s -B512: %v, want %d blocks", out, want)
	}
	if derived == 0 {
		t.Error("no derived views found")
	}
	t.Logf("du: %d blocks of 512 bytes; %d derived views count none", want, derived)
}
