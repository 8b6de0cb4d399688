"""Kerchunk reference sets for zarrfs's tests, and the oracles that read them.

kerchunk is not packaged in Debian (and PyPI is out of reach), so this writes
references the way kerchunk's HDF5 translator (kerchunk.hdf.SingleHdf5ToZarr)
does, with h5py's low-level API: one Zarr v2 array per dataset, chunks from
dataset.id.get_chunk_info (byte offset and size in the file), a contiguous
dataset as one chunk at dataset.id.get_offset(), HDF5 filters as numcodecs
filters (shuffle -> {"id": "shuffle", "elementsize": itemsize}, deflate ->
{"id": "zlib", "level": n}) with no compressor, the stored dtype as it is
('>f4' stays big-endian), _ARRAY_DIMENSIONS from dimension scales.

    kerchunk_refs.py make OUTDIR
        writes OUTDIR/data.nc (netCDF4-python) and OUTDIR/data.h5 (h5py),
        their references as JSON version 0 (absolute paths), version 1
        (a template for the URL, relative paths, chunks under 64 bytes
        inline), the list of arrays (OUTDIR/arrays.json) and, for each
        array, its values as read by netCDF4-python or h5py from the
        original file: C order, little-endian (OUTDIR/expect/KIND/PATH.bin).
    kerchunk_refs.py fsspec REFS OUTDIR PATH...
        reads each array PATH of the reference set REFS with zarr-python
        over fsspec's ReferenceFileSystem into OUTDIR/PATH.bin.
"""

import base64
import json
from collections.abc import Mapping
import os
import sys

import numpy as np


def little(a):
    a = np.ascontiguousarray(a)
    if a.dtype.byteorder == ">":
        a = a.astype(a.dtype.newbyteorder("<"))
    return a.tobytes()


def make_nc(path):
    import netCDF4

    ds = netCDF4.Dataset(path, "w", format="NETCDF4")
    ds.title = "kerchunk test"
    ds.createDimension("time", 5)
    ds.createDimension("lat", 7)
    ds.createDimension("lon", 9)
    lat = ds.createVariable("lat", "f4", ("lat",))
    lat[:] = np.linspace(-30, 30, 7)
    lat.units = "degrees_north"
    lon = ds.createVariable("lon", "f4", ("lon",))
    lon[:] = np.linspace(0, 80, 9)
    lon.units = "degrees_east"
    rng = np.random.default_rng(38)
    temp = ds.createVariable("temp", "f4", ("time", "lat", "lon"), zlib=True, shuffle=True, chunksizes=(2, 4, 5))
    temp[:] = rng.normal(280, 10, (5, 7, 9)).astype("f4")
    temp.units = "K"
    p = ds.createVariable("pressure", "f8", ("lat", "lon"), contiguous=True)
    p[:] = rng.uniform(900, 1100, (7, 9))
    big = ds.createVariable("big", np.dtype(">i4"), ("time", "lon"), endian="big", zlib=True, shuffle=True, chunksizes=(3, 4))
    big[:] = rng.integers(-(2**31), 2**31 - 1, (5, 9), dtype="i4")
    sub = ds.createGroup("sub")
    sub.note = "a group"
    u = sub.createVariable("u", "i2", ("lat", "lon"), zlib=True, shuffle=True, chunksizes=(4, 9))
    u[:] = rng.integers(-1000, 1000, (7, 9), dtype="i2")
    deep = sub.createGroup("deep")
    v = deep.createVariable("v", "u1", ("lon",), contiguous=True)
    v[:] = np.arange(9, dtype="u1") * 7
    ds.close()


