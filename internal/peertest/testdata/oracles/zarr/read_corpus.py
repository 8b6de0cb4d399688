# read_corpus.py reads every v2 array below the corpus with zarr-python
# and prints one JSON line each: its reference bytes (written to
# refdir/N.bin) or, for object arrays, its elements as hex (the JSON text
# of each for json2 and msgpack2 arrays), or the error.
import sys, os, json, itertools, numpy as np, zarr
corpus, refdir = sys.argv[1], sys.argv[2]
n = 0
for d, dirs, files in sorted(os.walk(corpus)):
    dirs.sort()
    if ".zarray" not in files:
        continue
    n += 1
    rec = {"path": d}
    try:
        z = zarr.open_array(d, mode="r")
        a = np.array(z[...])
        if z.fill_value is None and a.dtype.kind != "O" and a.ndim > 0:
            # Missing chunks of an array without a fill value are undefined
            # in zarr-python (np.empty); zarrfs reads them as zeros.
            grid = [range(-(-s // c)) for s, c in zip(z.shape, z.chunks)]
            for idx in itertools.product(*grid):
                if z._chunk_key(idx) not in z.store:
                    a[tuple(slice(i * c, (i + 1) * c) for i, c in zip(idx, z.chunks))] = np.zeros((), dtype=a.dtype)
        oc = z.filters[0].codec_id if a.dtype.kind == "O" and z.filters else ""
        if oc in ("json2", "msgpack2"):
            # Object arrays: each element as JSON, as numcodecs writes it.
            rec["elems"] = [json.dumps(e, ensure_ascii=oc == "json2", separators=(",", ":"), sort_keys=oc == "json2").encode().hex() for e in a.ravel()]
        elif a.dtype.kind == "O":
            # Missing elements are the fill value (None or 0): zarrfs reads
            # them as empty.
            rec["elems"] = [(e.encode("utf-8") if isinstance(e, str) else bytes(e)).hex() if isinstance(e, (str, bytes)) else "" for e in a.ravel()]
        else:
            ref = np.ascontiguousarray(a.astype(a.dtype.newbyteorder("<"))).tobytes()
            rec["ref"] = "%s/%d.bin" % (refdir, n)
            open(rec["ref"], "wb").write(ref)
    except Exception as e:
        rec["error"] = repr(e)
    print(json.dumps(rec))
