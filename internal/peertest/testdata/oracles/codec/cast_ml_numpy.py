# cast_ml_numpy.py computes with NumPy what scale_offset and cast_value give
# on float16 and the ML types (zarr-extensions codecs/scale_offset: "The
# encoding and decoding transformations MUST be performed using the
# arithmetic semantics of the input array's data type"; codecs/
# cast_value: "rounding", "out_of_range", "If both input and output data
# types support IEEE 754 semantics, NaN values MUST be propagated").
#
# ml_dtypes is not packaged for Debian, so each type's values come from
# its README's bit layout (as zarr/mltype_test.go computes them; float16
# is NumPy's own), and rounding is done by brute force over every code:
# the nearest code below and above, chosen by the rounding rule, ties to
# the even code, a value past the largest finite one (the next power of
# two beyond it, an even code) out of range. NumPy's own float16
# arithmetic checks the float16 case independently of that search.
#
# It prints cases: the codec's configuration, the array's type, the
# direction, the input elements and the wanted output (hex, little-
# endian; "error" where the extension makes it an error).
import json, numpy as np
rng = np.random.default_rng(37)
FMT = [("float16", 16, 5, 10, 15, "ieee"), ("bfloat16", 16, 8, 7, 127, "ieee"),
       ("float8_e3m4", 8, 3, 4, 3, "ieee"), ("float8_e4m3", 8, 4, 3, 7, "ieee"),
       ("float8_e4m3b11fnuz", 8, 4, 3, 11, "fnuz"), ("float8_e4m3fnuz", 8, 4, 3, 8, "fnuz"),
       ("float8_e5m2", 8, 5, 2, 15, "ieee"), ("float8_e5m2fnuz", 8, 5, 2, 16, "fnuz"),
       ("float8_e4m3fn", 8, 4, 3, 7, "fn-nan"),
       ("float8_e8m0fnu", 8, 8, 0, 127, "e8m0"),
       ("float6_e2m3fn", 6, 2, 3, 1, "fn"), ("float6_e3m2fn", 6, 3, 2, 3, "fn"), ("float4_e2m1fn", 4, 2, 1, 1, "fn")]

def values(name, bits, e, m, bias, kind):
    c = np.arange(1 << bits, dtype=np.int64)
    if name == "float16":
        return c, c.astype(np.uint16).view(np.float16).astype(np.float64)
    if kind == "e8m0":
        return c, np.where(c == 255, np.nan, 2.0 ** (c.astype(np.float64) - bias))
    sign = np.where((c >> (e + m)) & 1 == 1, -1.0, 1.0)
    ex = (c >> m) & ((1 << e) - 1)
    man = (c & ((1 << m) - 1)).astype(np.float64)
    val = np.where(ex == 0, man * 2.0 ** (1 - bias - m), (1 + man / 2.0 ** m) * 2.0 ** (ex.astype(np.float64) - bias)) * sign
    if kind == "ieee":
        top = ex == (1 << e) - 1
        val = np.where(top & (man == 0), sign * np.inf, np.where(top, np.nan, val))
    if kind == "fnuz":
        val = np.where(c == 0x80, np.nan, val)
    if kind == "fn-nan":                                              # S.1111.111 is NaN
        val = np.where(c & 0x7f == 0x7f, np.nan, val)
    return c, val

def nan_code(e, m, kind):
    if kind in ("fnuz", "e8m0", "fn-nan"):
        return {"fnuz": 0x80, "e8m0": 0xff, "fn-nan": 0x7f}[kind]
    return ((1 << e) - 1) << m | 1 << (m - 1)

