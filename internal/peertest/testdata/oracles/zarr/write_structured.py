# write_structured.py writes v2 arrays of structured dtypes with
# zarr-python (mixed byte orders, nested records, sub-arrays, string,
# datetime and complex fields, fill values, order F, compressors). For
# each it writes NAME.bin (the content with every field little-endian) and
# prints {"name", "descr"}: the Python literal of that little-endian dtype's
# descr.
import sys, json, base64, numpy as np, zarr, numcodecs
root, refdir = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(3)
g = zarr.open_group(zarr.DirectoryStore(root), mode="w")
dts = [
    [("a", "<i4"), ("b", "<f8")],
    [("a", ">i4"), ("b", "<f8", (2,)), ("c", "|u1")],
    [("p", [("x", ">f4"), ("y", "<f4")]), ("v", ">c16"), ("w", "|b1")],
    [("s", "|S3"), ("u", ">U2"), ("t", ">M8[ms]"), ("m", "<m8[s]", (2, 2))],
    [("n", [("q", ">i2", (3,)), ("r", [("z", ">u8")])], (2,)), ("e", "<f2")],
]
comps = [None, numcodecs.Zlib(level=1), numcodecs.Blosc(cname="lz4", clevel=1, shuffle=1), None, numcodecs.GZip(1)]
for i, d in enumerate(dts):
    dt = np.dtype(d)
    shape, chunks = [((7,), (3,)), ((4, 5), (3, 2)), ((6,), (4,)), ((3, 3), (2, 2)), ((5,), (2,))][i]
    z = g.create_dataset("s%d" % i, shape=shape, chunks=chunks, dtype=dt, fill_value=None,
                         order="CF"[i % 2], compressor=comps[i])
    if i % 2:
        # zarr-python 2.13 cannot take a structured fill value from newer
        # NumPy; write its base64 form (the packed record as stored) itself.
        meta = json.load(open(f"{root}/s{i}/.zarray"))
        meta["fill_value"] = base64.standard_b64encode(bytes(range(1, dt.itemsize + 1))).decode()
        json.dump(meta, open(f"{root}/s{i}/.zarray", "w"))
        z = zarr.open_array(f"{root}/s{i}", mode="r+")
    n = int(np.prod(shape))
    a = np.frombuffer(rng.integers(0, 256, n * dt.itemsize, dtype=np.uint8).tobytes(), dtype=dt).reshape(shape)
    if i % 2:
        z[: shape[0] // 2] = a[: shape[0] // 2]
    else:
        z[...] = a
    b = z[...]
    le = b.dtype.newbyteorder("<")
    open(f"{refdir}/s{i}.bin", "wb").write(np.ascontiguousarray(b.astype(le)).tobytes())
    print(json.dumps({"name": "s%d" % i, "descr": str(le.descr)}))
