"""wild.py write DIR | wild.py read LIST OUT

Zarr as other tools write it, for zarrfs's tests (TestWildWriters).

`write DIR` has Debian's xarray (to_zarr: CF encoding, NaN attributes and
fills, appends, region writes, groups, consolidated metadata, a zip), GDAL
(gdal_translate -of ZARR in v2 and its ZARR_V3 format with every compressor
it offers and BLOCKSIZE, Blosc shuffles, the multidimensional API with
strings, NaN attributes and a uint64 fill) and netCDF-c (ncgen and nccopy to
file://...#mode=zarr,file and #mode=nczarr,file) write stores into DIR, and
prints one JSON line per array: {"store", "path", "writer", "ncmode"}.

`read LIST OUT` reads the i-th line "STORE<TAB>PATH<TAB>READER<TAB>NCMODE<TAB>DTYPE"
of LIST with READER (zarr-python, xarray, gdal or netcdf-c) and writes what
zarrfs's data (or data.txt) must hold, cast to DTYPE (the NumPy type zarrfs
shows, when it shows one) to OUT/<i>.bin, or the error to OUT/<i>.err.

This is an oracle: it must not depend on zarrfs.
"""
import json
import os
import subprocess
import sys
import warnings

import numpy as np

warnings.filterwarnings("ignore")
os.environ["ZARR_V3_EXPERIMENTAL_API"] = "1"  # zarr-python 2.13 reads GDAL's ZARR_V3 (the 2022 draft)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from write_v2 import reference  # noqa: E402

GDAL_COMPRESSORS = ["NONE", "BLOSC", "ZLIB", "GZIP", "LZMA", "ZSTD", "LZ4"]

CDL = r"""netcdf wild {
dimensions:
  x = 5 ;
  y = 3 ;
  n = 4 ;
variables:
  float f(y, x) ;
    f:_FillValue = NaNf ;
    f:valid_range = -Infinityf, Infinityf ;
  double d(x) ;
    d:missing_value = NaN ;
  int i(y, x) ;
    i:_FillValue = -999 ;
  short s(x) ;
  byte b(x) ;
  ubyte ub(x) ;
  ushort us(x) ;
  uint ui(x) ;
  int64 i64(x) ;
  uint64 u64(x) ;
    u64:_FillValue = 18446744073709551614ULL ;
  uint64 u64fill(x) ;
    u64fill:_FillValue = 18446744073709551614ULL ;
  int ibig(x) ;
    ibig:_Endianness = "big" ;
  double dbig(x) ;
    dbig:_Endianness = "big" ;
  int chunked(y, x) ;
    chunked:_ChunkSizes = 2, 2 ;
  char c(y, n) ;
  :nan_attr = NaN ;
  :title = "netCDF-c" ;
data:
  f = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, _, 15 ;
  d = 1.5, NaN, Infinity, -Infinity, 0 ;
  i = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, -7 ;
  s = -1, 2, -3, 4, -5 ;
  b = -1, 2, -3, 4, -128 ;
  ub = 1, 2, 3, 255, 0 ;
  us = 1, 2, 3, 65535, 0 ;
  ui = 1, 2, 3, 4294967295, 0 ;
  i64 = 1, -2, 3, 9223372036854775807LL, -9223372036854775807LL ;
  u64 = 1, 2, 3, 18446744073709551615ULL, _ ;
  ibig = 1, 2, 3, 256, -2 ;
  dbig = 1.5, 2, 3, 4, 5 ;
  chunked = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 ;
  c = "abcd", "ef", "ghij" ;
group: sub {
  dimensions:
    z = 2 ;
  variables:
    int g(z) ;
  :gattr = -Infinity ;
  data:
    g = 7, 8 ;
  }
}
"""


def arrays_of(store, writer, ncmode=""):
    """The arrays below a directory store, found by their documents."""
    out = []
    for d, dirs, files in sorted(os.walk(store)):
        dirs.sort()
        rel = os.path.relpath(d, store)
        if ".zarray" in files:
            out.append(rel)
        for f in files:
            if f.endswith(".array.json"):  # the 2022 v3 draft (GDAL's ZARR_V3)
                p = os.path.relpath(os.path.join(d, f[: -len(".array.json")]), os.path.join(store, "meta", "root"))
                out.append(p)
    return [{"store": store, "path": "" if p == "." else p, "writer": writer, "ncmode": ncmode} for p in out]


