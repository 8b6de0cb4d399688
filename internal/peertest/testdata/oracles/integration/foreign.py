"""foreign.py COMMAND ARGS — the oracles of zarrfs's foreign-format views
(data.hdr, data.nhdr, dataset.nc): the tools of each field read a mount and
their values are compared with what zarr-python (or zarrita) read.

  foreign.py rasters LIST
      LIST: one line per array, "MOUNT/PATH<TAB>REF<TAB>DTYPE<TAB>SHAPE(JSON)",
      REF holding the array's elements as zarr-python or zarrita read them
      (C order, little-endian). Where MOUNT/PATH/data.hdr exists, GDAL opens
      MOUNT/PATH/data through it, and MOUNT/PATH/data.npy through data.npy.hdr
      (the same raster); where data.nhdr exists, teem's unu reads it
      and writes a raw little-endian NRRD. Both must give REF's bytes, with
      the shape the header promises. Whether each header exists must follow
      the formats' types (ENVI: no int8 or float16; NRRD: no float16 or
      complex; neither: strings, structs, datetimes, empty arrays). GDAL
      3.6's ENVI driver reads no int64/uint64 and no file under 2 bytes:
      those are listed, not failed.
  foreign.py write-netcdf STORE
      Writes the v2 groups the NetCDF tests read: "xr" (an xarray Dataset),
      "dtypes" (zarr-python arrays of every dtype, with attributes of every
      JSON type, shared and conflicting dimension names, missing chunks),
      "geo" (lat/lon grids for ENVI's map info) and "nested/inner".
  foreign.py netcdf STORE MOUNT
      Reads every group's dataset.nc with netCDF4 and compares it with
      zarr-python; reads MOUNT/xr/dataset.nc with xarray and compares it with
      xarray.open_zarr; runs ncdump -h and cdo sinfon on each; checks GDAL's
      geotransform of the geo arrays against their coordinates.
  foreign.py write-big STORE
      Writes groups of arrays over 2 and 4 GiB with all chunks missing but two.
  foreign.py big MOUNT
      Reads them through dataset.nc with netCDF4 (CDF-5, CDF-2 and CDF-1 cases).

Every failure is printed; the exit status is 1 when there is any.
This is an oracle for zarrfs's tests: it must not depend on zarrfs.
"""
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


