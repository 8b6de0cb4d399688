# ml_values_numpy.py computes, with NumPy, the value of every code of each
# registered ML float and small integer type from its README in
# zarr-extensions/data-types (July 2026):
# - bfloat16: "a IEEE 754 binary32 floating-point number truncated at
# 16-bits": the code shifted into the top half of a float32;
# - float8_e4m3 etc.: "1 sign bit, E exponent bits, with bias of B, M
# mantissa bits", "Subnormal numbers when biased exponent is 0",
# "IEEE 754-compliant, with NaN and +/-inf" or "no infinity, NaN
# represented by 0b1000'0000" (fnuz) or "no infinity, no NaN" (fn);
# float8_e8m0fnu: "No sign bit", "8 exponent bits, with bias of 127",
# "NaN represented by 0b1111'1111";
# - int4 "0bIIIIXXXX where the upper IIII bits are ignored", a signed
# integer in [-8, 7]; int2, uint2, uint4 alike.
#
# ml_dtypes (the Python implementation the READMEs name) is not packaged
# for Debian, so NumPy's arithmetic on the READMEs' parameters is the
# oracle. It prints {name: [value or "nan", …]} for all codes.
import json, numpy as np
out = {}
c16 = np.arange(1 << 16, dtype=np.uint32)
out["bfloat16"] = (c16 << 16).view(np.float32).astype(np.float64)
c = np.arange(256, dtype=np.int64)
for name, bits, e, m, bias, kind in [
        ("float8_e3m4", 8, 3, 4, 3, "ieee"), ("float8_e4m3", 8, 4, 3, 7, "ieee"),
        ("float8_e4m3b11fnuz", 8, 4, 3, 11, "fnuz"), ("float8_e4m3fnuz", 8, 4, 3, 8, "fnuz"),
        ("float8_e5m2", 8, 5, 2, 15, "ieee"), ("float8_e5m2fnuz", 8, 5, 2, 16, "fnuz"),
        ("float6_e2m3fn", 6, 2, 3, 1, "fn"), ("float6_e3m2fn", 6, 3, 2, 3, "fn"),
        ("float4_e2m1fn", 4, 2, 1, 1, "fn"), ("float8_e4m3fn", 8, 4, 3, 7, "fn-nan")]:
    v = c & ((1 << bits) - 1)
    sign = np.where((v >> (e + m)) & 1 == 1, -1.0, 1.0)
    ex = (v >> m) & ((1 << e) - 1)
    man = (v & ((1 << m) - 1)).astype(np.float64)
    val = np.where(ex == 0, man * 2.0 ** (1 - bias - m), (1 + man / 2.0 ** m) * 2.0 ** (ex.astype(np.float64) - bias)) * sign
    if kind == "ieee":
        top = ex == (1 << e) - 1
        val = np.where(top & (man == 0), sign * np.inf, np.where(top, np.nan, val))
    if kind == "fnuz":
        val = np.where(v == 0x80, np.nan, val)
    if kind == "fn-nan":   # TensorStore's float8_e4m3fn: S.1111.111 is NaN, no infinity
        val = np.where(v & 0x7f == 0x7f, np.nan, val)
    out[name] = val
out["float8_e8m0fnu"] = np.where(c == 255, np.nan, 2.0 ** (c.astype(np.float64) - 127))
for name, bits, signed in [("int2", 2, True), ("uint2", 2, False), ("int4", 4, True), ("uint4", 4, False)]:
    v = c & ((1 << bits) - 1)
    out[name] = (np.where(v >= 1 << (bits - 1), v - (1 << bits), v) if signed else v).astype(np.float64)
print(json.dumps({k: [None if np.isnan(x) else ("inf" if x == np.inf else "-inf" if x == -np.inf else float(x)) for x in v] for k, v in out.items()}))