def write_xarray(root):
    import pandas as pd
    import xarray as xr
    import zarr

    t = pd.date_range("2000-01-01", periods=6, freq="D")
    temp = (np.arange(6 * 4 * 5, dtype="f4").reshape(6, 4, 5) / 3)
    temp[2, 1, 1] = np.nan
    ds = xr.Dataset(
        {
            "temp": (("time", "lat", "lon"), temp,
                     {"units": "K", "actual_range": [np.nan, np.inf], "valid_min": -np.inf}),
            "count": (("time",), np.array([1, 2, -1, 4, 5, 6], dtype="i2")),
            "packed": (("lat", "lon"), np.linspace(0, 10, 20).reshape(4, 5)),
            "flag": (("lon",), np.array([True, False, True, True, False])),
            "name": (("lat",), np.array(["a", "bb", "c\nc", "é"], dtype=object)),
            "fixed": (("lat",), np.array([b"ab", b"c", b"", b"defg"], dtype="S4")),
            "u64": (("lon",), np.array([0, 1, 2**64 - 2, 2**63, 5], dtype="u8")),
        },
        coords={"time": t, "lat": np.linspace(-45, 45, 4), "lon": np.arange(5) * 1.5},
        attrs={"title": "xarray", "nan_attr": np.nan, "inf_list": [np.inf, -np.inf, 1.0], "big": 2**63 + 5},
    )
    enc = {
        "temp": {"_FillValue": np.nan, "chunks": (2, 2, 5), "dtype": "f4"},
        "count": {"_FillValue": -1, "chunks": (3,)},
        "packed": {"scale_factor": 0.1, "add_offset": 5.0, "dtype": "i2", "_FillValue": -32768},
        "time": {"units": "days since 1999-12-31", "calendar": "standard", "dtype": "i4"},
        "u64": {"_FillValue": 2**64 - 2},
    }
    cases = []
    p = os.path.join(root, "xarray-plain.zarr")
    ds.to_zarr(p, encoding=enc, consolidated=True)
    cases += arrays_of(p, "xarray")
    p = os.path.join(root, "xarray-groups.zarr")
    ds.to_zarr(p, group="g1", encoding=enc, consolidated=False)
    ds[["count", "temp"]].to_zarr(p, group="g1/g2", mode="a", encoding={k: enc[k] for k in ("count", "temp")}, consolidated=False)
    cases += arrays_of(p, "xarray")
    p = os.path.join(root, "xarray-append.zarr")
    ds.isel(time=slice(0, 3)).to_zarr(p, encoding=enc, consolidated=True)
    ds.isel(time=slice(3, 6)).to_zarr(p, append_dim="time", consolidated=True)
    cases += arrays_of(p, "xarray")
    p = os.path.join(root, "xarray-region.zarr")
    ds.to_zarr(p, encoding=enc, compute=False, consolidated=True)
    for s in (slice(0, 2), slice(4, 6)):
        ds.isel(time=s)[["temp", "count"]].drop_vars(["lat", "lon"]).to_zarr(p, region={"time": s}, consolidated=True)
    cases += arrays_of(p, "xarray")
    p = os.path.join(root, "xarray.zip")
    with zarr.ZipStore(p, mode="w") as st:
        ds.to_zarr(st, encoding=enc, consolidated=True)
    cases += [dict(c, store=p) for c in arrays_of(os.path.join(root, "xarray-plain.zarr"), "xarray")]
    return cases


def write_gdal(root):
    from osgeo import gdal

    gdal.UseExceptions()
    src = os.path.join(root, "src.tif")
    ds = gdal.GetDriverByName("GTiff").Create(src, 37, 23, 2, gdal.GDT_Float32)
    for b in (1, 2):
        a = np.arange(37 * 23, dtype="f4").reshape(23, 37) * b - 100
        a[0, 0] = np.nan
        ds.GetRasterBand(b).WriteArray(a)
        ds.GetRasterBand(b).SetNoDataValue(float("nan"))
    ds.SetGeoTransform([10, 0.5, 0, 50, 0, -0.5])
    ds = None
    cases = []
    runs = [(f, c, []) for f in ("ZARR_V2", "ZARR_V3") for c in GDAL_COMPRESSORS]
    runs += [(f, "BLOSC", ["BLOSC_SHUFFLE=" + s, "BLOSC_CNAME=zstd"]) for f in ("ZARR_V2", "ZARR_V3") for s in ("NONE", "BIT")]
    runs += [("ZARR_V2", "LZMA", ["LZMA_DELTA=4", "LZMA_PRESET=1"])]
    for i, (fmt, comp, extra) in enumerate(runs):
        p = os.path.join(root, "gdal-%d-%s-%s.zarr" % (i, fmt, comp))
        opts = ["FORMAT=" + fmt, "COMPRESS=" + comp, "BLOCKSIZE=7,10"] + extra
        gdal.Translate(p, src, format="ZARR", creationOptions=opts)
        cases += arrays_of(p, "gdal")
    for fmt in ("ZARR_V2", "ZARR_V3"):
        p = os.path.join(root, "gdal-md-%s.zarr" % fmt)
        ds = gdal.GetDriverByName("ZARR").CreateMultiDimensional(p, options=["FORMAT=" + fmt])
        rg = ds.GetRootGroup()
        rg.CreateAttribute("missing_stats", [], gdal.ExtendedDataType.Create(gdal.GDT_Float64)).Write(float("nan"))
        dx = rg.CreateDimension("x", None, None, 6)
        dy = rg.CreateDimension("y", None, None, 4)
        u = rg.CreateMDArray("u64", [dx], gdal.ExtendedDataType.Create(gdal.GDT_UInt64), ["BLOCKSIZE=2"])
        u.SetNoDataValueUInt64(2**64 - 2)
        u.Write(np.array([1, 2], dtype="u8"), array_start_idx=[0], count=[2])
        f = rg.CreateMDArray("f", [dy, dx], gdal.ExtendedDataType.Create(gdal.GDT_Float32), ["BLOCKSIZE=2,4", "COMPRESS=LZMA"])
        f.SetNoDataValueDouble(float("nan"))
        f.Write(np.arange(12, dtype="f4").reshape(2, 6), array_start_idx=[0, 0], count=[2, 6])
        f.CreateAttribute("valid_range", [2], gdal.ExtendedDataType.Create(gdal.GDT_Float64)).Write([float("-inf"), float("inf")])
        if fmt == "ZARR_V2":  # GDAL 3.6 writes no strings in its v3
            s = rg.CreateMDArray("s", [dx], gdal.ExtendedDataType.CreateString(5))
            s.Write(["ab", "cde", "", "x y", "e", "12345"])
        sub = rg.CreateGroup("sub")
        i16 = sub.CreateMDArray("i16", [dx], gdal.ExtendedDataType.Create(gdal.GDT_Int16), ["COMPRESS=BLOSC", "BLOSC_SHUFFLE=BIT"])
        i16.Write(np.arange(6, dtype="i2") - 3)
        ds = None
        cases += arrays_of(p, "gdal")
    return cases