class Format:
    def __init__(self, name, bits, e, m, bias, kind):
        self.name, self.kind, self.size = name, kind, (bits + 7) // 8
        self.nan = nan_code(e, m, kind)
        codes, vals = values(name, bits, e, m, bias, kind)
        self.val = vals
        fin = np.isfinite(vals) & ~((vals == 0) & np.signbit(vals))   # one zero: +0
        v, c = vals[fin], codes[fin]
        top = v.max()
        # The next value past the largest finite one, had the format one
        # more code: out of range (float8_e4m3fn's is its NaN, 480).
        ulp = top - v[v < top].max()
        beyond = 2 * top if kind == "e8m0" else top + ulp
        self.ulp = ulp
        v = np.concatenate([[-beyond], v, [beyond]]) if kind != "e8m0" else np.concatenate([v, [beyond]])
        c = np.concatenate([[-2], c, [-2]]) if kind != "e8m0" else np.concatenate([c, [-2]])  # -2 even: "out"
        order = np.argsort(v, kind="stable")
        self.v, self.c = v[order], c[order]
        self.inf = {1: None, -1: None}
        if kind == "ieee":
            self.inf = {1: int(codes[vals == np.inf][0]), -1: int(codes[vals == -np.inf][0])}
        self.max = {1: int(codes[vals == top][0]), -1: int(codes[vals == -top][0]) if kind != "e8m0" else int(codes[vals == vals[np.isfinite(vals)].min()][0])}
        self.neg_zero = [int(x) for x in codes[(vals == 0) & np.signbit(vals)]]

    def round(self, x, mode):
        """The code of x by rounding mode, "out" past the range, or "error"."""
        if np.isnan(x):
            return self.nan if self.kind != "fn" else "error"
        if np.isinf(x):
            return self.inf[int(np.sign(x))] if self.kind == "ieee" else "error"
        if x == 0 and np.signbit(x) and self.neg_zero:
            return self.neg_zero[0]
        if self.kind == "e8m0" and x <= 0:
            return "out"
        i = np.searchsorted(self.v, x)
        if i == len(self.v):
            return "out"
        if self.v[i] == x:
            return self.code(i, x)
        if i == 0:
            return "out"
        lo, hi = i - 1, i
        if mode == "towards-zero":
            k = lo if x > 0 else hi
        elif mode == "towards-positive":
            k = hi
        elif mode == "towards-negative":
            k = lo
        else:
            dl, dh = x - self.v[lo], self.v[hi] - x
            if dl != dh:
                k = lo if dl < dh else hi
            elif mode == "nearest-away":
                k = hi if x > 0 else lo
            else:
                k = lo if self.c[lo] % 2 == 0 else hi
        return self.code(k, x)

    def code(self, k, x):
        c = int(self.c[k])
        if c == -2:
            return "out"
        if self.v[k] == 0 and np.signbit(x) and self.neg_zero:
            return self.neg_zero[0]           # a value rounded to zero keeps its sign
        return c

    def clamp(self, x):
        s = 1 if x > 0 else -1
        if self.kind == "e8m0":
            s = 1 if x >= 1 else -1      # below its range: its least value
        return self.inf[s] if self.kind == "ieee" else self.max[s]

out = []
def case(name, dtype, codecs, direction, inp, want):
    out.append({"name": name, "dtype": dtype, "codecs": codecs, "direction": direction, "in": inp, "want": want})

def hexcodes(codes, size):
    if "error" in codes or "out" in codes:
        return "error"
    return b"".join(int(c).to_bytes(size, "little") for c in codes).hex()

