"""write_v2.py DIR REFDIR

Writes a v2 hierarchy of arrays with zarr-python (Debian's python3-zarr 2.13)
into DIR and, for every array, reads it back with zarr-python and writes what
zarrfs's `data` file must hold to REFDIR/<n>.bin: the elements in C order,
every element little-endian (|S raw bytes, <U UTF-32LE, datetimes int64,
records with every field little-endian).
Object arrays of strings get zarrfs's data.txt form instead. Prints one JSON
line per array: {"path", "ref", "compressor", "dtype", "shape"}.

The cases cross dtypes with compressors, C/F order, both dimension
separators, partly written arrays (missing chunks), shapes of rank 0-4
with size-1 and zero-length dimensions, and structured types.

This is an oracle for zarrfs's tests: it must not depend on zarrfs.
"""
import json
import os
import sys

import numcodecs
import numpy as np
import zarr

DTYPES = [
    "|b1", "|i1", "|u1", "<i2", ">i2", "<u2", "<i4", ">u4", "<i8", ">u8",
    "<f2", "<f4", ">f4", "<f8", ">f8", "|S5", "<U3", ">U2", "<M8[ns]", ">m8[s]",
]

COMPRESSORS = {
    "none": None,
    "gzip": numcodecs.GZip(level=5),
    "zlib": numcodecs.Zlib(level=1),
    "zstd": numcodecs.Zstd(level=3),
    "blosc-lz4-shuffle": numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE),
    "blosc-zstd-bitshuffle": numcodecs.Blosc(cname="zstd", clevel=3, shuffle=numcodecs.Blosc.BITSHUFFLE),
    "blosc-blosclz-noshuffle": numcodecs.Blosc(cname="blosclz", clevel=9, shuffle=numcodecs.Blosc.NOSHUFFLE),
    "blosc-zlib-shuffle": numcodecs.Blosc(cname="zlib", clevel=1, shuffle=numcodecs.Blosc.SHUFFLE),
    "lz4": numcodecs.LZ4(acceleration=1),
    "bz2": numcodecs.BZ2(level=9),
    "lzma": numcodecs.LZMA(),
}

# Filter chains (numcodecs filters and checksums), each on a dtype it fits:
# name, dtype, filters, compressor.
FILTERS = [
    ("delta", "<i4", [numcodecs.Delta(dtype="<i4")], None),
    ("delta_astype", "<i8", [numcodecs.Delta(dtype="<i8", astype="<i4")], numcodecs.Zlib(level=1)),
    ("fixedscaleoffset", "<f8", [numcodecs.FixedScaleOffset(offset=1000, scale=10, dtype="<f8", astype="<i4")], None),
    ("quantize", "<f8", [numcodecs.Quantize(digits=3, dtype="<f8")], numcodecs.Zstd(level=1)),
    ("astype", "<f8", [numcodecs.AsType(encode_dtype="<f4", decode_dtype="<f8")], None),
    ("shuffle", ">i4", [numcodecs.Shuffle(elementsize=4)], numcodecs.GZip(level=1)),
    ("packbits", "|b1", [numcodecs.PackBits()], None),
    ("bitround", "<f4", [numcodecs.BitRound(keepbits=6)], numcodecs.Zstd(level=1)),
    ("crc32", "<u2", None, numcodecs.CRC32()),
    ("adler32", "<i8", None, numcodecs.Adler32()),
    ("delta_shuffle_blosc", "<u4", [numcodecs.Delta(dtype="<u4"), numcodecs.Shuffle(elementsize=4)],
     numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.NOSHUFFLE)),
]

# Structured (record) types: name, field list. Fields mix byte orders,
# sub-shapes, nesting, strings and datetimes.
STRUCTS = [
    ("point", [("x", "<f4"), ("y", "<f4"), ("id", ">u2")]),
    ("mixed", [("a", ">i4"), ("b", "<f8", (2,)), ("s", [("x", ">i2"), ("y", "|S3")]), ("t", ">M8[ms]"), ("u", "<U2", (2,))]),
]