def write_netcdf(root):
    cdl = os.path.join(root, "wild.cdl")
    with open(cdl, "w") as f:
        f.write(CDL)
    nc = os.path.join(root, "wild.nc")
    subprocess.run(["ncgen", "-4", "-o", nc, cdl], check=True)
    cases = []
    for mode in ("zarr", "nczarr"):
        for tool in ("ncgen", "nccopy"):
            p = os.path.join(root, "netcdf-%s-%s.zarr" % (tool, mode))
            url = "file://%s#mode=%s,file" % (p, mode)
            if tool == "ncgen":
                subprocess.run(["ncgen", "-4", "-o", url, cdl], check=True)
            else:
                subprocess.run(["nccopy", nc, url], check=True)
            cases += arrays_of(p, "netcdf-c", mode)
    return cases


def write(root):
    os.makedirs(root, exist_ok=True)
    for c in write_xarray(root) + write_gdal(root) + write_netcdf(root):
        print(json.dumps(c))


def read_zarr_python(store, path, _):
    import zarr

    if store.endswith(".zip"):
        st = zarr.ZipStore(store, mode="r")
    else:
        st = zarr.DirectoryStore(store)
    if os.path.exists(os.path.join(store, "meta")):
        from zarr._storage.v3 import DirectoryStoreV3

        z = zarr.open_array(store=DirectoryStoreV3(store), path=path, mode="r", zarr_version=3)
    else:
        z = zarr.open_array(store=st, path=path, mode="r")
    if z.fill_value is None and z.dtype != object and z.shape != ():
        a = np.zeros(z.shape, dtype=z.dtype)
        z.get_basic_selection(Ellipsis, out=a)
        return a
    return z[...]


def read_xarray(store, path, _):
    import xarray as xr
    import zarr

    group, _, var = path.rpartition("/")
    st = zarr.ZipStore(store, mode="r") if store.endswith(".zip") else store
    ds = xr.open_zarr(st, group=group or None, decode_cf=False, mask_and_scale=False, consolidated=None)
    return ds.variables[var].values


def read_gdal(store, path, _):
    from osgeo import gdal

    gdal.UseExceptions()
    ds = gdal.OpenEx(store, gdal.OF_MULTIDIM_RASTER)
    g = ds.GetRootGroup()
    parts = path.split("/")
    for p in parts[:-1]:
        g = g.OpenGroup(p)
    return g.OpenMDArray(parts[-1]).ReadAsArray()


def read_netcdf(store, path, mode):
    import netCDF4

    ds = netCDF4.Dataset("file://%s#mode=%s,file" % (os.path.abspath(store), mode))
    g = ds
    parts = path.split("/")
    for p in parts[:-1]:
        g = g.groups[p]
    v = g.variables[parts[-1]]
    v.set_auto_maskandscale(False)
    v.set_auto_chartostring(False)
    return np.asarray(v[...])


READERS = {"zarr-python": read_zarr_python, "xarray": read_xarray, "gdal": read_gdal, "netcdf-c": read_netcdf}


def read(listfile, out):
    for i, line in enumerate(open(listfile, encoding="utf-8").read().split("\n")[:-1]):
        store, path, reader, mode, dtype = line.split("\t")
        try:
            a = np.asarray(READERS[reader](store, path, mode))
            if dtype and a.dtype.kind not in "OSUV" and a.dtype != np.dtype(dtype):
                a = a.astype(dtype)  # GDAL 3.6 reads int8 as int16
            data = reference(a)
            with open(os.path.join(out, "%d.bin" % i), "wb") as f:
                f.write(data)
        except Exception as e:
            with open(os.path.join(out, "%d.err" % i), "w") as f:
                f.write("%s: %s" % (type(e).__name__, str(e).replace("\n", " ")))


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2])
    else:
        read(sys.argv[2], sys.argv[3])
