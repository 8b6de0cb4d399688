# write_ml.py writes a Megatron-Core-style v2 array of "dtype":
# "bfloat16" (zstd, by numcodecs) and v3 arrays of bfloat16 (gzip),
# float8_e4m3 and int4 and complex_float32, each chunk's bytes made by
# NumPy: bfloat16 as the top 16 bits of float32 values. It writes NAME.bin,
# the stored element bytes `data` must hold, fill values included.
import gzip, json, os, sys, numpy as np, numcodecs
root, ref = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(11)
def put(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, "wb").write(data)
bf = (rng.standard_normal(10).astype("<f4").view("<u4") >> 16).astype("<u2")
put(root + "/v2/.zgroup", b'{"zarr_format": 2}')
put(root + "/v3/zarr.json", b'{"zarr_format": 3, "node_type": "group", "attributes": {}}')
put(root + "/v2/megatron/.zarray", json.dumps({"zarr_format": 2, "shape": [14], "chunks": [5], "dtype": "bfloat16",
    "fill_value": None, "order": "C", "compressor": {"id": "zstd", "level": 3}, "filters": None}).encode())
for i in range(2):
    put(root + "/v2/megatron/%d" % i, numcodecs.Zstd(level=3).encode(bf[5 * i:5 * i + 5].tobytes()))
open(ref + "/megatron.bin", "wb").write(bf.tobytes() + bytes(8))
def v3(name, dtype, shape, chunks, fill, codecs):
    put(root + "/v3/" + name + "/zarr.json", json.dumps({"zarr_format": 3, "node_type": "array", "shape": shape,
        "data_type": dtype, "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": fill, "codecs": codecs, "attributes": {}}).encode())
v3("bf16", "bfloat16", [2, 6], [2, 4], "NaN", [{"name": "bytes", "configuration": {"endian": "big"}}, {"name": "gzip", "configuration": {"level": 1}}])
put(root + "/v3/bf16/c/0/0", gzip.compress(bf[:8].reshape(2, 4).byteswap().tobytes()))
full = np.full((2, 6), 0x7fc0, dtype="<u2")
full[:, :4] = bf[:8].reshape(2, 4)
open(ref + "/bf16.bin", "wb").write(full.tobytes())
f8 = rng.integers(0, 256, 6, dtype=np.uint8)
v3("f8", "float8_e4m3", [9], [6], -1.5, [{"name": "bytes"}])
put(root + "/v3/f8/c/0", f8.tobytes())
# -1.5 in float8_e4m3: sign 1, exponent 7 (bias 7), mantissa 0b100.
open(ref + "/f8.bin", "wb").write(f8.tobytes() + bytes([0x80 | 7 << 3 | 4]) * 3)
i4 = rng.integers(0, 256, 4, dtype=np.uint8)
v3("i4", "int4", [6], [4], -3, [{"name": "bytes"}])
put(root + "/v3/i4/c/0", i4.tobytes())
open(ref + "/i4.bin", "wb").write(i4.tobytes() + bytes([(-3) & 0xf]) * 2)
cf = (rng.standard_normal(3) + 1j * rng.standard_normal(3)).astype("<c8")
v3("cf32", "complex_float32", [3], [3], [1.0, -2.0], [{"name": "bytes", "configuration": {"endian": "little"}}])
put(root + "/v3/cf32/c/0", cf.tobytes())
open(ref + "/cf32.bin", "wb").write(cf.tobytes())
# ML types inside records, as TensorStore's zarr2 driver writes them
# (its dtype.cc parses "bfloat16", "int4" … as field types too): a v2
# structured dtype, base64 fill; and a v3 struct with per-field fills.
rec = np.dtype([("w", "<u2"), ("q", "|u1", (2,)), ("s", "<f4"), ("e", "|u1")])
r = np.zeros(3, dtype=rec)
r["w"], r["q"], r["s"], r["e"] = bf[:3], rng.integers(0, 16, (3, 2)), rng.standard_normal(3), rng.integers(0, 256, 3)
fill = np.zeros(1, dtype=rec)
fill["w"], fill["q"], fill["s"], fill["e"] = 0x7fc0, [1, (-1) & 0xf], 2.5, 0x7f
import base64
put(root + "/v2/tsstruct/.zarray", json.dumps({"zarr_format": 2, "shape": [5], "chunks": [3],
    "dtype": [["w", "bfloat16"], ["q", "int4", [2]], ["s", "<f4"], ["e", "float8_e4m3fn"]], "fill_value": base64.b64encode(fill.tobytes()).decode(),
    "order": "C", "compressor": None, "filters": None}).encode())
put(root + "/v2/tsstruct/0", r.tobytes())
open(ref + "/tsstruct.bin", "wb").write(r.tobytes() + fill.tobytes() * 2)
rec3 = np.dtype([("w", "<u2"), ("e", "|u1"), ("s", "<f4")])
r3 = np.zeros(2, dtype=rec3)
r3["w"], r3["e"], r3["s"] = bf[3:5], rng.integers(0, 256, 2), rng.standard_normal(2)
f3 = np.zeros(1, dtype=rec3)
# -2.0 in float8_e5m2: sign 1, exponent 16 (bias 15), mantissa 0.
f3["w"], f3["e"], f3["s"] = 0x7fc0, 0x80 | 16 << 2, 1.5
v3("mlstruct", {"name": "struct", "configuration": {"fields": [{"name": "w", "data_type": "bfloat16"},
    {"name": "e", "data_type": "float8_e5m2"}, {"name": "s", "data_type": "float32"}]}}, [3], [2],
    {"w": "NaN", "e": -2.0, "s": 1.5}, [{"name": "bytes", "configuration": {"endian": "little"}}])
put(root + "/v3/mlstruct/c/0", r3.tobytes())
open(ref + "/mlstruct.bin", "wb").write(r3.tobytes() + f3.tobytes())