def make_h5(path):
    import h5py

    rng = np.random.default_rng(83)
    with h5py.File(path, "w") as f:
        f.attrs["source"] = "h5py"
        f.create_dataset("chunked", data=rng.normal(0, 1, (20, 30)).astype("f4"), chunks=(8, 7), shuffle=True, compression="gzip", compression_opts=6)
        f.create_dataset("contig_be", data=rng.normal(0, 1, (6, 11)).astype(">f4"))
        f.create_dataset("be_chunked", data=rng.integers(-(2**60), 2**60, (13,), dtype="i8").astype(">i8"), chunks=(4,), shuffle=True, compression="gzip")
        g = f.create_group("g/h")
        g.attrs["level"] = 2
        g.create_dataset("c", data=np.arange(50, dtype="i2").reshape(5, 10), chunks=(2, 3))
        sparse = f.create_dataset("sparse", shape=(10, 10), dtype="f8", chunks=(4, 4), fillvalue=-1.5, compression="gzip")
        sparse[0:4, 4:8] = rng.normal(0, 1, (4, 4))
        f.create_dataset("scalar", data=np.float64(3.25))
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_layout(h5py.h5d.COMPACT)
        f.create_dataset("compact", data=np.arange(6, dtype=">u2").reshape(2, 3), dcpl=dcpl)


def attrs_of(obj):
    out = {}
    skip = {"DIMENSION_LIST", "REFERENCE_LIST", "CLASS", "NAME", "_Netcdf4Dimid", "_Netcdf4Coordinates", "_nc3_strict", "_NCProperties", "_FillValue"}
    for k, v in obj.attrs.items():
        if k in skip:
            continue
        if isinstance(v, bytes):
            v = v.decode()
        elif isinstance(v, np.ndarray):
            v = v.tolist()
        elif isinstance(v, np.generic):
            v = v.item()
        out[k] = v
    return out


def dims_of(ds):
    if ds.attrs.get("CLASS") == b"DIMENSION_SCALE":
        return [ds.name.split("/")[-1]]
    names = []
    for i, d in enumerate(ds.dims):
        names.append(d[0].name.split("/")[-1] if len(d) else "phony_dim_%d" % i)
    return names


def fill_of(ds):
    fv = ds.fillvalue
    if fv is None:
        return None
    fv = np.asarray(fv).item()
    if isinstance(fv, float):
        if np.isnan(fv):
            return "NaN"
        if np.isinf(fv):
            return "Infinity" if fv > 0 else "-Infinity"
    return fv


def filters_of(ds):
    import h5py

    plist = ds.id.get_create_plist()
    out = []
    for i in range(plist.get_nfilters()):
        code, _flags, values, _name = plist.get_filter(i)
        if code == h5py.h5z.FILTER_SHUFFLE:
            out.append({"id": "shuffle", "elementsize": ds.dtype.itemsize})
        elif code == h5py.h5z.FILTER_DEFLATE:
            out.append({"id": "zlib", "level": int(values[0]) if values else 4})
        else:
            raise ValueError("filter %d of %s" % (code, ds.name))
    return out


