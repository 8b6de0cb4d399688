# write_categorize.py writes v2 object arrays whose only filter is
# numcodecs' Categorize (zarr-python 2.13 refuses to write or read them,
# so the .zarray and the chunks are written here, each chunk encoded by
# numcodecs: Categorize, then Zlib where the array has a compressor). It
# prints, per array, its elements in C order as hex, from numcodecs'
# decoding of the stored chunks, after checking that zarr-python 2.13
# reads the same; for the hostile arrays it prints what
# zarrfs must answer instead ("unsupported" or "corrupt").
import sys, os, json, itertools, numpy as np, numcodecs, zarr
root = sys.argv[1]
open(os.path.join(root, ".zgroup"), "w").write(json.dumps({"zarr_format": 2}))
labels = ["foo", "ßàř", "日本語", "", "🙂 x", "back\\slash"]
words = labels + ["qux", "FOO", "日本"]

def zarray(shape, chunks, filters, compressor):
    return {"zarr_format": 2, "shape": list(shape), "chunks": list(chunks), "dtype": "|O",
            "fill_value": None, "order": "C", "filters": filters,
            "compressor": compressor.get_config() if compressor else None}

def write(name, shape, chunks, cat, comp, chunk_bytes=None, raw_filters=None):
    d = os.path.join(root, name)
    os.makedirs(d)
    filters = raw_filters or [cat.get_config()]
    open(os.path.join(d, ".zarray"), "w").write(json.dumps(zarray(shape, chunks, filters, comp)))
    n = int(np.prod(shape))
    full = np.empty(n, dtype=object)
    full[:] = [words[(k * 7 + len(name)) % len(words)] for k in range(n)]
    full = full.reshape(shape)
    out = np.empty(shape, dtype=object)
    grid = [range(-(-s // c)) for s, c in zip(shape, chunks)]
    for idx in itertools.product(*grid):
        sel = tuple(slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(idx, chunks, shape))
        block = np.full(chunks, "", dtype=object)  # v2 edge chunks are whole chunks
        block[tuple(slice(0, x.stop - x.start) for x in sel)] = full[sel]
        enc = bytes(cat.encode(block)) if chunk_bytes is None else chunk_bytes
        stored = comp.encode(enc) if comp else enc
        open(os.path.join(d, ".".join(map(str, idx)) or "0"), "wb").write(stored)
        try:
            dec = cat.decode(enc)
        except ValueError:
            return None  # not whole elements of astype: numcodecs fails too
        if dec.size != np.prod(chunks):
            return None  # numcodecs cannot make a chunk of it either
        dec = dec.reshape(chunks)
        out[sel] = dec[tuple(slice(0, x.stop - x.start) for x in sel)]
    want = [e.encode("utf-8").hex() for e in out.ravel()]
    # zarr-python 2.13 reads these arrays too (it cannot write them).
    if raw_filters is None:
        got = [e.encode("utf-8").hex() for e in zarr.open(d, mode="r")[...].ravel()]
        assert got == want, (name, got, want)
    return want

def cat(astype):
    return numcodecs.Categorize(labels=labels, dtype=object, astype=astype)

cases = [
    ("u1", (7,), (3,), cat("u1"), None),
    ("u1z", (5, 4), (2, 3), cat("u1"), numcodecs.Zlib(level=1)),
    ("u2", (9,), (4,), cat("<u2"), numcodecs.Zlib(level=9)),
    ("u2be", (3, 3), (2, 2), cat(">u2"), None),
    ("u4", (6,), (6,), cat("<u4"), numcodecs.Zlib(level=1)),
    ("u4be", (4, 2), (3, 1), cat(">u4"), numcodecs.Zlib(level=1)),
    ("i1", (5,), (5,), cat("i1"), None),
]
for name, shape, chunks, c, comp in cases:
    print(json.dumps({"name": name, "elems": write(name, shape, chunks, c, comp)}))
# Hostile: codes beyond the labels (numcodecs decodes them to "", so
# zarrfs does too), a chunk of the wrong size, configurations numcodecs
# would not decode to strings.
c = cat("u1")
print(json.dumps({"name": "beyond", "elems": write("beyond", (4,), (4,), c, numcodecs.Zlib(level=1), chunk_bytes=b"\x07\xff\x00\x02")}))
write("short", (4,), (4,), c, numcodecs.Zlib(level=1), chunk_bytes=b"\x01\x02\x03")
print(json.dumps({"name": "short", "want": "corrupt"}))
write("short2", (4,), (4,), cat("<u2"), None, chunk_bytes=b"\x01\x00\x02\x00\x03\x00\x04")
print(json.dumps({"name": "short2", "want": "corrupt"}))
for name, f in [
    ("f4", {"id": "categorize", "labels": labels, "dtype": "|O", "astype": "<f4"}),
    ("astypeO", {"id": "categorize", "labels": labels, "dtype": "|O", "astype": "|O"}),
    ("numlabels", {"id": "categorize", "labels": [1, 2], "dtype": "|O", "astype": "|u1"}),
    ("udtype", {"id": "categorize", "labels": labels, "dtype": "<U4", "astype": "|u1"}),
]:
    write(name, (4,), (4,), c, None, raw_filters=[f])
    print(json.dumps({"name": name, "want": "unsupported"}))
