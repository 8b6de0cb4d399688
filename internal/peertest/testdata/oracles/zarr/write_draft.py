# write_draft.py writes a v3 draft hierarchy with zarr-python 2.13's
# experimental v3 API: an explicit root group with attributes, explicit
# and implicit groups, arrays across data types (extension types
# included), compressors (gzip, blosc, none), chunk memory layouts, chunk
# separators and partly written arrays. For each array it writes
# NAME.bin (the array as little-endian C-order bytes, or for object arrays
# its elements as a JSON list) and prints one JSON line.
import os, sys, json, numpy as np
os.environ["ZARR_V3_EXPERIMENTAL_API"] = "1"
import zarr, numcodecs
root, refdir = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(7)
g = zarr.open_group(root, mode="w", zarr_version=3)
g.attrs["title"] = "draft"
g.create_group("explicit").attrs["k"] = 1
comps = [numcodecs.GZip(level=1), numcodecs.Blosc(cname="zstd", clevel=1, shuffle=2), None,
         numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1)]
cases = [("<f4", (5, 4), (2, 3), 1.5), (">i2", (7,), (3,), 0), ("<c8", (4, 3), (3, 2), complex("nan+1j")),
         (">c16", (3, 3), (2, 2), complex(2, -1)), ("<M8[ns]", (6,), (4,), 5), (">m8[s]", (2, 5), (1, 2), -3),
         ("|S5", (4,), (3,), b"ab"), ("<U3", (3, 2), (2, 2), "xy"), (">U2", (5,), (2,), ""), ("bool", (9,), (4,), True),
         ("<f2", (6,), (4,), float("-inf")), ("|u1", (3, 4, 5), (2, 3, 2), 9), ("<f8", (), (), float("nan")),
         ("<i8", (0, 3), (2, 2), 1), ("|i1", (10,), (10,), -1), ([("a", ">i2"), ("b", "<f8", (2,))], (5,), (2,), None)]
for i, (d, shape, chunks, fill) in enumerate(cases):
    name = ("explicit/" if i % 3 == 0 else "implicit/deep/" if i % 3 == 1 else "") + "a%02d" % i
    dt = np.dtype(d)
    z = g.create_dataset(name, shape=shape, chunks=chunks, dtype=dt, compressor=comps[i % len(comps)],
                         order="CF"[(i // 2) % 2], fill_value=fill, dimension_separator="/." [i % 2])
    n = int(np.prod(shape))
    a = np.frombuffer(rng.integers(0, 256, n * dt.itemsize, dtype=np.uint8).tobytes(), dtype=dt).reshape(shape)
    if dt.kind == "U":
        a = np.array(["".join(chr(0x41 + (k + j) % 50) for j in range(k % (dt.itemsize // 4 + 1))) for k in range(n)], dtype=dt).reshape(shape)
    if dt.kind == "b":
        a = a.view("u1") % 2 == 1
    if dt.kind in "fc":
        a = rng.standard_normal(shape).astype(dt)
    # (Structured arrays are written whole: zarr-python 2.13 reads missing
    # chunks of a structured array without a fill value as np.empty.)
    if len(shape) > 0 and shape[0] > 1 and i % 2 and dt.fields is None:
        z[: shape[0] // 2] = a[: shape[0] // 2]
    else:
        z[...] = a
    b = z[...]
    ref = np.ascontiguousarray(np.asarray(b).astype(b.dtype.newbyteorder("<"))).tobytes()
    open(f"{refdir}/{name.replace('/', '_')}.bin", "wb").write(ref)
    print(json.dumps({"name": name}))
z = zarr.create(shape=(5,), chunks=(2,), dtype=object, object_codec=numcodecs.VLenUTF8(), store=g.store,
                path="strings", zarr_version=3)
z[:3] = ["a", "", "日本\n"]
open(f"{refdir}/strings.json", "w").write(json.dumps([str(x) if x != 0 else "" for x in z[...]]))
