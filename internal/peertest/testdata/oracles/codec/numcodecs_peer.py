import json, struct, sys, numcodecs, numpy as np

def from_vlen(b):
    n, = struct.unpack_from("<I", b, 0)
    pos, out = 4, []
    for _ in range(n):
        l, = struct.unpack_from("<I", b, pos)
        out.append(b[pos + 4:pos + 4 + l].decode("utf-8"))
        pos += 4 + l
    return np.array(out, dtype=object)

def to_bytes(a):
    if isinstance(a, np.ndarray) and a.dtype == object:
        parts = [struct.pack("<I", a.size)]
        for v in a.reshape(-1, order="A"):
            v = v.encode("utf-8")
            parts += [struct.pack("<I", len(v)), v]
        return b"".join(parts)
    if isinstance(a, np.ndarray):
        return np.ascontiguousarray(a).tobytes()
    return bytes(a)

for c in json.load(open(sys.argv[1])):
    codec = numcodecs.get_codec(json.loads(c["config"]))
    raw = open(c["raw"], "rb").read()
    if c["dtype"] == "|O":
        raw = from_vlen(raw)
    elif c["dtype"]:
        raw = np.frombuffer(raw, dtype=c["dtype"]).copy()
    open(c["theirs"], "wb").write(to_bytes(codec.encode(raw)))
    open(c["decoded"], "wb").write(to_bytes(codec.decode(open(c["ours"], "rb").read())))
