# write_v2.py writes v2 arrays with zarr-python across data types,
# compressors, orders, separators, shapes and partly written arrays. For
# each it writes NAME.bin, the array as little-endian C-order bytes, to
# the reference directory and prints one JSON line describing it.
import sys, json, itertools, numpy as np, zarr, numcodecs
root, refdir = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(42)
g = zarr.open_group(zarr.DirectoryStore(root), mode="w")
dtypes = ["<f4", ">f4", "<f8", ">f8", "<i2", ">i2", "<i8", ">i8", "|u1", "|i1", "<u4", ">u8",
          "|b1", "<c8", ">c16", "<f2", ">f2", "|S7", "<U7", ">U3", "|V8", "<M8[ns]", ">m8[s]", "<i4", ">u2"]
shapes = [((), ()), ((0,), (3,)), ((1,), (1,)), ((10,), (3,)), ((7, 5), (3, 2)), ((4, 1, 6), (3, 1, 4)),
          ((2, 3, 4, 5), (1, 2, 3, 2)), ((5, 0, 3), (2, 2, 2)), ((13,), (20,)), ((6, 4), (6, 4)), ((9, 4, 3), (2, 4, 3))]
compressors = [None, numcodecs.GZip(level=1), numcodecs.Zlib(level=1), numcodecs.Zstd(level=1)]
fills = {"f": [float("nan"), -np.inf, 1.5, 0.0], "i": [7, -3, 0], "u": [7, 0], "b": [True, False],
         "c": [1 + 2j, 0j], "S": [b"ab", b""], "U": ["xy", ""], "V": [b"\x01\x02\x03\x04\x05\x06\x07\x08"],
         "M": [5], "m": [-2]}

def data(dt, shape):
    n = int(np.prod(shape))
    if dt.kind in "fc":
        a = rng.standard_normal(n * (2 if dt.kind == "c" else 1)) * 100
        if dt.kind == "c":
            a = a[:n] + 1j * a[n:]
        return a.astype(dt).reshape(shape)
    if dt.kind == "b":
        return (rng.integers(0, 2, n) == 1).reshape(shape)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, n, dtype=dt.newbyteorder("=")).astype(dt).reshape(shape)
    if dt.kind in "SV":
        return np.frombuffer(rng.integers(0, 256, n * dt.itemsize, dtype=np.uint8).tobytes(), dtype=dt).reshape(shape)
    if dt.kind == "U":
        chars = [chr(c) for c in range(0x20, 0x7f)] + ["é", "日", "🙂"]
        words = ["".join(rng.choice(chars, rng.integers(0, dt.itemsize // 4 + 1))) for _ in range(n)]
        return np.array(words, dtype=dt).reshape(shape)
    return rng.integers(-10**12, 10**12, n).astype("i8").view(dt).reshape(shape)

i = 0
for d, (shape, chunks) in itertools.product(dtypes, shapes):
    i += 1
    # Spread the other axes over the combinations instead of multiplying them.
    comp = compressors[i % len(compressors)]
    order = "CF"[(i // 4) % 2]
    sep = "./"[(i // 2) % 2]
    partial = i % 3 == 0
    dt = np.dtype(d)
    kf = fills[dt.kind]
    fill = kf[i % len(kf)] if partial or i % 5 else None
    name = "a%03d" % i
    z = g.create_dataset(name, shape=shape, chunks=chunks, dtype=dt, compressor=comp, order=order,
                         fill_value=fill, dimension_separator=sep)
    a = data(dt, shape)
    if partial and len(shape) > 0 and shape[0] > 1:
        z[: shape[0] // 2] = a[: shape[0] // 2]
    else:
        z[...] = a
    b = z[...]
    ref = np.ascontiguousarray(np.asarray(b).astype(b.dtype.newbyteorder("<"))).tobytes()
    open(f"{refdir}/{name}.bin", "wb").write(ref)
    print(json.dumps({"name": name, "dtype": d, "shape": list(shape), "compressor": comp.codec_id if comp else None,
                      "order": order, "sep": sep, "partial": partial}))
