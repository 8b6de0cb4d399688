import json, struct, sys, numcodecs, numpy as np
def to_bytes(a):
    a = np.asarray(a)
    if a.dtype == object:
        parts = [struct.pack("<I", a.size)]
        for v in a.reshape(-1, order="A"):
            v = v.encode("utf-8")
            parts += [struct.pack("<I", len(v)), v]
        return b"".join(parts)
    return a.reshape(-1, order="A").tobytes(order="A")
a = sys.argv[1:]
for p, arr in zip(a[0::2], a[1::2]):
    codec = numcodecs.get_codec(json.load(open(p + ".config")))
    open(p + ".dec", "wb").write(to_bytes(codec.decode(open(p + ".enc", "rb").read())))
    open(p + ".arr", "wb").write(to_bytes(np.load(arr, allow_pickle=True)))