ENVI_KINDS = {"b1", "u1", "i2", "i4", "i8", "u2", "u4", "u8", "f4", "f8", "c8", "c16"}
NRRD_KINDS = {"b1", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f4", "f8"}


def kind(dtype):
    if isinstance(dtype, str) and dtype.startswith("["):
        return "V"
    dt = np.dtype(dtype)
    if dt.fields is not None:
        return "V"
    return dt.kind + str(dt.itemsize)


def gdal_read(path):
    from osgeo import gdal
    gdal.UseExceptions()
    ds = gdal.Open(path)
    a = ds.ReadAsArray()
    return ds, a


def unu_read(nhdr, dtype, tmp):
    out = os.path.join(tmp, "out.nrrd")
    subprocess.run(["teem-unu", "save", "-i", nhdr, "-f", "nrrd", "-e", "raw", "-en", "little", "-o", out],
                   check=True, capture_output=True)
    with open(out, "rb") as f:
        raw = f.read()
    head, _, body = raw.partition(b"\n\n")
    fields = dict(line.split(": ", 1) for line in head.decode().split("\n")[1:] if ": " in line)
    return fields, body


def rasters(listfile):
    tmp = tempfile.mkdtemp()
    n_envi = n_nrrd = 0
    gdal_limits = []
    for line in open(listfile, encoding="utf-8").read().split("\n"):
        if not line:
            continue
        d, ref, dtype, shape = line.split("\t")
        # Without a dtype and shape (the corpus), only the values are
        # compared.
        shape = json.loads(shape) if shape else None
        with open(ref, "rb") as f:
            want = f.read()
        k = kind(dtype) if dtype else ""
        has_hdr = os.path.exists(os.path.join(d, "data.hdr"))
        has_nhdr = os.path.exists(os.path.join(d, "data.nhdr"))
        if shape is not None:
            empty = any(n == 0 for n in shape)
            if has_hdr != (k in ENVI_KINDS and not empty):
                fail("%s (%s %s): data.hdr present: %s" % (d, dtype, shape, has_hdr))
            if has_nhdr != (k in NRRD_KINDS and not empty):
                fail("%s (%s %s): data.nhdr present: %s" % (d, dtype, shape, has_nhdr))
        if has_hdr:
            n_envi += 1
            try:
                _, a = gdal_read(os.path.join(d, "data"))
                rank = len(shape) if shape is not None else 0
                bands = int(np.prod(shape[:-2])) if rank >= 3 else 1
                lines = shape[-2] if rank >= 2 else 1
                samples = shape[-1] if rank >= 1 else 1
                got_shape = a.shape if a.ndim == 3 else (1,) + a.shape if a.ndim == 2 else (1, 1) + a.shape
                if shape is not None and got_shape != (bands, lines, samples):
                    fail("%s: GDAL shape %s, want %s" % (d, got_shape, (bands, lines, samples)))
                elif a.astype(a.dtype.newbyteorder("<")).tobytes() != want:
                    fail("%s: GDAL values differ from zarr's (%s)" % (d, dtype))
                # data.npy through data.npy.hdr (GDAL looks for FILE.hdr
                # before data.hdr): the same raster, not the NumPy header
                # read as pixels. (A folder of exported headers, as the
                # corpus test writes, has no data.npy.)
                if not os.path.exists(os.path.join(d, "data.npy")):
                    pass
                elif not os.path.exists(os.path.join(d, "data.npy.hdr")):
                    fail("%s: data.hdr without data.npy.hdr" % d)
                else:
                    ds_npy, b = gdal_read(os.path.join(d, "data.npy"))
                    if ds_npy.GetFileList()[-1] != os.path.join(d, "data.npy.hdr"):
                        fail("%s: GDAL pairs data.npy with %s" % (d, ds_npy.GetFileList()))
                    if b.shape != a.shape or b.tobytes() != a.tobytes():
                        fail("%s: GDAL reads data.npy otherwise than data (%s %s)" % (d, b.shape, a.shape))
            except Exception as e:
                # GDAL's ENVI driver (3.6) knows no 64-bit integer types
                # (ENVI's 14 and 15), and opens no file under 2 bytes.
                if k in ("i8", "u8", "") and "data_type" in str(e) or len(want) < 2:
                    gdal_limits.append("%s (%s %s)" % (d, dtype, shape))
                else:
                    fail("%s: GDAL: %s" % (d, e))
        if has_nhdr:
            n_nrrd += 1
            try:
                fields, body = unu_read(os.path.join(d, "data.nhdr"), dtype, tmp)
                sizes = [int(x) for x in fields["sizes"].split()]
                if shape is not None and sizes != (list(reversed(shape)) or [1]):
                    fail("%s: unu sizes %s for shape %s" % (d, sizes, shape))
                if body != want:
                    fail("%s: unu values differ from zarr's (%s)" % (d, dtype))
            except Exception as e:
                fail("%s: unu: %s" % (d, e))
    print("rasters: %d data.hdr read by GDAL, %d data.nhdr by unu; GDAL cannot read %d:" % (
        n_envi - len(gdal_limits), n_nrrd, len(gdal_limits)))
    for x in gdal_limits:
        print("  " + x)


# ---- NetCDF ----

ATTRS = {
    "string": "text é ünïcode",
    "empty": "",
    "int": 42,
    "negative": -7,
    "big": 2**40,
    "float": 2.5,
    "nan": float("nan"),
    "inf": float("inf"),
    "true": True,
    "false": False,
    "null": None,
    "ints": [1, 2, 3],
    "floats": [1.5, float("nan"), -2],
    "bools": [True, False],
    "strings": ["a", "b"],
    "mixed": [1, "a"],
    "emptylist": [],
    "object": {"a": 1, "b": [True, None]},
}

DTYPES = ["|b1", "|i1", "|u1", "<i2", ">i2", "<u2", "<i4", ">u4", "<i8", ">u8",
          "<f2", "<f4", ">f4", "<f8", ">f8", "<c8", "|S5", "<U3", "<M8[ns]", "<m8[s]"]


def write_netcdf(store):
    import xarray as xr
    import zarr
    root = zarr.open_group(zarr.DirectoryStore(store), mode="w")
    root.attrs.update({"title": "foreign formats", "version": 3, "nan": float("nan")})
    rng = np.random.default_rng(28)

    # "xr": what xarray writes.
    lat = np.arange(40.0, 30.0, -0.5)
    lon = np.arange(-10.0, 5.0, 0.75)
    time = np.array(["2020-01-01", "2020-01-02", "2020-01-05"], dtype="datetime64[ns]")
    temp = rng.normal(280, 5, (3, lat.size, lon.size)).astype("f4")
    temp[0, 0, 0] = np.nan
    ds = xr.Dataset(
        {"temperature": (("time", "lat", "lon"), temp, {"units": "K", "long_name": "air temperature"}),
         "count": (("lat", "lon"), rng.integers(0, 1000, (lat.size, lon.size)).astype("i4")),
         "mask": (("lat", "lon"), rng.integers(0, 2, (lat.size, lon.size)).astype(bool)),
         "elevation": (("lat", "lon"), rng.normal(0, 100, (lat.size, lon.size)).astype("f8"),
                       {"scale_note": [1, 2, 3], "valid_max": 9000.5}),
         "rain": (("station",), np.array([1.5, 0.0, 7.25], dtype="f4")),
         "packed": (("lat", "lon"), np.round(rng.normal(10, 3, (lat.size, lon.size)), 1)),
         "duration": (("time",), np.array([1, 2, 36], dtype="timedelta64[h]").astype("timedelta64[ns]"))},
        coords={"time": time, "lat": ("lat", lat, {"units": "degrees_north", "standard_name": "latitude"}),
                "lon": ("lon", lon, {"units": "degrees_east", "standard_name": "longitude"}),
                "height": ((), 2.0, {"units": "m"}),
                "station": ("station", np.array(["Zürich", "Oslo", "東京"]))},
        attrs={"Conventions": "CF-1.8", "history": "written by foreign.py", "answer": 42, "pi": 3.14159})
    ds.to_zarr(store, group="xr", mode="w", consolidated=False, encoding={"temperature": {"chunks": (1, 10, 10)},
                                                                          "packed": {"dtype": "int16", "scale_factor": 0.1, "_FillValue": -9999}})

    # "dtypes": one array per dtype, rank 1 to 4, with dimension names
    # shared, unnamed and conflicting, and missing chunks.
    g = root.create_group("dtypes")
    g.attrs.update(ATTRS)
    shapes = [(7,), (5, 6), (3, 4, 5), (2, 3, 4, 5)]
    names = [["x"], ["y", "x"], ["t", "y", "x"], ["s", "t", "y", "x"]]
    for i, dt in enumerate(DTYPES):
        rank = i % 4
        shape = shapes[rank]
        dims = names[rank]
        chunks = tuple(max(1, n // 2) for n in shape)
        fill = {"|b1": False, "|S5": b"", "<U3": "", "<M8[ns]": "NaT", "<m8[s]": "NaT"}.get(dt, 3)
        if dt in ("<f4", ">f8"):
            fill = float("nan")
        if dt == "<i4":
            fill = None
        name = "a_" + dt.replace("<", "le_").replace(">", "be_").replace("|", "").replace("[", "_").replace("]", "")
        z = g.create_dataset(name, shape=shape, chunks=chunks, dtype=dt, fill_value=fill)
        n = int(np.prod(shape))
        k = np.dtype(dt).kind
        if k == "b":
            v = rng.integers(0, 2, n).astype(bool)
        elif k in "iu":
            info = np.iinfo(np.dtype(dt))
            v = rng.integers(max(info.min, -1000), min(info.max, 1000), n, endpoint=True)
        elif k == "f":
            v = rng.normal(0, 1000, n)
        elif k == "c":
            v = rng.normal(0, 1, n) + 1j * rng.normal(0, 1, n)
        elif k == "S":
            v = np.array([b"ab", b"cdefg", b""] * n)[:n]
        elif k == "U":
            v = np.array(["ab", "ü", ""] * n)[:n]
        else:
            v = np.arange(n)
        v = v.astype(dt).reshape(shape)
        # Write all but the first chunk: it reads as the fill value.
        sel = tuple(slice(c, None) if j == 0 else slice(None) for j, c in enumerate(chunks))
        z[sel] = v[sel]
        attrs = {"_ARRAY_DIMENSIONS": dims, "dtype_name": dt}
        if i == 1:
            attrs = {"no": "dimension names"}
        if i == 5:
            # x and y are already used with lengths 7 and 5 (conflicts).
            attrs["_ARRAY_DIMENSIONS"] = ["x", "y"]
        z.attrs.update(attrs)
    c = g.create_dataset("conflict", shape=(9,), chunks=(4,), dtype="<f8", fill_value=-1)
    c[:5] = np.arange(5)
    c.attrs["_ARRAY_DIMENSIONS"] = ["x"]
    c.attrs.update(ATTRS)
    e = g.create_dataset("empty", shape=(0, 3), chunks=(1, 3), dtype="<f4")

    # "geo": lat/lon grids, north-up and south-up.
    geo = root.create_group("geo")
    for name, lats in (("north_up", np.linspace(60, 50, 11)), ("south_up", np.linspace(-30, -20, 6))):
        sub = geo.create_group(name)
        la = sub.create_dataset("lat", data=lats, chunks=(4,))
        la.attrs.update({"_ARRAY_DIMENSIONS": ["lat"], "units": "degrees_north"})
        lo = sub.create_dataset("lon", data=np.linspace(5, 12, 15), chunks=(4,))
        lo.attrs.update({"_ARRAY_DIMENSIONS": ["lon"], "units": "degrees_east"})
        band = sub.create_dataset("band", data=np.array([400.0, 500.0, 600.5]))
        band.attrs.update({"_ARRAY_DIMENSIONS": ["band"]})
        f = sub.create_dataset("field", data=rng.normal(0, 1, (3, lats.size, 15)).astype("f4"), chunks=(1, 4, 4),
                               fill_value=-9999)
        f.attrs.update({"_ARRAY_DIMENSIONS": ["band", "lat", "lon"]})

    # A group in a group, and a group whose arrays NetCDF lacks.
    inner = root.create_group("nested").create_group("inner")
    inner.create_dataset("v", data=np.arange(10, dtype="<i2"))
    nc_less = root.create_group("no_netcdf")
    nc_less.create_dataset("z", data=np.ones(3, dtype="<c16"))
    root.create_dataset("top", data=np.arange(4, dtype="<f8"))


def nc_value(v):
    """An attribute value as zarrfs's dataset.nc must hold it, read by netCDF4."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (int, float, str)):
        return v
    if isinstance(v, list) and v and all(isinstance(x, bool) for x in v):
        return [int(x) for x in v]
    if isinstance(v, list) and v and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
        return v
    return json.dumps(v, separators=(",", ":"))


def same_value(got, want):
    if isinstance(want, str):
        return got == want
    got = np.atleast_1d(np.asarray(got)).tolist()
    want = np.atleast_1d(np.asarray(want, dtype=float)).tolist()
    return len(got) == len(want) and all(
        (isinstance(a, float) and math.isnan(a) and math.isnan(b)) or a == b for a, b in zip(got, want))


def check_attrs(where, got, want, skip=("_ARRAY_DIMENSIONS",)):
    want = {k: nc_value(v) for k, v in want.items() if v is not None and k not in skip}
    for k, v in want.items():
        if k not in got:
            fail("%s: attribute %s missing" % (where, k))
        elif not same_value(got[k], v):
            fail("%s: attribute %s = %r, want %r" % (where, k, got[k], v))


def nc_groups(store):
    import zarr
    root = zarr.open_group(zarr.DirectoryStore(store), mode="r")
    out = []

    def walk(g, path):
        out.append((path, g))
        for name, sub in g.groups():
            walk(sub, (path + "/" + name).lstrip("/"))
    walk(root, "")
    return out


NC_KINDS = {"b1", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f4", "f8"}


def nc_type_ok(z):
    k = kind(z.dtype)
    return (k in NC_KINDS or z.dtype.kind in "SUMm") and all(n > 0 for n in z.shape)


def needs_cdf5(z):
    """Whether a group holding z needs CDF-5 (issue 44): uint64 always;
    int64, datetimes and timedeltas unless they have at most 65,536
    elements whose values (and fill value) are exact as doubles (then
    NC_INT or NC_DOUBLE); uint8/16/32 never (the signed type of their size
    with _Unsigned = "true")."""
    if kind(z.dtype) == "u8":
        return True
    if kind(z.dtype) != "i8" and z.dtype.kind not in "Mm":
        return False
    if z.size > 65536:
        return True
    vals = np.asarray(z[...]).view("<i8").ravel().tolist()
    if z.fill_value is not None:
        vals.append(int(np.asarray(z.fill_value, dtype=z.dtype).view("<i8")))
    return any(abs(v) > 2**53 for v in vals)


def netcdf(store, mount):
    import netCDF4
    n_vars = 0
    for path, g in nc_groups(store):
        arrays = [(name, z) for name, z in g.arrays()]
        nc = os.path.join(mount, path, "dataset.nc")
        want_nc = [name for name, z in arrays if nc_type_ok(z)]
        if not want_nc:
            if os.path.exists(nc):
                fail("%s: dataset.nc present though no array has a NetCDF type" % path)
            continue
        left = [name for name, z in arrays if not nc_type_ok(z)]
        info = open(os.path.join(mount, path, "info.txt"), encoding="utf-8").read()
        for name in left:
            if "\n  %s: " % name not in info:
                fail("%s: info.txt does not name %s as left out of dataset.nc" % (path, name))
        for tool in (["ncdump", "-h", nc], ["cdo", "-s", "sinfon", nc]):
            r = subprocess.run(tool, capture_output=True, text=True)
            if r.returncode != 0:
                fail("%s: %s: %s" % (path, " ".join(tool[:2]), r.stderr.strip()))
        ds = netCDF4.Dataset(nc)
        ds.set_auto_maskandscale(False)
        ds.set_auto_chartostring(False)
        need5 = any(needs_cdf5(z) for name, z in arrays if nc_type_ok(z))
        want_model = "NETCDF3_64BIT_DATA" if need5 else "NETCDF3_CLASSIC"
        if ds.data_model != want_model:
            fail("%s: data model %s, want %s" % (path, ds.data_model, want_model))
        if sorted(ds.variables) != sorted(want_nc):
            fail("%s: variables %s, want %s" % (path, sorted(ds.variables), sorted(want_nc)))
        check_attrs(path + " (global)", {k: ds.getncattr(k) for k in ds.ncattrs()}, dict(g.attrs), skip=())
        dims_seen = {}
        for name, z in arrays:
            if name not in ds.variables:
                continue
            n_vars += 1
            v = ds.variables[name]
            want = z[...]
            if z.fill_value is None:
                a = np.zeros(z.shape, dtype=z.dtype)
                z.get_basic_selection(Ellipsis, out=a)
                want = a
            got = v[...]
            if z.dtype.kind == "S":
                want = want.view("S1").reshape(z.shape + (z.dtype.itemsize,))
            elif z.dtype.kind == "U":
                # UTF-8 in the elements' bytes, NUL-padded.
                n = z.dtype.itemsize
                utf8 = np.array([s.encode() for s in want.ravel()], dtype="S%d" % n)
                want = utf8.view("S1").reshape(z.shape + (n,))
            elif z.dtype.kind in "Mm":
                want = want.view("<i8")
            elif z.dtype.kind == "b":
                want = want.view("i1")
            if got.shape != want.shape or got.tobytes() != want.astype(want.dtype.newbyteorder("=")).tobytes() \
                    and not np.array_equal(got, want, equal_nan=want.dtype.kind == "f"):
                fail("%s/%s: values differ (%s)" % (path, name, z.dtype))
            # Dimensions: as named; unnamed ones NAME_dimI; a name used
            # with another length first gets NAME_LENGTH.
            dims = z.attrs.get("_ARRAY_DIMENSIONS") or ["%s_dim%d" % (name, i) for i in range(z.ndim)]
            for i, d in enumerate(dims):
                if d in dims_seen and dims_seen[d] != z.shape[i]:
                    d = "%s_%d" % (d, z.shape[i])
                dims_seen.setdefault(d, z.shape[i])
                if v.dimensions[i] != d or ds.dimensions[d].size != z.shape[i]:
                    fail("%s/%s: dimension %d is %s, want %s (%d)" % (path, name, i, v.dimensions[i], d, z.shape[i]))
            attrs = {k: v.getncattr(k) for k in v.ncattrs()}
            check_attrs(path + "/" + name, attrs, dict(z.attrs))
            fill = z.fill_value
            if fill is not None and z.dtype.kind not in "bSUMm":
                if "_FillValue" not in attrs or not same_value(attrs["_FillValue"], fill):
                    fail("%s/%s: _FillValue %r, want %r" % (path, name, attrs.get("_FillValue"), fill))
        ds.close()
    print("netcdf: %d variables compared" % n_vars)
    xarray_equal(store, mount)
    geo(store, mount)


def xarray_equal(store, mount):
    import xarray as xr
    want = xr.open_zarr(store, group="xr", consolidated=False).load()
    got = xr.open_dataset(os.path.join(mount, "xr", "dataset.nc")).load()
    try:
        xr.testing.assert_identical(got, want)
    except AssertionError as e:
        fail("xarray: open_dataset(dataset.nc) differs from open_zarr: %s" % e)
    print("xarray: %s" % ", ".join(sorted(got.variables)))


def geo(store, mount):
    import zarr
    for name in ("north_up", "south_up"):
        g = zarr.open_group(zarr.DirectoryStore(store), path="geo/" + name, mode="r")
        lat, lon = g["lat"][...], g["lon"][...]
        ds, a = gdal_read(os.path.join(mount, "geo", name, "field", "data"))
        gt = ds.GetGeoTransform()
        dx, dy = lon[1] - lon[0], lat[1] - lat[0]
        # CF coordinates are cell centres: the raster's corner is half a
        # cell before the first ones.
        want = (lon[0] - dx / 2, dx, 0, lat[0] - dy / 2, 0, dy)
        if not np.allclose(gt, want, rtol=0, atol=1e-9):
            fail("geo/%s: GDAL geotransform %s, want %s" % (name, gt, want))
        # The centre of pixel (row 2, column 3) is at (lon[3], lat[2]).
        x = gt[0] + 3.5 * gt[1]
        y = gt[3] + 2.5 * gt[5]
        if abs(x - lon[3]) > 1e-9 or abs(y - lat[2]) > 1e-9:
            fail("geo/%s: pixel (2, 3) centred at (%g, %g), want (%g, %g)" % (name, x, y, lon[3], lat[2]))
        if ds.GetSpatialRef() is None or not ds.GetSpatialRef().IsGeographic():
            fail("geo/%s: GDAL sees no geographic CRS" % name)
        names = [ds.GetRasterBand(i + 1).GetDescription() for i in range(ds.RasterCount)]
        if names != ["/geo/%s/field band %s" % (name, b) for b in ("400", "500", "600.5")]:
            fail("geo/%s: band names %s" % (name, names))
        if ds.GetRasterBand(1).GetNoDataValue() != -9999:
            fail("geo/%s: no-data value %s, want -9999" % (name, ds.GetRasterBand(1).GetNoDataValue()))
        if not np.array_equal(a, g["field"][...]):
            fail("geo/%s: GDAL values differ" % name)


# ---- over 4 GiB ----

BIG = 600_000_000
MID = 300_000_000


def write_big(store):
    import zarr
    root = zarr.open_group(zarr.DirectoryStore(store), mode="w")
    # Sizes in float64 elements: BIG is 4.8 GB, MID 2.4 GB (over CDF-1's
    # 2 GiB limit, under CDF-2's 4 GiB). netCDF-c's rule (NC_check_vlens):
    # only the last variable may be over its format's limit, and CDF-1's
    # offsets are 32-bit. zarrfs puts the largest variable last.
    groups = {
        # Two variables over 4 GiB: CDF-5.
        "cdf5": {"a": BIG, "small": 10, "b": BIG},
        # One over 4 GiB, one over 2 GiB: CDF-2 (64-bit offsets).
        "cdf2": {"b": BIG, "mid": MID, "small": 10},
        # One over 4 GiB, laid out last, after 80 bytes: CDF-1.
        "cdf1": {"b": BIG, "small": 10},
    }
    for group, arrays in groups.items():
        g = root.create_group(group)
        for name, n in arrays.items():
            z = g.create_dataset(name, shape=(n,), chunks=(min(n, 1 << 20),), dtype="<f8", fill_value=-1.0)
            z[:3] = [1.0, 2.0, 3.0]
            z[n - 2:] = [n - 2.0, n - 1.0]


def big(mount):
    import netCDF4
    for group, model in (("cdf5", "NETCDF3_64BIT_DATA"), ("cdf2", "NETCDF3_64BIT_OFFSET"), ("cdf1", "NETCDF3_CLASSIC")):
        path = os.path.join(mount, group, "dataset.nc")
        ds = netCDF4.Dataset(path)
        ds.set_auto_mask(False)
        if ds.data_model != model:
            fail("%s: data model %s, want %s" % (group, ds.data_model, model))
        end = 0
        for name, v in ds.variables.items():
            n = v.shape[0]
            got = [v[0], v[2], v[3], v[n // 2], v[n - 2], v[n - 1]]
            want = [1.0, 3.0, -1.0, -1.0, n - 2.0, n - 1.0]
            if got != want:
                fail("%s/%s: values %s, want %s" % (group, name, got, want))
        size = os.stat(path).st_size
        ds.close()
        print("%s: %d bytes, %s" % (group, size, model))


def main():
    cmd = sys.argv[1]
    if cmd == "rasters":
        rasters(sys.argv[2])
    elif cmd == "write-netcdf":
        write_netcdf(sys.argv[2])
    elif cmd == "netcdf":
        netcdf(sys.argv[2], sys.argv[3])
    elif cmd == "write-big":
        write_big(sys.argv[2])
    elif cmd == "big":
        big(sys.argv[2])
    else:
        sys.exit("unknown command " + cmd)
    if failures:
        print("%d failures" % len(failures))
        sys.exit(1)


if __name__ == "__main__":
    main()