MODES = ["nearest-even", "towards-zero", "towards-positive", "towards-negative", "nearest-away"]
for spec in FMT:
    f = Format(*spec)
    name = f.name
    fin = f.v[1:-1] if f.kind != "e8m0" else f.v[:-1]
    top = fin.max()
    # cast_value encode, float64 array to the type: random values over the
    # whole range and past it, values between codes, the codes themselves,
    # zeros, NaN and infinities.
    xs = list(rng.uniform(-1.3 * top, 1.3 * top, 40)) + list(rng.choice(fin, 12))
    xs += list(rng.choice(fin, 20) * rng.uniform(0.9, 1.1, 20)) + [0.0, -0.0, float(fin[fin > 0].min()) / 3]
    xs += [s * (top + k * f.ulp / 4) for k in range(1, 7) for s in (1, -1)]   # around the largest value
    if f.kind == "e8m0":
        xs = [abs(x) for x in xs if x != 0 and x > float(fin.min())]
        xs = [x for x in xs if not np.isclose(np.log2(x) % 1, np.log2(1.5))]   # no e8m0 ties
    for mode in MODES:
        for oor in ["", "clamp"]:
            cfg = {"data_type": name, "rounding": mode}
            if oor:
                cfg["out_of_range"] = oor
            codes = []
            for x in xs:
                c = f.round(x, mode)
                codes.append(f.clamp(x) if c == "out" and oor == "clamp" else c)
            case(f"{name} encode {mode} {oor}", "float64", [{"name": "cast_value", "configuration": cfg}], "encode",
                 np.array(xs, dtype="<f8").tobytes().hex(), hexcodes(codes, f.size))
            bad = [x for x in xs if f.round(x, mode) == "out" or f.round(x, mode) == "error"]
            if not oor and bad:
                # Each in-range value alone encodes; the array with one
                # out-of-range value is an error.
                case(f"{name} encode {mode} out of range", "float64", [{"name": "cast_value", "configuration": cfg}], "encode",
                     np.array(bad[:1], dtype="<f8").tobytes().hex(), "error")
    for x, want in [(np.nan, f.round(np.nan, "")), (np.inf, f.round(np.inf, "")), (-np.inf, f.round(-np.inf, ""))]:
        case(f"{name} encode {x}", "float64", [{"name": "cast_value", "configuration": {"data_type": name, "out_of_range": "clamp"}}], "encode",
             np.array([x], dtype="<f8").tobytes().hex(), hexcodes([want], f.size))
    # cast_value decode: every code to float64, exactly (NaN as NaN).
    codes = np.arange(len(f.val))
    case(f"{name} decode all codes", "float64", [{"name": "cast_value", "configuration": {"data_type": name}}], "decode",
         hexcodes(codes, f.size), f.val.astype("<f8").tobytes().hex())
    # scale_offset decode in the type itself: x / scale + offset, each
    # step rounded to nearest-even.
    # (e8m0 has no zero, so no offset: the additive identity, as absent.)
    sc, of = 2.0, 1.0
    cfgs = {"scale": sc, "offset": of}
    if f.kind == "e8m0":
        sc, of, cfgs = 4.0, 0.0, {"scale": 4.0}
    stored = [int(c) for c in rng.choice(np.arange(len(f.val)), 60)]
    want = []
    for c in stored:
        qc = f.round(f.val[c] / sc, "nearest-even")
        if qc == "out" and f.kind == "ieee":
            qc = f.clamp(f.val[c] / sc)
        q = f.val[qc] if isinstance(qc, int) else None
        r = f.round(q + of, "nearest-even") if q is not None else "error"
        if r == "out":
            r = f.clamp(q + of) if f.kind == "ieee" else "error"
        want.append(r)
    stored = [c for c, w in zip(stored, want) if w != "error"]
    want = [w for w in want if w != "error"]
    case(f"{name} scale_offset decode", name, [{"name": "scale_offset", "configuration": cfgs}], "decode",
         hexcodes(stored, f.size), hexcodes(want, f.size))
    if name == "float16":
        # NumPy's own float16 arithmetic agrees.
        x = np.array([f.val[c] for c in stored], dtype=np.float16)
        y = (x / np.float16(sc) + np.float16(of)).astype("<f2")
        case("float16 scale_offset decode, NumPy arithmetic", name, [{"name": "scale_offset", "configuration": cfgs}], "decode",
             x.tobytes().hex(), y.tobytes().hex())
# int4, int2, uint4, uint2: cast_value from float64 with wrap and clamp,
# and scale_offset in the type (in / scale must be exact).
for name, bits, signed in [("int2", 2, True), ("uint2", 2, False), ("int4", 4, True), ("uint4", 4, False)]:
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    xs = np.concatenate([rng.uniform(lo - 20, hi + 20, 30), np.arange(lo, hi + 1)])
    t = np.trunc(xs)
    wrap = (t.astype(np.int64) % (1 << bits))
    case(f"{name} encode wrap", "float64", [{"name": "cast_value", "configuration": {"data_type": name, "rounding": "towards-zero", "out_of_range": "wrap"}}],
         "encode", xs.astype("<f8").tobytes().hex(), wrap.astype("<u1").tobytes().hex())
    r = np.clip(np.round(xs), lo, hi).astype(np.int64) % (1 << bits)    # np.round: ties to even
    case(f"{name} encode clamp", "float64", [{"name": "cast_value", "configuration": {"data_type": name, "out_of_range": "clamp"}}],
         "encode", xs.astype("<f8").tobytes().hex(), r.astype("<u1").tobytes().hex())
    case(f"{name} encode out of range", "float64", [{"name": "cast_value", "configuration": {"data_type": name}}],
         "encode", np.array([hi + 1.0], dtype="<f8").tobytes().hex(), "error")
    v = np.arange(lo, hi + 1, dtype=np.int64)
    case(f"{name} decode all codes", "int16", [{"name": "cast_value", "configuration": {"data_type": name}}],
         "decode", (v % (1 << bits) | (0xf0 if bits == 4 else 0xfc)).astype("<u1").tobytes().hex(), v.astype("<i2").tobytes().hex())
    sc = 2 if bits == 4 else 1                # 2 is no int2
    ev = v[v % sc == 0]
    so = ev // sc + 1
    ok = (so >= lo) & (so <= hi)
    case(f"{name} scale_offset decode", name, [{"name": "scale_offset", "configuration": {"scale": sc, "offset": 1}}],
         "decode", (ev[ok] % (1 << bits)).astype("<u1").tobytes().hex(), (so[ok] % (1 << bits)).astype("<u1").tobytes().hex())
    case(f"{name} scale_offset overflow", name, [{"name": "scale_offset", "configuration": {"offset": 1}}],
         "decode", np.array([hi], dtype="<u1").tobytes().hex(), "error")
print(json.dumps(out))