SHAPES = [
    # name, shape, chunks
    ("r0", (), ()),
    ("r1", (11,), (4,)),
    ("r1one", (1,), (1,)),
    ("r1zero", (0,), (3,)),
    ("r2", (7, 5), (3, 2)),
    ("r2zero", (4, 0), (2, 2)),
    ("r2big", (3, 2), (8, 8)),
    ("r3", (3, 1, 5), (2, 1, 2)),
    ("r4", (2, 3, 4, 3), (1, 2, 3, 2)),
    ("r4one", (1, 1, 1, 1), (1, 1, 1, 1)),
]


def values(dtype, shape, seed):
    """Deterministic values of dtype in shape, spanning the type's range."""
    n = int(np.prod(shape, dtype=np.int64))
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        a = rng.integers(0, 2, n).astype(bool)
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        a = rng.integers(info.min, info.max, n, dtype=dt.newbyteorder("="), endpoint=True)
    elif dt.kind == "f":
        a = (rng.standard_normal(n) * 100).astype(dt)
        if n > 3:
            a[1] = np.nan
            a[2] = -np.inf
            a[3] = -0.0
    elif dt.kind == "S":
        a = np.array([bytes(rng.integers(0, 256, rng.integers(0, dt.itemsize + 1), dtype=np.uint8)) for _ in range(n)], dtype=dt)
    elif dt.kind == "U":
        pool = "aZ ß€😀\u00e9\u4e16"
        a = np.array(["".join(rng.choice(list(pool), rng.integers(0, dt.itemsize // 4 + 1))) for _ in range(n)], dtype=dt)
    elif dt.kind in "Mm":
        a = rng.integers(-(2**62), 2**62, n).astype(np.int64).view(dt.newbyteorder("="))
        if n > 1:
            a[1] = np.array("NaT", dtype=dt)
    else:
        raise ValueError(dtype)
    return a.astype(dt).reshape(shape)


def struct_values(dt, shape, seed):
    """Deterministic records of the structured type dt, field by field."""
    a = np.zeros(shape, dtype=dt)
    for i, name in enumerate(dt.names):
        field = dt.fields[name][0]
        if field.names:
            a[name] = struct_values(field, shape, seed + i)
        else:
            base, sub = (field.subdtype or (field, ()))
            a[name] = values(base.str, tuple(shape) + tuple(sub), seed + i)
    return a


def tame_values(dtype, shape, seed):
    """Values that filters with a narrower encoding (astype, scale) keep."""
    n = int(np.prod(shape, dtype=np.int64))
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return (np.arange(n) % 3 == 0).reshape(shape)
    rng = np.random.default_rng(seed)
    if dt.kind in "iu":
        return (np.arange(n) * 3 + rng.integers(0, 5, n) + (0 if dt.kind == "u" else -50)).astype(dt).reshape(shape)
    return (rng.standard_normal(n) * 100).astype(dt).reshape(shape)


def fill_for(dtype):
    dt = np.dtype(dtype)
    return {"b": True, "i": -3, "u": 5, "f": -1.5, "S": b"fill", "U": "fi", "M": 86400, "m": 12}[dt.kind]


def escape(s):
    if isinstance(s, bytes):
        s = s.decode("utf-8", "surrogateescape")
    out = []
    for ch in s:
        if ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif "\udc80" <= ch <= "\udcff":
            out.append("\\x%02x" % (ord(ch) - 0xDC00))
        else:
            out.append(ch)
    return "".join(out)


def reference(a):
    """The bytes zarrfs shows for the numpy array a (read back by zarr)."""
    if a.dtype.kind == "O":
        return "".join(escape(x) + "\n" for x in a.reshape(-1)).encode("utf-8", "surrogateescape")
    dt = a.dtype
    if dt.names:
        # Records are shown with every field little-endian (datetimes too).
        return np.ascontiguousarray(a.astype(dt.newbyteorder("<"))).tobytes(order="C")
    if dt.kind in "Mm":
        a = a.view(dt.str[0] + "i8")
        dt = a.dtype
    if dt.str[0] == ">":
        a = a.astype(dt.newbyteorder("<"))
    return np.ascontiguousarray(a).tobytes(order="C")


def main():
    out_dir, ref_dir = sys.argv[1], sys.argv[2]
    os.makedirs(ref_dir, exist_ok=True)
    store = zarr.DirectoryStore(out_dir)
    root = zarr.group(store=store, overwrite=True)
    root.attrs["writer"] = "zarr-python " + zarr.__version__
    cases = []
    # Every dtype with every compressor, one odd 2-d shape, with order,
    # separator and partial writing varying along the way.
    i = 0
    for dt in DTYPES:
        for cname in COMPRESSORS:
            cases.append(("dtypes/%s/%s" % (dt.replace("<", "le").replace(">", "be").replace("|", "").replace("[", "_").replace("]", ""), cname),
                          dt, cname, (7, 5), (3, 2), "CF"[i % 2], "./"[(i // 2) % 2], i % 3 == 2))
            i += 1
    # Every shape in both orders and with both separators, partly written or not.
    for name, shape, chunks in SHAPES:
        for order in "CF":
            for sep in "./":
                for dt, cname in (("<f8", "zstd"), (">i4", "blosc-lz4-shuffle")):
                    partial = (order == "F") == (sep == "/")
                    nm = "shapes/%s_%s_%s_%s_%s" % (name, order, "dot" if sep == "." else "slash", dt[1:], cname)
                    cases.append((nm, dt, cname, shape, chunks, order, sep, partial))
    # Filter chains, partly written (odd shape, edge chunks).
    for name, dt, filters, comp in FILTERS:
        cases.append(("filters/" + name, dt, "filters:" + name, (9, 7), (4, 3), "C", ".", True))
    # Structured types with a few compressors, fully written (zarr-python
    # 2.13 cannot take a structured fill value under this NumPy).
    for name, fields in STRUCTS:
        for cname in ("none", "zstd", "blosc-lz4-shuffle"):
            cases.append(("structured/%s/%s" % (name, cname), fields, cname, (7, 5), (3, 2), "C", ".", False))
    # Variable-length strings (data.txt).
    cases.append(("strings/vlen_utf8", "O", "none", (4, 3), (3, 2), "C", ".", False))
    cases.append(("strings/vlen_utf8_zstd", "O", "zstd", (5,), (2,), "C", ".", True))

    for n, (path, dt, cname, shape, chunks, order, sep, partial) in enumerate(cases):
        filters = None
        if cname.startswith("filters:"):
            _, _, filters, comp = next(f for f in FILTERS if f[0] == cname[len("filters:"):])
        else:
            comp = COMPRESSORS[cname]
        structured = isinstance(dt, list)
        kwargs = dict(shape=shape, chunks=chunks, dtype=np.dtype(dt) if structured else dt, compressor=comp, order=order,
                      filters=filters, fill_value=fill_for(dt) if partial and dt != "O" else None,
                      dimension_separator=sep)
        if dt == "O":
            kwargs["object_codec"] = numcodecs.VLenUTF8()
            kwargs["fill_value"] = ""
        z = zarr.open_array(store=store, path=path, mode="w", **kwargs)
        if dt == "O":
            a = np.array(["", "a\\b", "new\nline", "cr\rx", "ünï", "😀", "tab\t", "x" * 40, "", "z", "q", "r"][: int(np.prod(shape))], dtype=object).reshape(shape)
        elif structured:
            a = struct_values(np.dtype(dt), shape, n)
        elif cname.startswith("filters:"):
            a = tame_values(dt, shape, n)
        else:
            a = values(dt, shape, n)
        if a.size:
            if partial and len(shape) >= 1:
                k = max(1, shape[0] // 2)
                z[:k] = a[:k]
            elif len(shape) == 0:
                if not partial:
                    z[...] = a
            else:
                z[...] = a
        back = zarr.open_array(store=store, path=path, mode="r")[...]
        ref = os.path.join(ref_dir, "%d.bin" % n)
        with open(ref, "wb") as f:
            f.write(reference(np.asarray(back)))
        if structured:
            # The type data.npy and user.zarr.dtype carry: the little-endian
            # field list, as NumPy writes it in a .npy header.
            dt = repr(np.lib.format.dtype_to_descr(np.dtype(dt).newbyteorder("<")))
        print(json.dumps({"path": path, "ref": ref, "compressor": cname, "dtype": dt, "shape": list(shape),
                          "order": order, "separator": sep, "partial": partial}))


if __name__ == "__main__":
    main()
