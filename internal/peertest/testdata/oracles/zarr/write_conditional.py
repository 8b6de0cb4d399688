# write_conditional.py writes a v3 array whose codecs are the spec's
# Example 1 (codecs/conditional/README.md: bytes, then conditional over
# shuffle and zstd), its chunks encoded with numcodecs, each under its own
# mask: both codecs, none, zstd only, shuffle only, and one chunk absent.
# The header is one byte, bit i for codecs[i]. A second array "bad" holds
# a chunk with a reserved bit set. It writes want.bin: NumPy's bytes of
# the whole array, the absent chunk's elements the fill value.
import sys, os, json, numpy as np, numcodecs
root = sys.argv[1]
codecs = [{"name": "bytes", "configuration": {"endian": "little"}},
          {"name": "conditional", "configuration": {"codecs": [
              {"name": "shuffle", "configuration": {"element_size": 4}},
              {"name": "zstd", "configuration": {"level": 5}}]}}]
def meta(shape, chunks):
    return {"zarr_format": 3, "node_type": "array", "shape": shape, "data_type": "int32",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": 7, "codecs": codecs}
json.dump({"zarr_format": 3, "node_type": "group"}, open(f"{root}/zarr.json", "w"))
inner = [numcodecs.Shuffle(elementsize=4), numcodecs.Zstd(level=5)]
def chunk(a, mask):
    b = np.ascontiguousarray(a, dtype="<i4").tobytes()
    for i, c in enumerate(inner):
        if mask >> i & 1:
            b = bytes(c.encode(b))
    return bytes([mask]) + b
def put(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, "wb").write(data)
os.makedirs(f"{root}/a")
json.dump(meta([6, 10], [4, 4]), open(f"{root}/a/zarr.json", "w"))
rng = np.random.default_rng(37)
full = np.full((8, 12), 7, dtype="<i4")
full[:6, :10] = np.arange(60, dtype="<i4").reshape(6, 10) * 1000 + rng.integers(0, 3, (6, 10))
masks = {(0, 0): 3, (0, 1): 0, (0, 2): 2, (1, 0): 1, (1, 2): 3}
for (i, j), m in masks.items():
    put(f"{root}/a/c/{i}/{j}", chunk(full[4*i:4*i+4, 4*j:4*j+4], m))
full[4:8, 4:8] = 7  # chunk (1, 1) is absent: the fill value
open(f"{root}/want.bin", "wb").write(full[:6, :10].tobytes())
os.makedirs(f"{root}/bad")
json.dump(meta([4], [4]), open(f"{root}/bad/zarr.json", "w"))
put(f"{root}/bad/c/0", bytes([0x04]) + np.arange(4, dtype="<i4").tobytes())
