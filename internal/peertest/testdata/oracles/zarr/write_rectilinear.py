# write_rectilinear.py writes arrays with the rectilinear chunk grid of
# zarr-extensions (chunk-grids/rectilinear, July 2026) with NumPy and the
# standard library, since neither zarr-python 2.13 nor zarrita here
# implements the grid:
#
# - "spec": the README's own example, "shape": [6, 6, 6, 6, 6],
# "chunk_shapes": [4, [1, 2, 3], [[4, 2]], [[1, 3], 3], [4, 4, 4]]
# ("integer. expands to [4, 4]", "explicit list", "run-length
# encoded. expands to [4, 4]", "run-length encoded and explicit list.
# expands to [1, 1, 1, 3]", "explicit list with overflow chunks"),
# uint16, bytes + gzip, two chunks missing (the fill value 7);
# - "sharded": [6, 10] float32 with chunk_shapes [[[2, 3]], [4, 6]] and
# sharding_indexed inside (inner chunks [2, 2], index at the end);
# - "diagram": the README's diagram, edge lengths [[16, 10], [24, 14]]
# on a [26, 38] int8 array.
#
# Each chunk holds its region of the array, padded to the chunk's full
# edge lengths (the last chunks overhang the array) with the fill value,
# in C order. The whole arrays are written to NAME.bin for comparison.
import gzip, json, os, struct, sys, itertools, numpy as np
root, ref = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(17)
def put(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, "wb").write(data)
put(root + "/zarr.json", b'{"zarr_format": 3, "node_type": "group", "attributes": {}}')
def expand(spec, length):
    if isinstance(spec, int):
        spec = [spec] * (-(-length // spec))
    out = []
    for x in spec:
        out += [x[0]] * x[1] if isinstance(x, list) else [x]
    return out
def write(name, dtype, shape, chunk_shapes, fill, codecs, encode, missing=()):
    a = rng.integers(-100, 1000, size=shape).astype(dtype)
    put(root + "/" + name + "/zarr.json", json.dumps({"zarr_format": 3, "node_type": "array", "shape": shape,
        "data_type": np.dtype(dtype).name, "chunk_grid": {"name": "rectilinear", "configuration": {"kind": "inline",
        "chunk_shapes": chunk_shapes}}, "chunk_key_encoding": {"name": "default"}, "fill_value": fill,
        "codecs": codecs, "attributes": {}}).encode())
    edges = [expand(s, n) for s, n in zip(chunk_shapes, shape)]
    starts = [np.concatenate([[0], np.cumsum(e)]) for e in edges]
    for idx in itertools.product(*[range(len(e)) for e in edges]):
        if any(starts[d][i] >= shape[d] for d, i in enumerate(idx)):
            continue  # an overflow chunk wholly past the array
        region = tuple(slice(starts[d][i], min(starts[d][i + 1], shape[d])) for d, i in enumerate(idx))
        if idx in missing:
            a[region] = fill
            continue
        chunk = np.full([edges[d][i] for d, i in enumerate(idx)], fill, dtype=dtype)
        chunk[tuple(slice(0, r.stop - r.start) for r in region)] = a[region]
        put(root + "/" + name + "/c/" + "/".join(map(str, idx)), encode(chunk))
    open(ref + "/" + name + ".bin", "wb").write(a.astype(np.dtype(dtype).newbyteorder("<")).tobytes())
write("spec", "<u2", [6, 6, 6, 6, 6], [4, [1, 2, 3], [[4, 2]], [[1, 3], 3], [4, 4, 4]], 7,
      [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 1}}],
      lambda c: gzip.compress(c.tobytes()), missing={(0, 1, 0, 2, 0), (1, 2, 1, 3, 1)})
def shard(chunk):
    inner = [2, 2]
    n = [chunk.shape[0] // 2, chunk.shape[1] // 2]
    body, index = b"", []
    for i, j in itertools.product(range(n[0]), range(n[1])):
        data = chunk[2 * i:2 * i + 2, 2 * j:2 * j + 2].tobytes()
        index.append((len(body), len(data)))
        body += data
    return body + b"".join(struct.pack("<QQ", o, l) for o, l in index)
write("sharded", "<f4", [6, 10], [[[2, 3]], [4, 6]], 0,
      [{"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 2], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}], "index_location": "end"}}], shard)
write("diagram", "|i1", [26, 38], [[16, 10], [24, 14]], 0, [{"name": "bytes"}], lambda c: c.tobytes())
