# packbits_numpy.py computes the v3 packbits encoding of test arrays with
# NumPy, from the extension's text (zarr-extensions codecs/packbits):
# "element i corresponds to bits [i * k, (i+1) * k) within the sequence",
# "encoded byte i corresponds to bits [i * 8, (i+1) * 8)", bits taken from
# the least significant ("np.packbits(bitorder='little')"), padding
# encoded in a first or last byte; and the decoded values: "the b encoded
# bits are first shifted to first_bit", then "sign-extended (for signed
# integer data types), or zero-extended". No implementation of the codec
# is installed here (zarr-python 2.13 and numcodecs 0.11 predate it), so
# NumPy's bit operations are the oracle. One JSON line per case.
import json, numpy as np
rng = np.random.default_rng(3)
def case(name, dt, data, cfg, ncomp=1):
    data = np.asarray(data, dtype=dt)
    nbits = 8 * data.dtype.itemsize // ncomp if data.dtype != np.bool_ else 1
    first = cfg.get("first_bit") or 0
    last = cfg.get("last_bit")
    last = nbits - 1 if last is None else last
    b = last - first + 1
    ut = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[max(nbits // 8, 1)]
    comps = data.view(ut) if data.dtype != np.bool_ else data.astype(np.uint8)
    comps = comps.reshape(-1).astype(np.uint64)
    field = (comps >> np.uint64(first)) & np.uint64((1 << b) - 1)
    bits = ((field[:, None] >> np.arange(b, dtype=np.uint64)) & np.uint64(1)).astype(np.uint8).reshape(-1)
    pad = (8 - len(bits) % 8) % 8
    enc = np.packbits(bits, bitorder="little").tobytes()
    pe = cfg.get("padding_encoding", "none")
    if pe == "first_byte": enc = bytes([pad]) + enc
    if pe == "last_byte": enc = enc + bytes([pad])
    dec = field << np.uint64(first)
    if dt.startswith("<i") or dt == "|i1":
        sign = (field >> np.uint64(b - 1)) & np.uint64(1)
        dec = np.where(sign == 1, dec | (np.uint64((1 << 64) - 1) << np.uint64(first + b)), dec)
    dec = (dec & np.uint64((1 << nbits) - 1)).astype(ut) if nbits >= 8 else dec.astype(np.uint8)
    print(json.dumps({"name": name, "dtype": dt, "n": int(data.size), "config": cfg,
                      "encoded": enc.hex(), "decoded": dec.tobytes().hex()}))
case("bool first_byte", "|b1", rng.integers(0, 2, 13).astype(bool), {"padding_encoding": "first_byte"})
case("bool last_byte", "|b1", rng.integers(0, 2, 16).astype(bool), {"padding_encoding": "last_byte"})
case("int16 bits 2-9", "<i2", rng.integers(-30000, 30000, 11), {"first_bit": 2, "last_bit": 9})
case("int32 bits 0-4", "<i4", rng.integers(-16, 16, 9), {"last_bit": 4, "padding_encoding": "first_byte"})
case("uint8 bits 0-4", "|u1", rng.integers(0, 256, 7), {"last_bit": 4, "padding_encoding": "last_byte"})
case("uint64 bits 3-62", "<u8", rng.integers(0, 2**63, 5, dtype=np.uint64), {"first_bit": 3, "last_bit": 62})
case("float32 top 16 bits", "<f4", rng.standard_normal(6), {"first_bit": 16})
case("complex64 bits 20-31", "<c8", rng.standard_normal(4) + 1j * rng.standard_normal(4), {"first_bit": 20}, ncomp=2)
case("float64 whole", "<f8", rng.standard_normal(5), {})
