package zarr

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
	"github.com/zarrfs/zarrfs/zarr/meta"
)

// mlValuesNumPy computes, with NumPy, the value of every code of each
// registered ML float and small integer type from its README in
// zarr-extensions/data-types (July 2026):
//   - bfloat16: "a IEEE 754 binary32 floating-point number truncated at
//     16-bits": the code shifted into the top half of a float32;
//   - float8_e4m3 etc.: "1 sign bit, E exponent bits, with bias of B, M
//     mantissa bits", "Subnormal numbers when biased exponent is 0",
//     "IEEE 754-compliant, with NaN and +/-inf" or "no infinity, NaN
//     represented by 0b1000'0000" (fnuz) or "no infinity, no NaN" (fn);
//     float8_e8m0fnu: "No sign bit", "8 exponent bits, with bias of 127",
//     "NaN represented by 0b1111'1111";
//   - int4 "0bIIIIXXXX where the upper IIII bits are ignored", a signed
//     integer in [-8, 7]; int2, uint2, uint4 alike.
//
// ml_dtypes (the Python implementation the READMEs name) is not packaged
// for Debian, so NumPy's arithmetic on the READMEs' parameters is the
// oracle. It prints {name: [value or "nan", …]} for all codes.
const mlValuesNumPy = `
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
`

// TestPeerMLTypeValues: the element decoder of every ML type (what
// preview.png widens with) gives NumPy's value for every code.
func TestPeerMLTypeValues(t *testing.T) {
	peertest.NeedPython(t)
	var want map[string][]any
	if err := json.Unmarshal(peertest.RunPython(t, mlValuesNumPy), &want); err != nil {
		t.Fatal(err)
	}
	if len(want) != 16 {
		t.Fatalf("NumPy computed %d types, want 16", len(want))
	}
	for name, vals := range want {
		dec, ok := meta.MLElement(name)
		if !ok {
			t.Errorf("%s: no decoder", name)
			continue
		}
		bad := 0
		for code, w := range vals {
			b := []byte{byte(code), byte(code >> 8)}
			got := dec(b)
			var ok bool
			switch w := w.(type) {
			case nil:
				ok = math.IsNaN(got)
			case string:
				ok = math.IsInf(got, map[string]int{"inf": 1, "-inf": -1}[w])
			case float64:
				ok = got == w && (w != 0 || math.Signbit(got) == math.Signbit(w))
			}
			if !ok && bad < 3 {
				t.Errorf("%s: code %#x decodes to %v, NumPy %v", name, code, got, w)
				bad++
			}
		}
	}
}

// pythonWriteML writes a Megatron-Core-style v2 array of "dtype":
// "bfloat16" (zstd, by numcodecs) and v3 arrays of bfloat16 (gzip),
// float8_e4m3 and int4 and complex_float32, each chunk's bytes made by
// NumPy: bfloat16 as the top 16 bits of float32 values. It writes NAME.bin,
// the stored element bytes `data` must hold, fill values included.
const pythonWriteML = `
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
`

// TestPeerMLTypesRead reads the arrays of pythonWriteML: `data` holds the
// stored element bytes little-endian, missing chunks the fill value in
// the type's own bits; info names the types (ml_dtypes's names where
// NumPy has none).
func TestPeerMLTypesRead(t *testing.T) {
	peertest.NeedPython(t)
	root, refs := t.TempDir(), t.TempDir()
	peertest.RunPython(t, pythonWriteML, root, refs)
	v2, v3 := openDir(t, filepath.Join(root, "v2")), openDir(t, filepath.Join(root, "v3"))
	for _, c := range []struct{ path, name, numpy string }{
		{"megatron", "bfloat16", "bfloat16"},
		{"tsstruct", "struct", "[('w', 'bfloat16'), ('q', 'int4', (2,)), ('s', '<f4'), ('e', 'float8_e4m3fn')]"},
		{"mlstruct", "struct", "[('w', 'bfloat16'), ('e', 'float8_e5m2'), ('s', '<f4')]"},
		{"bf16", "bfloat16", "bfloat16"},
		{"f8", "float8_e4m3", "float8_e4m3"},
		{"i4", "int4", "int4"},
		{"cf32", "complex64", "<c8"},
	} {
		want, err := os.ReadFile(filepath.Join(refs, c.path+".bin"))
		must(t, err)
		h := v3
		if c.path == "megatron" || c.path == "tsstruct" {
			h = v2
		}
		n, got := readArray(t, h, c.path)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: data % x\nwant % x", c.path, got, want)
		}
		dt := n.Array.DataType()
		if dt.Name != c.name || dt.NumPy != c.numpy {
			t.Errorf("%s: data type %+v, want %s (%s)", c.path, dt, c.name, c.numpy)
		}
		// No data.npy for ML types, nor for records with an ML field.
		if dt.HasNumPyType() != strings.HasPrefix(c.numpy, "<") {
			t.Errorf("%s: HasNumPyType %v", c.path, dt.HasNumPyType())
		}
	}
	// The bfloat16 NaN fill is the README's 0x7fc0, widened to a NaN.
	_, got := readArray(t, v3, "bf16")
	dec, _ := meta.MLElement("bfloat16")
	if v := binary.LittleEndian.Uint16(got[len(got)-2:]); v != 0x7fc0 || !math.IsNaN(dec(got[len(got)-2:])) {
		t.Errorf("bf16 fill %#x", v)
	}
}
