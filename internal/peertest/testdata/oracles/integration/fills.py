"""fills.py COMMAND ARGS — the oracle of the missing values in zarrfs's views
(issue 41): what xarray makes of dataset.nc and what GDAL makes of data.hdr
must be what each makes of the Zarr store itself.

  fills.py write-v2 STORE
      zarr-python writes a v2 group as xarray lays one out (_ARRAY_DIMENSIONS):
      integer and float coordinates, one of them holding its fill value,
      variables holding their fill value, a bool, one without fill_value.
  fills.py write-draft STORE
      zarr-python 2.13 writes the same as the 2022 v3 draft (GDAL 3.6 reads
      it): fill values that are not masks, and masks in `_FillValue` (an
      integer, and a float spelled as xarray's FillValueCoder writes it:
      base64 of a little-endian float64) or `missing_value` attributes.
  fills.py draft-list STORE MOUNT OUT
      zarr-python reads the draft group's arrays into OUT and writes the list
      the v3 command reads to OUT/list.json.
  fills.py v2 STORE MOUNT
      xarray.open_dataset(MOUNT/dataset.nc) must be identical to
      xarray.open_zarr(STORE) (xarray's v2 default: fill_value is the mask).
  fills.py v3 LIST
      LIST is JSON: [{"nc": MOUNT/GROUP/dataset.nc, "arrays": {NAME: [ZARR_JSON,
      REF]}}], REF the array's elements as another implementation read them
      (C order, little-endian). Each variable of dataset.nc must be what
      xarray's v3 default makes of the array (use_zarr_fill_value_as_mask
      False: the mask is the `_FillValue` attribute, decoded with xarray's
      FillValueCoder, else none): built from REF and the stored attributes,
      decoded with xarray.decode_cf, compared with assert_identical.
  fills.py nodata STORE MOUNT PATH...
      For each 2-D array PATH, GDAL's NoData through MOUNT/PATH/data (data.hdr)
      must equal GDAL's Zarr driver's on ZARR:"STORE":/PATH.

Every failure is printed; the exit status is 1 when there is any.
This is an oracle for zarrfs's tests: it must not depend on zarrfs.
"""
import base64
import json
import math
import os
import struct
import sys

import numpy as np

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def arrays(zarr, g, v3):
    """Writes the test arrays into group g; v3: the draft's attributes."""
    x = g.create_dataset("x", shape=(6,), chunks=(4,), dtype="<i4", fill_value=0)
    x[:] = np.arange(6)  # x[0] holds the fill value
    y = g.create_dataset("y", shape=(4,), chunks=(4,), dtype="<f8", fill_value=float("nan"))
    y[:] = [10, 20, 30, 40]
    t = g.create_dataset("t", shape=(4, 6), chunks=(2, 3), dtype="<f4", fill_value=0.0 if v3 else float("nan"))
    t[:] = np.arange(24, dtype="f4").reshape(4, 6)
    t[1, 2] = np.nan
    t[2, 3] = -9999
    i = g.create_dataset("i", shape=(4, 6), chunks=(2, 3), dtype="<i2", fill_value=0 if v3 else -9)
    i[:2, :] = np.arange(12).reshape(2, 6)  # rows 2, 3: unwritten chunks
    i[0, 1] = -9
    m = g.create_dataset("mv", shape=(4, 6), chunks=(2, 3), dtype="<u2", fill_value=0)
    m[:] = np.arange(24).reshape(4, 6) % 8
    b = g.create_dataset("b", shape=(4, 6), chunks=(2, 3), dtype="|b1", fill_value=False)
    b[:] = np.arange(24).reshape(4, 6) % 3 == 0
    n = g.create_dataset("nofill", shape=(4, 6), chunks=(2, 3), dtype="<i2", fill_value=None)
    n[:] = 1
    for a in (x, y):
        a.attrs["_ARRAY_DIMENSIONS"] = [a.basename]
    for a in (t, i, m, b, n):
        a.attrs["_ARRAY_DIMENSIONS"] = ["y", "x"]
        a.attrs["long_name"] = a.basename
    m.attrs["missing_value"] = 7
    if v3:
        i.attrs["_FillValue"] = -9
        t.attrs["_FillValue"] = base64.standard_b64encode(struct.pack("<d", -9999.0)).decode()


def write_v2(store):
    import zarr
    arrays(zarr, zarr.open_group(store, mode="w"), False)


def write_draft(store):
    os.environ["ZARR_V3_EXPERIMENTAL_API"] = "1"
    import zarr
    from zarr._storage.v3 import DirectoryStoreV3
    arrays(zarr, zarr.open_group(DirectoryStoreV3(store), path="g", mode="w", zarr_version=3), True)


def draft_list(store, mount, out):
    """Reads the draft group's arrays with zarr-python into OUT and writes
    OUT/list.json for the v3 command."""
    os.environ["ZARR_V3_EXPERIMENTAL_API"] = "1"
    import zarr
    from zarr._storage.v3 import DirectoryStoreV3
    g = zarr.open_group(DirectoryStoreV3(store), path="g", mode="r", zarr_version=3)
    entry = {"nc": os.path.join(mount, "g", "dataset.nc"), "arrays": {}}
    for name, a in g.arrays():
        ref = os.path.join(out, name + ".bin")
        with open(ref, "wb") as f:
            f.write(a[...].astype(a.dtype.newbyteorder("<")).tobytes())
        entry["arrays"][name] = [os.path.join(store, "meta", "root", "g", name + ".array.json"), ref]
    with open(os.path.join(out, "list.json"), "w") as f:
        json.dump([entry], f)