def translate(path, url, inline_below=0):
    """The references of one HDF5 file as kerchunk's translator writes them."""
    import h5py

    refs = {}
    raw = open(path, "rb").read()

    def chunk_ref(offset, size):
        if size < inline_below:
            return "base64:" + base64.b64encode(raw[offset : offset + size]).decode()
        return [url, offset, size]

    def visit(name, obj):
        key = name
        if isinstance(obj, h5py.Group):
            refs[key + "/.zgroup"] = json.dumps({"zarr_format": 2})
            refs[key + "/.zattrs"] = json.dumps(attrs_of(obj))
            return
        ds = obj
        if ds.attrs.get("NAME", b"").startswith(b"This is a netCDF dimension but not a netCDF variable"):
            return  # a dimension without a coordinate variable: no data
        shape = list(ds.shape)
        chunks = list(ds.chunks) if ds.chunks else shape
        zarray = {
            "chunks": chunks,
            "compressor": None,
            "dtype": ds.dtype.str,
            "fill_value": fill_of(ds),
            "filters": filters_of(ds) or None,
            "order": "C",
            "shape": shape,
            "zarr_format": 2,
        }
        refs[key + "/.zarray"] = json.dumps(zarray)
        za = attrs_of(ds)
        za["_ARRAY_DIMENSIONS"] = dims_of(ds)
        refs[key + "/.zattrs"] = json.dumps(za)
        dsid = ds.id
        if ds.chunks:
            for i in range(dsid.get_num_chunks()):
                info = dsid.get_chunk_info(i)
                idx = ".".join(str(o // c) for o, c in zip(info.chunk_offset, chunks))
                refs[key + "/" + idx] = chunk_ref(info.byte_offset, info.size)
        else:
            idx = ".".join("0" for _ in shape) or "0"
            offset = dsid.get_offset()
            if offset is None:
                # Compact storage: the bytes live in the object header;
                # kerchunk inlines them.
                refs[key + "/" + idx] = "base64:" + base64.b64encode(np.asarray(ds[()]).tobytes()).decode()
            else:
                refs[key + "/" + idx] = chunk_ref(offset, dsid.get_storage_size())

    with h5py.File(path, "r") as f:
        refs[".zgroup"] = json.dumps({"zarr_format": 2})
        refs[".zattrs"] = json.dumps(attrs_of(f))
        f.visititems(visit)
    return refs


def expect_nc(path, arrays, outdir):
    import netCDF4

    ds = netCDF4.Dataset(path)
    ds.set_auto_maskandscale(False)
    for a in arrays:
        node = ds
        parts = a.split("/")
        for g in parts[:-1]:
            node = node.groups[g]
        write(outdir, a, little(node.variables[parts[-1]][...]))
    ds.close()


def expect_h5(path, arrays, outdir):
    import h5py

    with h5py.File(path, "r") as f:
        for a in arrays:
            write(outdir, a, little(np.asarray(f[a][()])))


def write(outdir, name, data):
    p = os.path.join(outdir, name + ".bin")
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "wb") as out:
        out.write(data)


def make(outdir):
    outdir = os.path.abspath(outdir)
    listing = {}
    for kind, maker, expect in (("nc", make_nc, expect_nc), ("h5", make_h5, expect_h5)):
        src = os.path.join(outdir, "data." + kind)
        maker(src)
        # Version 0: absolute paths (nc) or file:// URLs (h5), no inlining.
        url = src if kind == "nc" else "file://" + src
        v0 = translate(src, url)
        with open(os.path.join(outdir, kind + ".v0.json"), "w") as out:
            json.dump(v0, out, indent=1)
        # Version 1: the URL as a template, relative to the reference
        # file, small chunks inline.
        v1 = translate(src, "{{u}}", inline_below=64)
        with open(os.path.join(outdir, kind + ".v1.json"), "w") as out:
            json.dump({"version": 1, "templates": {"u": "data." + kind}, "refs": v1}, out)
        arrays = sorted(k[: -len("/.zarray")] for k in v0 if k.endswith("/.zarray"))
        listing[kind] = arrays
        expect(src, arrays, os.path.join(outdir, "expect", kind))
    with open(os.path.join(outdir, "arrays.json"), "w") as out:
        json.dump(listing, out)


def read_fsspec(refs, outdir, paths):
    import fsspec
    import zarr

    fs = fsspec.filesystem("reference", fo=refs)

    class Refs(Mapping):
        # fsspec 2022.11's mapper lets the KeyError of a missing chunk
        # escape zarr's getitems; a plain mapping gives zarr its usual
        # missing-key path (the fill value).
        def __getitem__(self, key):
            try:
                return fs.cat_file(key)
            except (KeyError, FileNotFoundError):
                raise KeyError(key)

        def __iter__(self):
            return iter(fs.references)

        def __len__(self):
            return len(fs.references)

    root = zarr.open(zarr.storage.KVStore(Refs()), mode="r")
    for p in paths:
        write(outdir, p, little(root[p][...]))


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    elif sys.argv[1] == "fsspec":
        read_fsspec(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        sys.exit("usage: kerchunk_refs.py make OUTDIR | fsspec REFS OUTDIR PATH...")
