# write_vlen.py writes v2 object arrays of strings and byte strings and
# prints, per array, its elements in C order as hex.
import sys, json, numpy as np, zarr, numcodecs
root = sys.argv[1]
g = zarr.open_group(zarr.DirectoryStore(root), mode="w")
words = ["", "a", "héllo", "日本語", "line\nbreak", "back\\slash", "🙂" * 5, "x" * 300]
cases = [
    ("s1", (8,), (3,), numcodecs.VLenUTF8(), None, "", False),
    ("sF", (5, 3), (2, 2), numcodecs.VLenUTF8(), numcodecs.GZip(level=1), "", True),
    ("bF", (2, 3, 4), (2, 2, 3), numcodecs.VLenBytes(), None, None, False),
    ("s2", (5, 4), (2, 3), numcodecs.VLenUTF8(), numcodecs.Zlib(level=1), "", True),
    ("s3", (3, 2, 2), (2, 2, 1), numcodecs.VLenUTF8(), numcodecs.Zstd(level=1), "fill", True),
    ("s0", (), (), numcodecs.VLenUTF8(), None, "", False),
    ("b1", (7,), (4,), numcodecs.VLenBytes(), numcodecs.GZip(level=1), None, False),
    ("b2", (3, 3), (2, 2), numcodecs.VLenBytes(), None, None, False),
]
i = 0
for name, shape, chunks, oc, comp, fill, partial in cases:
    z = g.create_dataset(name, shape=shape, chunks=chunks, dtype=object, object_codec=oc, compressor=comp, fill_value=fill,
                         order="F" if name.endswith("F") else "C")
    n = int(np.prod(shape))
    vals = []
    for k in range(n):
        w = words[(i + k) % len(words)]
        vals.append(w if isinstance(oc, numcodecs.VLenUTF8) else w.encode("utf-8") + bytes([k % 256, 0xff]))
    i += 3
    a = np.empty(n, dtype=object)
    a[:] = vals
    a = a.reshape(shape)
    if partial:
        z[: shape[0] // 2] = a[: shape[0] // 2]
    else:
        z[...] = a
    out = [(e.encode("utf-8") if isinstance(e, str) else bytes(e)).hex() for e in np.asarray(z[...]).ravel()]
    print(json.dumps({"name": name, "elems": out}))
