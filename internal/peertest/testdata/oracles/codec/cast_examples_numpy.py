# cast_examples_numpy.py computes, with NumPy, the examples of
# zarr-extensions codecs/scale_offset and codecs/cast_value (July 2026):
# "Decoding: out = (in / scale) + offset" "using the arithmetic semantics
# of the input array's data type", and cast_value's scalar_map, rounding
# and out_of_range rules. zarr-python 3.2, which writes these codecs, is
# not packaged here; NumPy computes the expected values. For each case it
# prints the codecs, the array's type and fill value, the stored bytes and
# the decoded bytes (or, for "encode" cases, the other way round).
import json, numpy as np
rng = np.random.default_rng(5)
out = []
def case(name, dtype, fill, codecs, stored, decoded, direction="decode"):
    out.append({"name": name, "dtype": dtype, "fill": fill, "codecs": codecs, "direction": direction,
                "stored": stored.tobytes().hex(), "decoded": decoded.tobytes().hex()})
# "Float32 with scale and offset".
x = rng.standard_normal(7).astype("<f4")
case("float32 offset 5 scale 0.1", "float32", 0, [{"name": "scale_offset", "configuration": {"offset": 5, "scale": 0.1}}, "bytes"],
     x, (x / np.float32(0.1) + np.float32(5)).astype("<f4"))
# "Uint16 range reduction".
u = rng.integers(0, 256, 9).astype("<u1")
case("uint16 offset 1000 to uint8", "uint16", 1000, [{"name": "scale_offset", "configuration": {"offset": 1000}},
     {"name": "cast_value", "configuration": {"data_type": "uint8"}}, "bytes"], u, u.astype("<u2") + np.uint16(1000))
# "Float64 to uint8 with NaN preservation".
u = np.concatenate([[0], rng.integers(0, 256, 8)]).astype("<u1")
cfg = {"data_type": "uint8", "rounding": "nearest-even", "scalar_map": {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}}
case("float64 to uint8 with NaN", "float64", "NaN", [{"name": "scale_offset", "configuration": {"offset": -10, "scale": 0.1}},
     {"name": "cast_value", "configuration": cfg}, "bytes"], u, np.where(u == 0, np.nan, u.astype("<f8") / 0.1 + -10))
# "NumPy compatibility" (encoding): towards-zero, wrap, NaN and infinities to 0.
f = np.array([300.7, -1.5, np.nan, np.inf, -np.inf, 255.9, -257.2, 0.0], dtype="<f8")
t = np.trunc(np.where(np.isfinite(f), f, 0))
case("float64 to uint8 numpy", "float64", 0, [{"name": "cast_value", "configuration": {"data_type": "uint8", "rounding": "towards-zero",
     "out_of_range": "wrap", "scalar_map": {"encode": [["NaN", 0], ["+Infinity", 0], ["-Infinity", 0]]}}}, "bytes"],
     (t.astype(np.int64) % 256).astype("<u1"), f, direction="encode")
# int16 from int8 with clamp and a scale (decode: in / scale + offset in int16).
s = (rng.integers(-20, 20, 6) * 3).astype("|i1")
case("int16 scale 3 from int8", "int16", 0, [{"name": "scale_offset", "configuration": {"offset": -7, "scale": 3}},
     {"name": "cast_value", "configuration": {"data_type": "int8", "out_of_range": "clamp"}}, "bytes"], s, (s.astype("<i2") // 3 - 7).astype("<i2"))
print(json.dumps(out))