def v2(store, mount):
    import xarray as xr
    want = xr.open_zarr(store).load()
    got = xr.open_dataset(os.path.join(mount, "dataset.nc")).load()
    # A bool's fill value (False) is no mask in dataset.nc: xarray 2023.01
    # masks it in a v2 store, making the bools objects with NaN for every
    # False, which no NetCDF reader of a byte variable would do.
    bools = [k for k, v in want.variables.items() if v.dtype == object and k in got and got[k].dtype == bool]
    for k in bools:
        z = xr.open_zarr(store, mask_and_scale=False)[k].load()
        if not (z.values == got[k].values).all():
            fail("v2 %s: dataset.nc's bools differ from the store's" % k)
    want, got = want.drop_vars(bools), got.drop_vars(bools)
    try:
        xr.testing.assert_identical(got, want)
        print("v2: dataset.nc is identical to xarray.open_zarr: %s" % sorted(got.variables))
    except AssertionError as e:
        fail("v2 dataset.nc differs from xarray.open_zarr:\n%s" % e)


V3_NUMPY = {"bool": "|b1", "int8": "|i1", "uint8": "|u1", "int16": "<i2", "uint16": "<u2", "int32": "<i4",
            "uint32": "<u4", "int64": "<i8", "uint64": "<u8", "float16": "<f2", "float32": "<f4", "float64": "<f8"}


def v3_fill(value, dtype):
    """xarray's FillValueCoder.decode of a v3 `_FillValue` attribute."""
    if dtype.kind == "f":
        if isinstance(value, str):
            return struct.unpack("<d", base64.standard_b64decode(value))[0]
        return float(value)
    if dtype.kind == "b":
        return bool(value)
    return int(value)


def simple_attrs(attrs):
    """The attributes whose values every format spells alike (less
    `coordinates`, which xarray moves into the dataset's coordinates)."""
    return {k: v for k, v in attrs.items() if k != "coordinates" and
            isinstance(v, (str, int, float, np.integer, np.floating)) and not isinstance(v, bool)}


def v3(listfile):
    import xarray as xr
    for group in json.load(open(listfile)):
        got_ds = xr.open_dataset(group["nc"]).load()
        n = 0
        for name, (meta_path, ref) in sorted(group["arrays"].items()):
            meta = json.load(open(meta_path))
            attrs = dict(meta.get("attributes") or {})
            dims_attr = attrs.pop("_ARRAY_DIMENSIONS", None)
            if name not in got_ds.variables:
                continue
            got = got_ds.variables[name]
            dt = meta["data_type"]
            dtype = np.dtype(V3_NUMPY.get(dt, dt) if isinstance(dt, str) else "V")
            if dtype.kind not in "biuf":
                continue
            raw = np.frombuffer(open(ref, "rb").read(), dtype=dtype.newbyteorder("<")).reshape(meta["shape"])
            enc = {}
            if "_FillValue" in attrs:
                attrs["_FillValue"] = v3_fill(attrs["_FillValue"], dtype)
            else:
                attrs.pop("_FillValue", None)
            if dtype.kind == "b":
                raw = raw.astype("i1")
                attrs["dtype"] = "bool"
            want_ds = xr.decode_cf(xr.Dataset({name: xr.Variable(got.dims, raw, attrs)}), decode_coords=False)
            want = want_ds.variables[name]
            a = xr.Variable(got.dims, got.values, simple_attrs(got.attrs))
            w = xr.Variable(want.dims, want.values, simple_attrs(want.attrs))
            try:
                xr.testing.assert_identical(a, w)
                n += 1
            except AssertionError as e:
                fail("%s: %s differs from xarray's v3 reading of the store:\n%s" % (group["nc"], name, e))
        print("v3: %s: %d variables as xarray reads the store" % (group["nc"], n))


def nodata(store, mount, paths):
    from osgeo import gdal
    gdal.UseExceptions()
    for p in paths:
        z = gdal.Open('ZARR:"%s":/%s' % (store, p))
        e = gdal.Open(os.path.join(mount, p, "data"))
        zb, eb = z.GetRasterBand(1), e.GetRasterBand(1)
        zn, en = zb.GetNoDataValue(), eb.GetNoDataValue()
        dt = gdal.GetDataTypeName(zb.DataType)
        same = zn == en or zn is not None and en is not None and (
            math.isnan(zn) and math.isnan(en) or np.float32(zn) == np.float32(en))
        if not same:
            fail("%s (%s): GDAL's NoData through data.hdr %r, through its Zarr driver %r" % (p, dt, en, zn))
        else:
            print("nodata: %s (%s): %r" % (p, dt, en))


def main():
    cmd = sys.argv[1]
    if cmd == "write-v2":
        write_v2(sys.argv[2])
    elif cmd == "write-draft":
        write_draft(sys.argv[2])
    elif cmd == "draft-list":
        draft_list(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == "v2":
        v2(sys.argv[2], sys.argv[3])
    elif cmd == "v3":
        v3(sys.argv[2])
    elif cmd == "nodata":
        nodata(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        sys.exit("unknown command " + cmd)
    if failures:
        print("%d failures" % len(failures))
        sys.exit(1)


if __name__ == "__main__":
    main()
